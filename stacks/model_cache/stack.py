"""Model cache: the model's files under `s3://<bucket>/<model>/<revision>/` + SHA256SUMS."""

from __future__ import annotations

from aws_cdk import Stack, aws_kms as kms
from constructs import Construct

from stacks.config import DeploymentConfig
from stacks.model_cache.hub_copy import HubModelCopy
from stacks.model_cache.local_upload import LocalModelUpload
from stacks.model_cache.pinned_files import hub_files, local_revision, local_sums
from stacks.naming import import_model_bucket


class ModelCacheStack(Stack):
    """`model_prefix` is a plain string, not a stack output: the endpoint stack builds its
    S3 URI from it, so moving to another revision changes no cross-stack reference."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        config: DeploymentConfig,
        key: kms.IKey,
        **kwargs,
    ) -> None:
        super().__init__(scope, id, **kwargs)
        bucket = import_model_bucket(self, config.name_prefix, key)
        if config.is_local_source:
            sums = local_sums(config.local_model_dir)
            self.model_prefix = f"{config.model_id}/{local_revision(sums)}/"
            LocalModelUpload(
                self, "LocalModel", bucket=bucket, key=key,
                directory=config.local_model_dir, prefix=self.model_prefix, sums=sums,
            )
        else:
            self.model_prefix = f"{config.model_id}/{config.model_revision}/"
            HubModelCopy(
                self, "HubModel", bucket=bucket, key=key,
                model_id=config.model_id, revision=config.model_revision,
                hub_endpoint=config.hub_endpoint,
                files=hub_files(config.model_id, config.model_revision),
            )
