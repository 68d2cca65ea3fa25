"""Model cache: the model's files under `s3://<bucket>/<model>/<revision>/` + SHA256SUMS.

`modelSource=hub` copies the pinned revision from the Hub; `local:PATH` uploads PATH as
a zip asset and unpacks it under `<model>/local-<content hash>/`, so each distinct
directory gets its own prefix and a re-deploy of the same content copies nothing.
"""

from __future__ import annotations

from aws_cdk import Stack, aws_kms as kms, aws_s3_assets as s3_assets
from constructs import Construct

from stacks.config import DeploymentConfig
from stacks.model_cache.model_copy import ModelCopy
from stacks.model_cache.pinned_files import hub_files, local_files, local_revision
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
            files = local_files(config.local_model_dir)
            revision = local_revision(files)
            source = {"archive": s3_assets.Asset(self, "LocalModel", path=str(config.local_model_dir))}
        else:
            files = hub_files(config.model_id, config.model_revision)
            revision = config.model_revision
            source = {"hub_endpoint": config.hub_endpoint}
        self.model_prefix = f"{config.model_id}/{revision}/"
        ModelCopy(
            self, "Model", bucket=bucket, key=key,
            model_id=config.model_id, revision=revision, files=files, **source,
        )
