"""Copy the model's files into the model bucket: a Lambda-backed custom resource.

One handler for both sources, so both get the same checks and the same SHA256SUMS:
the Hub (a pinned revision) or, offline, a local directory uploaded as a zip asset.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import CustomResource, Duration, Size, Stack
from aws_cdk import aws_iam as iam, aws_kms as kms
from aws_cdk import aws_s3 as s3, aws_s3_assets as s3_assets
from constructs import Construct

from stacks.lambda_shared import handler_function, handler_log_group, write_own_logs

from stacks.nag import acknowledge, wildcard_resource

HANDLER_DIR = Path(__file__).with_name("handler")


class ModelCopy(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        bucket: s3.IBucket,
        key: kms.IKey,
        model_id: str,
        revision: str,
        files: list[dict[str, str]],
        hub_endpoint: str | None = None,
        archive: s3_assets.Asset | None = None,
    ) -> None:
        super().__init__(scope, id)
        prefix = f"{model_id}/{revision}/"
        objects = bucket.arn_for_objects(f"{prefix}*")
        log_group = handler_log_group(self)
        statements = [
            write_own_logs(log_group),
            # The handler lists this revision's prefix to learn what is copied already
            # (and never HEADs a key the listing lacks, which would be a 403 under a
            # prefix-scoped ListBucket); it lists nothing else.
            iam.PolicyStatement(
                sid="ListThisRevision",
                actions=["s3:ListBucket"],
                resources=[bucket.bucket_arn],
                conditions={"StringLike": {"s3:prefix": [f"{prefix}*"]}},
            ),
            iam.PolicyStatement(
                sid="WriteThisRevision",
                actions=["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"],
                resources=[objects],
            ),
            # Multipart uploads to an SSE-KMS bucket need Decrypt as well.
            iam.PolicyStatement(
                sid="EncryptViaS3",
                actions=["kms:GenerateDataKey", "kms:Decrypt"],
                resources=[key.key_arn],
                conditions={"StringEquals": {"kms:ViaService": f"s3.{Stack.of(self).region}.amazonaws.com"}},
            ),
        ]
        if archive:
            statements.append(iam.PolicyStatement(
                sid="ReadModelArchive",
                actions=["s3:GetObject"],
                resources=[f"arn:{Stack.of(self).partition}:s3:::{archive.s3_bucket_name}/{archive.s3_object_key}"],
            ))
        role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"Copy {model_id}@{revision} into the model bucket",
            inline_policies={"CopyWeights": iam.PolicyDocument(statements=statements)},
        )
        function = handler_function(
            self,
            HANDLER_DIR,
            role=role,
            log_group=log_group,
            # 330 MB of weights; Lambda's network throughput grows with its memory size.
            memory_size=1024,
            # Room for the zipped local directory; the Hub path streams and needs none.
            ephemeral_storage_size=Size.gibibytes(2) if archive else None,
            timeout=Duration.minutes(15),
            description="Model cache: streams the model's files into S3 with SHA-256 checks",
        )
        source = (
            {"Archive": {"Bucket": archive.s3_bucket_name, "Key": archive.s3_object_key}}
            if archive
            else {"HubEndpoint": hub_endpoint}
        )
        self.resource = CustomResource(
            self,
            "Weights",
            service_token=function.function_arn,
            resource_type="Custom::ModelWeights",
            # Fail the stack soon after the Lambda's own 15 minutes, not after an hour.
            service_timeout=Duration.minutes(20),
            properties={"Bucket": bucket.bucket_name, "ModelId": model_id, "Revision": revision,
                        "Files": files, **source},
        )
        acknowledge(
            role,
            wildcard_resource(role, objects),
            "The copy writes every file of one revision (weights, voices, SHA256SUMS) "
            "under its own prefix; S3 can only name a prefix with a wildcard, and the "
            "grant stops at this revision's prefix.",
        )
