"""The managed policy that callers attach to invoke this endpoint, and nothing else."""

from aws_cdk import Stack, aws_iam as iam
from constructs import Construct

from stacks.lint_suppressions import suppress_cfn_lint

# The three invocation APIs and the IAM actions that authorize them:
#  - InvokeEndpoint: sagemaker:InvokeEndpoint.
#  - InvokeEndpointWithResponseStream: the SageMaker Runtime API reference says "your IAM
#    permissions must allow the sagemaker:InvokeEndpoint action", while the Service
#    Authorization Reference ("Actions, resources, and condition keys for Amazon SageMaker
#    AI", as bundled in cfn-lint's data/AdditionalSpecs/Policies.json, cfn-lint 1.58.0)
#    also lists sagemaker:InvokeEndpointWithResponseStream on the endpoint resource: both.
#  - InvokeEndpointWithBidirectionalStream (the HTTP/2 API on port 8443): the reference lists no
#    action of that name, but AWS's own bidirectional samples grant it, and IAM accepts an
#    action it does not list. Granted: without it every bidirectional client may be denied.
INVOKE_ACTIONS = [
    "sagemaker:InvokeEndpoint",
    "sagemaker:InvokeEndpointWithResponseStream",
    "sagemaker:InvokeEndpointWithBidirectionalStream",
]
BIDIRECTIONAL_ACTION_REASON = (
    "sagemaker:InvokeEndpointWithBidirectionalStream is not in the Service Authorization Reference "
    "that W3037 checks against, yet AWS grants it for its own bidirectional endpoints: "
    "aws-samples/sample-voice-agent, infrastructure/src/stacks/ecs-stack.ts, grants "
    "'sagemaker:InvokeEndpoint', 'sagemaker:InvokeEndpointWithResponseStream', "
    "'sagemaker:InvokeEndpointWithBidirectionalStream' on its STT/TTS endpoints ('SageMaker "
    "permissions for Deepgram STT/TTS BiDi streaming endpoints'); deepgram-devs/dg-sagemaker, "
    "skills/deepgram-sagemaker/references/iam.md, names it the least privilege of a calling "
    "application ('only sagemaker:InvokeEndpoint, sagemaker:InvokeEndpointWithBidirectionalStream "
    "and/or sagemaker:InvokeEndpointAsync on the endpoint ARN') and gives 'Streaming client hangs' "
    "as the symptom of its absence. IAM accepts the action either way."
)


def invoker_policy(scope: Construct, *, endpoint_name: str) -> iam.ManagedPolicy:
    endpoint_arn = Stack.of(scope).format_arn(
        service="sagemaker", resource="endpoint", resource_name=endpoint_name
    )
    policy = iam.ManagedPolicy(
        scope,
        "InvokerPolicy",
        description=f"Invoke the {endpoint_name} SageMaker endpoint (HTTP, streaming, bidirectional)",
        statements=[
            iam.PolicyStatement(sid="InvokeKokoroEndpoint", actions=INVOKE_ACTIONS, resources=[endpoint_arn])
        ],
    )
    suppress_cfn_lint(policy, "W3037", BIDIRECTIONAL_ACTION_REASON)
    return policy
