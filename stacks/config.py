"""Typed deployment configuration read from CDK context (cdk.json, `-c key=value`).

cdk.json holds the one set of defaults (the keys with a default here may be left out of it);
`-c` overrides arrive as strings, so numbers are parsed leniently. An invalid value stops synth
with a message that names the context key and the values it accepts. Each field says what it
means (`description`) and, where a message needs it, what it accepts (`accepts`).
"""

from __future__ import annotations

import json
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

from stacks import server_settings
from stacks.load_budget import CPU_BUDGET, GPU_BUDGET, LoadBudget

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
# The image's users (container/Dockerfile's CONTAINER_USER build argument) and their uids.
CONTAINER_UIDS = {"tts": 10001, "root": 0}
ContainerUser = Literal["tts", "root"]

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


def _field(alias: str, description: str, accepts: str | None = None, **options):
    """A context key: its meaning (`description`) and, where a message needs it, what it accepts."""
    extra = {"accepts": accepts} if accepts else None
    return Field(alias=alias, description=description, json_schema_extra=extra, **options)


class DeploymentConfig(BaseModel):
    """The product's deployment settings; field aliases are the context keys."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    name_prefix: str = _field(
        "namePrefix", "names the stacks, the endpoint (<prefix>-endpoint), the bucket and the key alias",
        "lowercase letters, digits and '-', 3-24 characters, starts with a letter",
        pattern=r"^[a-z][a-z0-9-]{1,22}[a-z0-9]$")
    instance_type: InstanceType = _field(
        "instanceType", "instance type of the variant; a CPU type deploys the CPU variant (the embedded engine)")
    initial_instance_count: int = _field(
        "initialInstanceCount", "instances when the endpoint config is created", ge=1, le=MAX_INSTANCES)
    min_instance_count: int = _field("minInstanceCount", "autoscaling lower bound", ge=1, le=MAX_INSTANCES)
    max_instance_count: int = _field("maxInstanceCount", "autoscaling upper bound", ge=1, le=MAX_INSTANCES)
    target_utilization: int = _field(
        "targetUtilizationPercent", "average busy share of each vCPU (and GPU) that target tracking aims for, "
        "in percent", ge=10, le=90)
    cpu_engine: Literal["onnx", "torch"] = _field(
        "cpuEngine", "CPU instance types only: the embedded int8 ONNX engine, or PyTorch on the cached weights")
    model_id: str = _field("modelId", "model repository on the Hub, also the S3 key prefix")
    model_revision: str = _field("modelRevision", "pinned revision of the weights to copy")
    model_source: Annotated[str, AfterValidator(_model_source)] = _field(
        "modelSource", "where the weights come from: the Hub, or a local directory uploaded as an asset")
    hub_endpoint: str = _field(
        "hubEndpoint", "the Hub or a mirror of it", "an https:// origin of the Hub or a mirror, without a path",
        pattern=r"^https://[A-Za-z0-9.-]+(:\d+)?$")
    alarm_topic_arn: str | None = _field(
        "alarmTopicArn", "SNS topic for the alarms' ALARM and OK notifications ('': none)", default=None)
    model_latency_alarm_ms: int = _field(
        "modelLatencyAlarmMs", "p90 ModelLatency alarm threshold, in milliseconds", ge=100, le=600_000)
    ws_max_pending_responses: int = _field(
        "wsMaxPendingResponses", "the server's WS_MAX_PENDING_RESPONSES (queued responses per session); the "
        "validator is told the same", ge=0, le=1000)
    server_settings: dict[str, str] = _field(
        "serverSettings", "any other server setting, as a JSON object of environment variable -> value "
        "(the settings reference lists them), set on the endpoint's container", default_factory=dict)
    container_user: ContainerUser = _field(
        "containerUser", "the user the container runs as: 'tts' (uid 10001, the default) or 'root' "
        "(SageMaker's documented expectation); the image is built for it", default="tts")
    base_image: str = _field(
        "baseImage", "the Dockerfile's base image ('': its default, ECR Public's mirror of ubuntu:24.04); "
        "e.g. a pull-through cache of it in your registry",
        "an image reference such as public.ecr.aws/docker/library/ubuntu:24.04, or ''",
        default="", pattern=r"^$|^[a-z0-9][a-z0-9._/:@-]*$")
    load_levels: tuple[int, ...] | None = _field(
        "loadLevels", "staging's load stage: concurrent sessions of each level, comma-separated ('': 1,10,50)",
        default=None)
    load_seconds: float | None = _field(
        "loadSeconds", "staging's load stage: seconds each level runs ('': 60)", default=None, gt=0, le=1800)
    load_ttfa_p95_ms: int | None = _field(
        "loadTtfaP95Ms", "staging's load stage: TTFA p95 budget in ms ('': the instance family's default)",
        default=None, ge=1)
    load_ttfa_p99_ms: int | None = _field(
        "loadTtfaP99Ms", "staging's load stage: TTFA p99 budget in ms ('': the instance family's default)",
        default=None, ge=1)
    load_shed_free_sessions: int | None = _field(
        "loadShedFreeSessions", "staging's load stage: levels up to this many sessions must shed none "
        "('': the instance family's default)", default=None, ge=0)

    @field_validator("load_levels", "load_seconds", "load_ttfa_p95_ms", "load_ttfa_p99_ms",
                     "load_shed_free_sessions", mode="before")
    @classmethod
    def _blank_is_default(cls, value: object) -> object:
        return None if value in ("", None) else value

    @field_validator("load_levels", mode="before")
    @classmethod
    def _levels(cls, value: object) -> object:
        if isinstance(value, str) and value.strip():
            try:
                value = tuple(int(part) for part in value.split(","))
            except ValueError:
                raise ValueError("expected session counts separated by commas, e.g. 1,10,50") from None
        if isinstance(value, (list, tuple)) and not all(isinstance(n, int) and 1 <= n <= 1000 for n in value):
            raise ValueError("expected session counts from 1 to 1000, e.g. 1,10,50")
        return value

    @field_validator("server_settings", mode="before")
    @classmethod
    def _server_settings(cls, value: object) -> object:
        if isinstance(value, str):  # -c serverSettings='{"PREEMPTION": "off"}'
            try:
                value = json.loads(value) if value.strip() else {}
            except ValueError:
                raise ValueError('expected a JSON object such as {"PREEMPTION": "off"}') from None
        if not isinstance(value, dict):
            raise ValueError('expected a JSON object such as {"PREEMPTION": "off"}')
        return server_settings.check(value)

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

    @property
    def engine(self) -> str:
        """The server's ENGINE: PyTorch on GPU types (the deployed weights), cpuEngine on CPU types."""
        return "torch" if self.is_gpu else self.cpu_engine

    @property
    def device(self) -> str:
        """The server's DEVICE: cuda on GPU types, so that a missing GPU fails /ping instead of
        falling back to the CPU; cpu on CPU types."""
        return "cuda" if self.is_gpu else "cpu"

    @property
    def container_uid(self) -> int:
        return CONTAINER_UIDS[self.container_user]

    @property
    def load_budget(self) -> LoadBudget:
        """Staging's load budget: the instance family's defaults, with the context's overrides."""
        overrides = {"levels": self.load_levels, "seconds": self.load_seconds, "ttfa_p95_ms": self.load_ttfa_p95_ms,
                     "ttfa_p99_ms": self.load_ttfa_p99_ms, "shed_free_sessions": self.load_shed_free_sessions}
        defaults = GPU_BUDGET if self.is_gpu else CPU_BUDGET
        return defaults.model_copy(update={k: v for k, v in overrides.items() if v is not None})

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
    if field.annotation is int and any(hasattr(m, "ge") for m in field.metadata)
}


def _describe(error: ValidationError) -> str:
    hints = {f.alias: (f.json_schema_extra or {}).get("accepts") for f in DeploymentConfig.model_fields.values()}
    lines = ["Invalid CDK context (cdk.json or -c key=value):"]
    for item in error.errors():
        key = ".".join(str(part) for part in item["loc"])
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "literal_error" and key == "instanceType":
            message = "expected one of: " + ", ".join(INSTANCE_TYPES)
        elif item["type"] in _RANGE_ERRORS and key in _RANGES:
            low, high = _RANGES[key]
            message = f"expected an integer from {low} to {high}"
        elif item["type"] == "string_pattern_mismatch" and hints.get(key):
            message = "expected " + hints[key]
        if item["type"] == "missing":
            lines.append(f"- {key}: missing; set it in cdk.json's context or pass -c {key}=...")
            continue
        prefix = f"{key}={item.get('input')!r}" if key else "context"
        lines.append(f"- {prefix}: {message}")
    return "\n".join(lines)
