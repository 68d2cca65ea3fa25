"""The offline path (`-c modelSource=local:PATH`): upload a local model directory as is.

The directory becomes a CDK asset at synth; a BucketDeployment unpacks it under
`<model>/local-<content hash>/` together with its SHA256SUMS, so each distinct directory
gets its own prefix and a re-deploy of the same content copies nothing.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Size, aws_kms as kms, aws_s3 as s3, aws_s3_deployment as s3deploy
from constructs import Construct

from stacks.nag import acknowledge


class LocalModelUpload(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        bucket: s3.IBucket,
        key: kms.IKey,
        directory: Path,
        prefix: str,
        sums: str,
    ) -> None:
        super().__init__(scope, id)
        self.deployment = s3deploy.BucketDeployment(
            self,
            "Upload",
            sources=[s3deploy.Source.asset(str(directory)), s3deploy.Source.data("SHA256SUMS", sums)],
            destination_bucket=bucket,
            destination_key_prefix=prefix,
            server_side_encryption=s3deploy.ServerSideEncryption.AWS_KMS,
            server_side_encryption_aws_kms_key_id=key.key_id,
            # ~330 MB of weights: the zip and its unpacked copy both sit in /tmp.
            memory_limit=2048,
            ephemeral_storage_size=Size.gibibytes(2),
            retain_on_delete=True,
        )
        acknowledge(
            self,
            "IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]",
            "CDK's BucketDeployment handler only writes its own CloudWatch logs with this "
            "AWS-managed policy; it runs once per deploy of a local model directory.",
        )
