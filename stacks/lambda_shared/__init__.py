"""What the stacks' Lambda handlers share: the CloudFormation reply (cfn_response.py, linked into
each handler's directory) and the asset that packages a handler directory with it."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import SymlinkFollowMode, aws_lambda as lambda_


def handler_code(directory: Path) -> lambda_.Code:
    """The handler directory as a Lambda asset, its links (cfn_response.py) packaged as files."""
    return lambda_.Code.from_asset(str(directory), exclude=["__pycache__", "*.pyc"],
                                   follow_symlinks=SymlinkFollowMode.ALWAYS)
