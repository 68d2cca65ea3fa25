"""What the stacks' Lambda handlers share: the CloudFormation reply (cfn_response.py, linked into
each handler's directory), the asset that packages a handler directory with it, the function
and its logging grant."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import SymlinkFollowMode, aws_iam as iam, aws_lambda as lambda_, aws_logs as logs
from constructs import Construct


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
    return lambda_.Function(scope, "Handler", runtime=lambda_.Runtime.PYTHON_3_14,
                            architecture=lambda_.Architecture.ARM_64, handler="index.handler",
                            code=handler_code(directory), role=role, log_group=log_group, **options)
