"""Names every stack derives the same way, so no stack needs another's outputs for them."""

from __future__ import annotations

from aws_cdk import Aws, DefaultStackSynthesizer, Fn, aws_kms as kms, aws_s3 as s3
from constructs import Construct

BOOTSTRAP_QUALIFIER_CONTEXT = "@aws-cdk/core:bootstrapQualifier"


def model_bucket_name(name_prefix: str) -> str:
    """`<prefix>-models-<account>-<region>`: unique per account and region, and known to
    the model-cache and endpoint stacks (and their IAM policies) without a reference."""
    return f"{name_prefix}-models-{Aws.ACCOUNT_ID}-{Aws.REGION}"


def import_model_bucket(scope: Construct, name_prefix: str, key: kms.IKey) -> s3.IBucket:
    return s3.Bucket.from_bucket_attributes(
        scope, "ModelBucket", bucket_name=model_bucket_name(name_prefix), encryption_key=key
    )


def rollback_alarm_names(endpoint_name: str) -> list[str]:
    """The alarms a blue/green update rolls back on, named here so the execution role (in
    the foundation stack) can be granted cloudwatch:DescribeAlarms on exactly these."""
    return [f"{endpoint_name}-server-errors", f"{endpoint_name}-model-errors"]


def image_repository_arn(scope: Construct) -> str:
    """The bootstrap ECR repository CDK publishes image assets to (DefaultStackSynthesizer),
    so the execution role can be granted the pull before the endpoint stack exists."""
    qualifier = (scope.node.try_get_context(BOOTSTRAP_QUALIFIER_CONTEXT)
                 or DefaultStackSynthesizer.DEFAULT_QUALIFIER)
    name = DefaultStackSynthesizer.DEFAULT_IMAGE_ASSETS_REPOSITORY_NAME.replace("${Qualifier}", qualifier)
    return Fn.sub(f"arn:${{AWS::Partition}}:ecr:${{AWS::Region}}:${{AWS::AccountId}}:repository/{name}")


def validator_role_name(name_prefix: str) -> str:
    """The role a delivery pipeline assumes to validate this stage's endpoint."""
    return f"{name_prefix}-validator"
