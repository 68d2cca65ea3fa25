"""Where each stage deploys: account, region and name prefix per stage, from CDK context.

Flat context keys (`-c stagingAccount=...` works as well as cdk.json):
  stage                 which stage `make deploy` targets: '' (the credentials' account and
                        region, the stack names of namePrefix), 'staging' or 'prod'
  <stage>Account        12-digit AWS account id
  <stage>Region         AWS region, e.g. us-east-1
  <stage>NamePrefix     name prefix of the stage's stacks and resources
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stacks.config import ConfigError

STAGES = ("staging", "prod")
StageName = Literal["staging", "prod"]
ACCOUNT = r"^\d{12}$"
REGION = r"^[a-z]{2}(-[a-z]+)+-\d$"
NAME_PREFIX = r"^[a-z][a-z0-9-]{1,22}[a-z0-9]$"
# field -> (context key suffix, what it accepts)
_FIELDS = {
    "account": ("Account", "a 12-digit AWS account id"),
    "region": ("Region", "an AWS region such as us-east-1"),
    "name_prefix": ("NamePrefix", "lowercase letters, digits and '-', 3-24 characters, starts with a letter"),
}


class StageEnv(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: StageName
    account: str = Field(pattern=ACCOUNT)
    region: str = Field(pattern=REGION)
    name_prefix: str = Field(pattern=NAME_PREFIX)

    @property
    def construct_id(self) -> str:
        return self.name.capitalize()


def stage_env(get: Callable[[str], object], name: str) -> StageEnv:
    """The stage's settings from context; a missing or invalid key names itself."""
    if name not in STAGES:
        raise ConfigError(f"Invalid CDK context: stage={name!r}: expected '' or one of: {', '.join(STAGES)}")
    values = {field: str(get(name + suffix) or "") for field, (suffix, _) in _FIELDS.items()}
    try:
        return StageEnv(name=name, **values)
    except ValidationError as error:
        lines = [f"Invalid CDK context for stage {name!r} (cdk.json or -c key=value):"]
        for item in error.errors():
            field = str(item["loc"][0])
            suffix, accepts = _FIELDS[field]
            problem = "missing; set it to" if not values[field] else "expected"
            lines.append(f"- {name}{suffix}={values[field]!r}: {problem} {accepts}")
        raise ConfigError("\n".join(lines)) from None
