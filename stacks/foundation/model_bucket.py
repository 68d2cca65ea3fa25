"""The model bucket (KMS, versioned, SSL-only, private) and its access-log bucket."""

from aws_cdk import Duration, RemovalPolicy, aws_kms as kms, aws_s3 as s3
from constructs import Construct

from stacks.lint_suppressions import skip_checkov
from stacks.naming import model_bucket_name

ACCESS_LOGS_LOGGING_REASON = (
    "This bucket is the model bucket's access-log destination: logging its own access into itself would log "
    "each log delivery, and into a third bucket would only move the question there."
)
ACCESS_LOGS_VERSIONING_REASON = (
    "S3 log delivery writes each access-log object once under a new key and nothing overwrites it; objects "
    "expire after 365 days, and versions would keep deleted logs past that for no reader."
)

_PRIVATE = dict(
    block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
    object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    enforce_ssl=True,
    minimum_tls_version=1.2,
    # Retained: weights and their access history outlive any one deployment (rollback).
    removal_policy=RemovalPolicy.RETAIN,
)


class ModelBucket(Construct):
    """`bucket` holds `<model>/<revision>/...`; `log_bucket` receives its access logs."""

    def __init__(self, scope: Construct, id: str, *, key: kms.IKey, name_prefix: str) -> None:
        super().__init__(scope, id)
        self.log_bucket = s3.Bucket(
            self,
            "AccessLogs",
            # S3 server access logging only delivers to SSE-S3 buckets, not SSE-KMS.
            encryption=s3.BucketEncryption.S3_MANAGED,
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(365))],
            **_PRIVATE,
        )
        skip_checkov(self.log_bucket, "CKV_AWS_18", ACCESS_LOGS_LOGGING_REASON)
        skip_checkov(self.log_bucket, "CKV_AWS_21", ACCESS_LOGS_VERSIONING_REASON)
        self.bucket = s3.Bucket(
            self,
            "Models",
            bucket_name=model_bucket_name(name_prefix),
            encryption=s3.BucketEncryption.KMS,
            encryption_key=key,
            bucket_key_enabled=True,
            versioned=True,
            server_access_logs_bucket=self.log_bucket,
            server_access_logs_prefix="model-bucket/",
            lifecycle_rules=[
                s3.LifecycleRule(
                    # The cache handler uploads large files in parts; drop orphans.
                    abort_incomplete_multipart_upload_after=Duration.days(2),
                    noncurrent_version_expiration=Duration.days(90),
                )
            ],
            **_PRIVATE,
        )
