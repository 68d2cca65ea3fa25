"""The delivery pipeline's settings from CDK context (opt-in: `-c pipeline=true`).

  pipeline          'true' synthesizes the pipeline stack instead of the product's stage
  connectionArn     the CodeConnections connection to the repository host
  repository        'owner/name' on that host
  branch            the branch whose commits run the pipeline
  manualApproval    'true' (default) holds each release for a person before prod
  pipelineAccount   where the pipeline itself lives (default: the staging account)
  pipelineRegion    (default: the staging region)
plus the staging and prod stages' keys (stacks/environments.py).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stacks.config import ConfigError
from stacks.environments import ACCOUNT, REGION, StageEnv, stage_env

_TRUE, _FALSE = {"true", "1", "yes"}, {"false", "0", "no", ""}
_FIELDS = {
    "connection_arn": ("connectionArn", "a CodeConnections ARN "
                       "(arn:aws:codeconnections:<region>:<account>:connection/<id>)"),
    "repository": ("repository", "'owner/name' of the repository"),
    "branch": ("branch", "a branch name"),
    "manual_approval": ("manualApproval", "true or false"),
    "pipeline_account": ("pipelineAccount", "a 12-digit AWS account id, or '' for the staging account"),
    "pipeline_region": ("pipelineRegion", "an AWS region, or '' for the staging region"),
}


def pipeline_enabled(get: Callable[[str], object]) -> bool:
    value = str(get("pipeline") or "").lower()
    if value not in _TRUE | _FALSE:
        raise ConfigError(f"Invalid CDK context: pipeline={value!r}: expected true or false")
    return value in _TRUE


class PipelineConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    connection_arn: str = Field(
        pattern=r"^arn:aws[a-z-]*:(codeconnections|codestar-connections):[a-z0-9-]+:\d{12}:connection/[0-9a-f-]{36}$")
    repository: str = Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    branch: str = Field(pattern=r"^[A-Za-z0-9._/-]+$")
    manual_approval: bool = True
    pipeline_account: str = Field(pattern=ACCOUNT)
    pipeline_region: str = Field(pattern=REGION)
    staging: StageEnv
    prod: StageEnv

    @model_validator(mode="after")
    def _distinct_names(self) -> PipelineConfig:
        same_place = (self.staging.account, self.staging.region) == (self.prod.account, self.prod.region)
        if same_place and self.staging.name_prefix == self.prod.name_prefix:
            raise ValueError("stagingNamePrefix and prodNamePrefix must differ when both stages "
                             f"share account and region (both {self.staging.name_prefix!r})")
        return self

    @classmethod
    def from_context(cls, get: Callable[[str], object]) -> PipelineConfig:
        staging, prod = stage_env(get, "staging"), stage_env(get, "prod")
        values = {field: get(key) for field, (key, _) in _FIELDS.items() if get(key) not in (None, "")}
        values.setdefault("pipeline_account", staging.account)
        values.setdefault("pipeline_region", staging.region)
        try:
            return cls(**values, staging=staging, prod=prod)
        except ValidationError as error:
            lines = ["Invalid CDK context for the pipeline (cdk.json or -c key=value):"]
            for item in error.errors():
                field = str(item["loc"][0]) if item["loc"] else ""
                if field not in _FIELDS:
                    lines.append(f"- {item['msg'].removeprefix('Value error, ')}")
                    continue
                key, accepts = _FIELDS[field]
                value = values.get(field)
                problem = "missing; set it to" if value is None else "expected"
                lines.append(f"- {key}={value!r}: {problem} {accepts}")
            raise ConfigError("\n".join(lines)) from None
