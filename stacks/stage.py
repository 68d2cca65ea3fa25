"""The product's three stacks as one CDK Stage: what `make deploy` and the pipeline deploy.

Foundation <- model cache <- endpoint, each dependency declared. The endpoint stack's
outputs (endpoint name, region, invoker policy) are the stage's interface: the pipeline's
validation step reads them, and so can anything that deploys this stage.
"""

from __future__ import annotations

from aws_cdk import CfnOutput, Environment, Stage
from constructs import Construct

from stacks.config import DeploymentConfig
from stacks.endpoint import EndpointStack
from stacks.foundation import FoundationStack
from stacks.model_cache import ModelCacheStack


class KokoroStage(Stage):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        config: DeploymentConfig,
        env: Environment | None = None,
        validator_account: str | None = None,
    ) -> None:
        super().__init__(scope, id, env=env)
        prefix = config.name_prefix
        self.foundation = FoundationStack(
            self, "Foundation", stack_name=f"{prefix}-foundation", config=config,
            validator_account=validator_account,
            description="Kokoro TTS: KMS key, model bucket, SageMaker execution role, invoker policy",
        )
        self.model_cache = ModelCacheStack(
            self, "ModelCache", stack_name=f"{prefix}-model-cache", config=config,
            key=self.foundation.key,
            description=f"Kokoro TTS: {config.model_id} weights cached in S3 with SHA-256 manifest",
        )
        self.endpoint = EndpointStack(
            self, "Endpoint", stack_name=f"{prefix}-endpoint", config=config,
            model_prefix=self.model_cache.model_prefix,
            execution_role=self.foundation.execution_role, invoker_policy=self.foundation.invoker_policy,
            description="Kokoro TTS: SageMaker real-time endpoint with bidirectional streaming",
        )
        self.model_cache.add_stack_dependency(self.foundation, "writes into the model bucket with its key")
        self.endpoint.add_stack_dependency(self.foundation, "uses the execution role, key and log group")
        self.endpoint.add_stack_dependency(self.model_cache, "SageMaker reads the weights when it creates the model")

    # Not `region`/`account`: Stage has those (its environment).
    @property
    def product_stacks(self):
        return (self.foundation, self.model_cache, self.endpoint)

    @property
    def endpoint_name_output(self) -> CfnOutput:
        return self.endpoint.endpoint_name_output

    @property
    def region_output(self) -> CfnOutput:
        return self.endpoint.region_output

    @property
    def invoker_policy_output(self) -> CfnOutput:
        return self.endpoint.invoker_policy_output
