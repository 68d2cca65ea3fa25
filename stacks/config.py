"""Typed deployment configuration read from CDK context (cdk.json, `-c key=value`).

cdk.json holds the one set of defaults (every key but alarmTopicArn is required);
`-c` overrides arrive as strings, so numbers are parsed leniently. An invalid value stops synth with a message that names the context
key and the values it accepts.
"""

from __future__ import annotations

import re
from pathlib import Path
from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

# Instance types SageMaker real-time endpoints offer, with the counts that scale the
# utilization targets: SageMaker reports CPUUtilization as the sum over vCPUs (0-400% on
# 4 vCPUs) and GPUUtilization as the sum over GPUs (autoscaling.py).
# GPU: one NVIDIA GPU each; Kokoro-82M fits any of them; ml.g5.xlarge is the default.
GPU_INSTANCE_TYPES: dict[str, int] = {
    f"ml.{family}.{size}": vcpus
    for family in ("g4dn", "g5", "g6", "g6e")
    for size, vcpus in (("xlarge", 4), ("2xlarge", 8), ("4xlarge", 16), ("8xlarge", 32))
}
# CPU: the same image runs the embedded engine (or PyTorch on the CPU, cpuEngine=torch).
CPU_INSTANCE_TYPES: dict[str, int] = {
    f"ml.{family}.{size}": vcpus
    for family in ("c7i", "m7i", "c6i", "m6i", "c5", "m5")
    for size, vcpus in (("large", 2), ("xlarge", 4), ("2xlarge", 8), ("4xlarge", 16))
}
INSTANCE_TYPES = (*GPU_INSTANCE_TYPES, *CPU_INSTANCE_TYPES)
InstanceType = Literal[INSTANCE_TYPES]  # type: ignore[valid-type]

