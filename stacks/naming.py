"""Names every stack derives the same way, so no stack needs another's outputs for them."""

from __future__ import annotations

from aws_cdk import Aws, aws_kms as kms, aws_s3 as s3
from constructs import Construct


def model_bucket_name(name_prefix: str) -> str:
    """`<prefix>-models-<account>-<region>`: unique per account and region, and known to
    the model-cache and endpoint stacks (and their IAM policies) without a reference."""
    return f"{name_prefix}-models-{Aws.ACCOUNT_ID}-{Aws.REGION}"


def import_model_bucket(scope: Construct, name_prefix: str, key: kms.IKey) -> s3.IBucket:
    return s3.Bucket.from_bucket_attributes(
        scope, "ModelBucket", bucket_name=model_bucket_name(name_prefix), encryption_key=key
    )
