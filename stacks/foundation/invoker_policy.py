"""The managed policy that callers attach to invoke this endpoint, and nothing else."""

from aws_cdk import Stack, aws_iam as iam
from constructs import Construct

# The three invocation APIs and the IAM actions that authorize them:
#  - InvokeEndpoint: sagemaker:InvokeEndpoint.
#  - InvokeEndpointWithResponseStream: the SageMaker Runtime API reference says "your IAM
#    permissions must allow the sagemaker:InvokeEndpoint action", while the Service
#    Authorization Reference ("Actions, resources, and condition keys for Amazon SageMaker
#    AI", as bundled in cfn-lint's data/AdditionalSpecs/Policies.json, cfn-lint 1.58.0)
#    also lists sagemaker:InvokeEndpointWithResponseStream on the endpoint resource: both.
#  - InvokeEndpointWithBidirectionalStream (the HTTP/2 API, signed as service "sagemaker"):
#    the reference lists no action of that name (cfn-lint W3037 rejects it), so it is
#    authorized by sagemaker:InvokeEndpoint, already granted.
INVOKE_ACTIONS = [
    "sagemaker:InvokeEndpoint",
    "sagemaker:InvokeEndpointWithResponseStream",
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
