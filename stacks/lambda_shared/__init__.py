"""What the stacks' Lambda handlers share: the CloudFormation reply (cfn_response.py, linked into
each handler's directory), the asset that packages a handler directory with it, the function,
its log group and its logging grant, and the checkov checks that do not fit a custom
resource's handler, each skipped with its reason."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import RemovalPolicy, SymlinkFollowMode, aws_iam as iam, aws_lambda as lambda_, aws_logs as logs
from constructs import Construct

from stacks.lint_suppressions import skip_checkov

# checkov's Lambda checks against a handler that CloudFormation invokes once per deployment.
HANDLER_CHECKOV_SKIPS = {
    "CKV_AWS_115": "A custom resource's handler: CloudFormation invokes it once per create, update or delete of "
                   "its resource, so reserved concurrency would only cap what never runs concurrently.",
    "CKV_AWS_116": "A custom resource's handler reports every outcome to CloudFormation through the event's "
                   "pre-signed response URL; an event that still fails makes the stack operation fail at its "
                   "service timeout, and a dead-letter queue would keep an event whose URL has expired.",
    "CKV_AWS_117": "Outside a VPC on purpose: the handler reaches public AWS APIs (ECR, S3) and, for the weights, "
                   "the Hugging Face Hub; a VPC would need a NAT gateway for nothing it protects.",
}
LOG_GROUP_REASON = (
    "CloudWatch Logs encrypts every log group at rest; these hold a deployment handler's progress lines (files "
    "copied, media types seen), no weights and no credentials, so a customer-managed key would add a key "
    "policy for the logs service of every region and protect nothing more."
)


def handler_log_group(scope: Construct) -> logs.LogGroup:
    """A handler's own log group (construct id "Logs"), kept three months."""
    log_group = logs.LogGroup(scope, "Logs", retention=logs.RetentionDays.THREE_MONTHS,
                              removal_policy=RemovalPolicy.DESTROY)
    skip_checkov(log_group, "CKV_AWS_158", LOG_GROUP_REASON)
    return log_group


def handler_code(directory: Path) -> lambda_.Code:
    """The handler directory as a Lambda asset, its links (cfn_response.py) packaged as files."""
    return lambda_.Code.from_asset(str(directory), exclude=["__pycache__", "*.pyc"],
                                   follow_symlinks=SymlinkFollowMode.ALWAYS)


def write_own_logs(log_group: logs.ILogGroup) -> iam.PolicyStatement:
    """A handler's one logging grant: its own log group, nothing else."""
    return iam.PolicyStatement(sid="WriteOwnLogs", actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                               resources=[log_group.log_group_arn])


def handler_function(scope: Construct, directory: Path, *, role: iam.IRole, log_group: logs.ILogGroup,
                     **options) -> lambda_.Function:
    """The custom resource's Lambda (construct id "Handler"): Python on ARM, `index.handler` of
    `directory`, its own role and log group; `options` size it (memory, timeout, ...)."""
    function = lambda_.Function(scope, "Handler", runtime=lambda_.Runtime.PYTHON_3_14,
                                architecture=lambda_.Architecture.ARM_64, handler="index.handler",
                                code=handler_code(directory), role=role, log_group=log_group, **options)
    for check, reason in HANDLER_CHECKOV_SKIPS.items():
        skip_checkov(function, check, reason)
    return function