MAX_INSTANCES = 20
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_MODEL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_TOPIC_ARN = re.compile(r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$")


class ConfigError(ValueError):
    """Raised for an invalid context value; the message names the key."""


def _model_source(value: str) -> str:
    if value == "hub":
        return value
    if value.startswith("local:"):
        directory = Path(value.removeprefix("local:")).expanduser()
        if not (directory / "config.json").is_file():
            raise ValueError(
                f"local:{directory} has no config.json; "
                "expected a Kokoro model directory (config.json, *.pth, voices/*.pt)"
            )
        return f"local:{directory.resolve()}"
    raise ValueError("expected 'hub' or 'local:<directory with config.json>'")


class DeploymentConfig(BaseModel):
    """The product's deployment settings; field aliases are the context keys."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    name_prefix: str = Field(
        alias="namePrefix", pattern=r"^[a-z][a-z0-9-]{1,22}[a-z0-9]$",
        json_schema_extra={"accepts": "lowercase letters, digits and '-', 3-24 characters, starts with a letter"},
        description="names the stacks, the endpoint (<prefix>-endpoint), the bucket (<prefix>-models-<account>-<region>), the key alias",
    )
    instance_type: InstanceType = Field(
        alias="instanceType", description="instance type of the variant; a CPU type deploys the CPU variant")
    initial_instance_count: int = Field(
        alias="initialInstanceCount", ge=1, le=MAX_INSTANCES,
        description="instances when the endpoint config is created (between min and max)")
    min_instance_count: int = Field(alias="minInstanceCount", ge=1, le=MAX_INSTANCES,
                                    description="autoscaling lower bound (at most max)")
    max_instance_count: int = Field(alias="maxInstanceCount", ge=1, le=MAX_INSTANCES,
                                    description="autoscaling upper bound")
    target_utilization: int = Field(
        alias="targetUtilizationPercent", ge=10, le=90,
        description="target of the target-tracking policies: average busy share of each vCPU (and, on GPU types, "
                    "of the GPU), in percent")
    cpu_engine: Literal["onnx", "torch"] = Field(
        alias="cpuEngine",
        description="CPU types only: the embedded int8 ONNX engine (its five Japanese voices), or PyTorch on the "
                    "CPU with the cached weights (all 54 voices)")
    model_id: str = Field(alias="modelId", json_schema_extra={"accepts": "owner/name on the Hub"},
                          description="model repository, also the S3 key prefix")
    model_revision: str = Field(alias="modelRevision",
                                json_schema_extra={"accepts": "a full 40-character commit hash (no branch names)"},
                                description="pinned revision to copy")
    model_source: Annotated[str, AfterValidator(_model_source)] = Field(
        alias="modelSource", json_schema_extra={"accepts": "hub or local:<directory with config.json>"},
        description="where the weights come from (deploy guide: How the weights reach S3)")
    hub_endpoint: str = Field(
        alias="hubEndpoint", pattern=r"^https://[A-Za-z0-9.-]+(:\d+)?$",
        json_schema_extra={"accepts": "an https:// origin, without a path"},
        description="the Hub or a mirror of it",
    )
    alarm_topic_arn: str | None = Field(None, alias="alarmTopicArn", json_schema_extra={"accepts": "an SNS topic ARN"},
                                        description="receives ALARM and OK notifications of all alarms (empty: none)")
    model_latency_alarm_ms: int = Field(alias="modelLatencyAlarmMs", ge=100, le=600_000,
                                        description="p90 ModelLatency alarm threshold, in milliseconds")
    ws_max_pending_responses: int = Field(
        alias="wsMaxPendingResponses", ge=0, le=1000,
        description="the container's WS_MAX_PENDING_RESPONSES (queued responses per session)")

    @field_validator("model_id")
    @classmethod
    def _check_model_id(cls, value: str) -> str:
        if not _MODEL_ID.match(value):
            raise ValueError("expected a Hugging Face repository id such as 'hexgrad/Kokoro-82M'")
        return value

    @field_validator("model_revision")
    @classmethod
    def _check_revision(cls, value: str) -> str:
        # A branch name would make "same revision: nothing copied" a lie when it moves.
        if not _COMMIT.match(value):
            raise ValueError("expected a full 40-character lowercase commit hash (a pinned revision)")
        return value

    @field_validator("alarm_topic_arn", mode="before")
    @classmethod
    def _check_topic(cls, value: object) -> object:
        if value in (None, "", "none"):
            return None
        if not isinstance(value, str) or not _TOPIC_ARN.match(value):
            raise ValueError("expected an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>) or ''")
        return value

    @model_validator(mode="after")
    def _check_bounds(self) -> DeploymentConfig:
        if self.min_instance_count > self.max_instance_count:
            raise ValueError(
                "minInstanceCount must be <= maxInstanceCount "
                f"(got {self.min_instance_count} > {self.max_instance_count})"
            )
        if not self.min_instance_count <= self.initial_instance_count <= self.max_instance_count:
            raise ValueError(
                "initialInstanceCount must lie between minInstanceCount and maxInstanceCount "
                f"(got {self.initial_instance_count}, bounds {self.min_instance_count}..{self.max_instance_count})"
            )
        return self

    @property
    def is_local_source(self) -> bool:
        return self.model_source.startswith("local:")

    @property
    def local_model_dir(self) -> Path:
        return Path(self.model_source.removeprefix("local:"))

    @property
    def is_gpu(self) -> bool:
        return self.instance_type in GPU_INSTANCE_TYPES

    @property
    def vcpus(self) -> int:
        return {**GPU_INSTANCE_TYPES, **CPU_INSTANCE_TYPES}[self.instance_type]

    @property
    def endpoint_name(self) -> str:
        return f"{self.name_prefix}-endpoint"

    @classmethod
    def from_context(cls, get: Callable[[str], object]) -> DeploymentConfig:
        """Build from a context getter such as `app.node.try_get_context`."""
        keys = [field.alias for field in cls.model_fields.values()]
        values = {key: get(key) for key in keys if get(key) is not None}
        try:
            return cls.model_validate(values)
        except ValidationError as error:
            raise ConfigError(_describe(error)) from None


_RANGE_ERRORS = {"int_parsing", "int_from_float", "greater_than_equal", "less_than_equal"}
_RANGES = {
    field.alias: (
        next(m.ge for m in field.metadata if hasattr(m, "ge")),
        next(m.le for m in field.metadata if hasattr(m, "le")),
    )
    for field in DeploymentConfig.model_fields.values()
    if field.annotation is int
}


def _describe(error: ValidationError) -> str:
    hints = {f.alias: f.json_schema_extra["accepts"] for f in DeploymentConfig.model_fields.values()
             if isinstance(f.json_schema_extra, dict) and "accepts" in f.json_schema_extra}
    lines = ["Invalid CDK context (cdk.json or -c key=value):"]
    for item in error.errors():
        key = ".".join(str(part) for part in item["loc"])
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "literal_error" and key == "instanceType":
            message = "expected one of: " + ", ".join(INSTANCE_TYPES)
        elif item["type"] in _RANGE_ERRORS and key in _RANGES:
            low, high = _RANGES[key]
            message = f"expected an integer from {low} to {high}"
        elif item["type"] == "string_pattern_mismatch" and key in hints:
            message = "expected " + hints[key]
        if item["type"] == "missing":
            lines.append(f"- {key}: missing; set it in cdk.json's context or pass -c {key}=...")
            continue
        prefix = f"{key}={item.get('input')!r}" if key else "context"
        lines.append(f"- {prefix}: {message}")
    return "\n".join(lines)
