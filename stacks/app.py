"""Build the product's three stacks on a CDK app; shared by app.py and the tests."""

from __future__ import annotations

from aws_cdk import App, Stack, Validations
from cdk_nag import AwsSolutionsChecks

from stacks.config import DeploymentConfig
from stacks.endpoint import EndpointStack
from stacks.foundation import FoundationStack
from stacks.model_cache import ModelCacheStack


def build(app: App) -> tuple[Stack, Stack, Stack]:
    """Foundation <- model cache <- endpoint, each dependency declared, cdk-nag on all."""
    config = DeploymentConfig.from_context(app.node.try_get_context)
    prefix = config.name_prefix
    foundation = FoundationStack(
        app, "Foundation", stack_name=f"{prefix}-foundation", config=config,
        description="Kokoro TTS: KMS key, model bucket, SageMaker execution role, invoker policy",
    )
    cache = ModelCacheStack(
        app, "ModelCache", stack_name=f"{prefix}-model-cache", config=config,
        key=foundation.key,
        description=f"Kokoro TTS: {config.model_id} weights cached in S3 with SHA-256 manifest",
    )
    endpoint = EndpointStack(
        app, "Endpoint", stack_name=f"{prefix}-endpoint", config=config,
        model_prefix=cache.model_prefix,
        execution_role=foundation.execution_role, invoker_policy=foundation.invoker_policy,
        description="Kokoro TTS: SageMaker real-time endpoint with bidirectional streaming",
    )
    cache.add_stack_dependency(foundation, "writes into the model bucket with its key")
    endpoint.add_stack_dependency(foundation, "uses the execution role, key and log group")
    endpoint.add_stack_dependency(cache, "SageMaker reads the weights when it creates the model")
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return foundation, cache, endpoint
