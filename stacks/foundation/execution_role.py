"""The SageMaker execution role: read the model prefix, decrypt it, write the endpoint's logs,
pull the image, read the rollback alarms.

Everything is granted here, in the foundation stack, so it is in force long before the
endpoint stack calls CreateModel: a policy attached moments before CreateModel is a known
cause of "role ... does not have BatchGetImage permission" (IAM is eventually consistent).
"""

from aws_cdk import ArnFormat, Stack, aws_iam as iam, aws_kms as kms, aws_logs as logs, aws_s3 as s3
from constructs import Construct

from stacks.nag import acknowledge, wildcard_resource

# Instance metrics (CPU, GPU, memory, disk) that SageMaker publishes for endpoints.
METRICS_NAMESPACE = "/aws/sagemaker/Endpoints"


def execution_role(
    scope: Construct,
    *,
    bucket: s3.IBucket,
    key: kms.IKey,
    model_prefix: str,
    log_group: logs.ILogGroup,
    image_repository_arn: str,
    rollback_alarm_names: list[str],
) -> iam.Role:
    stack = Stack.of(scope)
    objects = bucket.arn_for_objects(f"{model_prefix}/*")
    statements = [
        # ModelDataSource S3Prefix lists the prefix, then fetches each object.
        iam.PolicyStatement(
            sid="ListModelPrefix",
            actions=["s3:ListBucket"],
            resources=[bucket.bucket_arn],
            conditions={"StringLike": {"s3:prefix": [f"{model_prefix}/*"]}},
        ),
        iam.PolicyStatement(sid="ReadModelPrefix", actions=["s3:GetObject"], resources=[objects]),
        iam.PolicyStatement(
            sid="DecryptModelViaS3",
            actions=["kms:Decrypt"],
            resources=[key.key_arn],
            conditions={"StringEquals": {"kms:ViaService": f"s3.{stack.region}.amazonaws.com"}},
        ),
        # The group exists already (foundation creates it); CreateLogGroup is granted on
        # that one name because SageMaker's log agent may still call it.
        iam.PolicyStatement(
            sid="WriteEndpointLogs",
            actions=["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents",
                     "logs:DescribeLogStreams"],
            resources=[log_group.log_group_arn, _group_arn(stack, log_group)],
        ),
        iam.PolicyStatement(
            sid="EndpointMetrics",
            actions=["cloudwatch:PutMetricData"],
            resources=["*"],
            conditions={"StringEquals": {"cloudwatch:namespace": METRICS_NAMESPACE}},
        ),
        # CDK's bootstrap repository for image assets: the endpoint's image is pushed there.
        iam.PolicyStatement(
            sid="PullModelImage",
            actions=["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"],
            resources=[image_repository_arn],
        ),
        # Registry-wide by design: an ECR auth token is not tied to a repository.
        iam.PolicyStatement(sid="EcrLogin", actions=["ecr:GetAuthorizationToken"], resources=["*"]),
        # Deployment guardrails: SageMaker reads the auto-rollback alarms with the execution
        # role while a blue/green update bakes ("deployment guardrails configuration").
        iam.PolicyStatement(
            sid="ReadRollbackAlarms",
            actions=["cloudwatch:DescribeAlarms"],
            resources=[stack.format_arn(service="cloudwatch", resource="alarm", resource_name=name,
                                        arn_format=ArnFormat.COLON_RESOURCE_NAME)
                       for name in rollback_alarm_names],
        ),
    ]
    role = iam.Role(
        scope,
        "SageMakerExecutionRole",
        assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
        description="Kokoro TTS endpoint: read cached weights, write logs, pull its image",
        inline_policies={"ModelAccess": iam.PolicyDocument(statements=statements)},
    )
    acknowledge(
        role,
        wildcard_resource(role, objects),
        "The endpoint must read every file under the model's prefix (weights, voices, "
        "SHA256SUMS of each cached revision); S3 object ARNs can only name a prefix "
        "with a wildcard, and the grant stops at this model's prefix.",
    )
    acknowledge(
        role,
        "IAM5[Resource::*]",
        "Only cloudwatch:PutMetricData and ecr:GetAuthorizationToken have Resource '*': "
        "neither supports resource-level permissions; metrics are pinned to the "
        f"{METRICS_NAMESPACE} namespace by a condition, and the ECR token alone grants no "
        "image (pulls are limited to the bootstrap image repository).",
    )
    return role


def _group_arn(stack: Stack, log_group: logs.ILogGroup) -> str:
    """The log group's own ARN (GetAtt Arn ends in ':*', which names its streams)."""
    return stack.format_arn(
        service="logs", resource="log-group", resource_name=log_group.log_group_name,
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )

