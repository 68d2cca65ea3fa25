"""The managed policy that callers attach to invoke this endpoint, and nothing else."""

from aws_cdk import Stack, aws_iam as iam
from constructs import Construct

# InvokeEndpoint also authorizes InvokeEndpointWithResponseStream, which is no IAM
# action of its own (SageMaker Runtime API reference); the bidirectional stream is.
INVOKE_ACTIONS = [
    "sagemaker:InvokeEndpoint",
    "sagemaker:InvokeEndpointWithBidirectionalStream",
]


def invoker_policy(scope: Construct, *, endpoint_name: str) -> iam.ManagedPolicy:
    endpoint_arn = Stack.of(scope).format_arn(
        service="sagemaker", resource="endpoint", resource_name=endpoint_name
    )
    return iam.ManagedPolicy(
        scope,
        "InvokerPolicy",
        description=f"Invoke the {endpoint_name} SageMaker endpoint (HTTP, streaming, bidirectional)",
        statements=[
            iam.PolicyStatement(sid="InvokeKokoroEndpoint", actions=INVOKE_ACTIONS, resources=[endpoint_arn])
        ],
    )
