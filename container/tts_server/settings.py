"""The server's settings: every environment variable declared once, here (a family's own in its package).

Each field is one variable (its name upper-cased): type, default, bounds and description in
one place. SageMaker passes the model's Environment map; `Settings.from_env()` reads it and
stops the server with a message naming the variable when a value does not fit.
`Settings(...)` alone reads nothing (tests and benchmarks build it explicitly).
A client family's own settings live in its package (FamilySettings, below). The settings tables
of docs/ are generated from these models (scripts/settings_tables.py; a test fails when they
drift).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError, PydanticUseDefault
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from .engine.pauses import Pauses
from .wire.frames import FrameLimits


def _zero_is_unset(value: Any) -> Any:
    return None if value in (0, "0") else value


def _comma_list(value: Any) -> Any:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


def _speaker_map(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    problem = PydanticCustomError("name_map", "Input should be a JSON object of name -> voice")
    try:
        parsed = json.loads(value)
    except ValueError:
        raise problem from None
    if not isinstance(parsed, dict) or not all(isinstance(v, str) for v in parsed.values()):
        raise problem
    return {k.lower(): v for k, v in parsed.items()}


# A count where 0 (or unset) means "derive it" and anything else is at least 1.
Derived = Annotated[Annotated[int, Field(ge=1)] | None, BeforeValidator(_zero_is_unset)]
Names = Annotated[tuple[str, ...] | None, NoDecode, BeforeValidator(_comma_list)]
NameMap = Annotated[dict[str, str] | None, NoDecode, BeforeValidator(_speaker_map)]  # JSON: name -> voice
OnOff = Literal["on", "off"]
Seconds = Annotated[float, Field(gt=0)]


def setting(default: Any, description: str, group: str, **bounds: Any) -> Any:
    return Field(default, description=description, json_schema_extra={"group": group}, **bounds)


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, str_strip_whitespace=True)

    # Serving
    host: str = setting("0.0.0.0", "address to listen on", "serving")
    port: int = setting(8080, "port to listen on (SageMaker: 8080)", "serving", ge=1, le=65535)
    shutdown_deadline_s: Seconds = setting(
        20.0, "after SIGTERM, responses in progress may finish this long (SageMaker kills 30 s after SIGTERM)",
        "serving")
    tts_load_gate: str | None = setting(
        None, "tests only: the model loads once this file exists (so 'still loading' is a state a test controls)",
        "serving")
    # Engine (engine/factory.py)
    engine: Literal["auto", "torch", "onnx"] = setting(
        "auto", "auto: torch when MODEL_DIR holds weights, else the embedded ONNX export", "engine")
    device: Literal["auto", "cuda", "cpu"] = setting("auto", "where the torch engine runs", "engine")
    model_dir: str | None = setting(None, "the deployed weights' directory (the image sets /opt/ml/model)", "engine")
    languages: Names = setting(None, "serve only these languages, comma-separated (default: every one)", "engine")
    inference_threads: Derived = setting(None, "intra-op threads per model run (0 or unset: all cores)", "engine")
    max_batch: Derived = setting(
        None, "pieces per model run at most (0 or unset: 1 on ONNX and on CPU torch, 16 on CUDA); "
        "only sizes the warm-up shows pay are used", "engine")
    preemption: OnOff = setting("on", "a first piece may stop a barely started sentence of another response",
                                "engine")
    first_window: OnOff = setting(
        "on", "a response's first audio leaves after a first window of its first piece's frames, not the whole "
        "piece", "engine")
    voice_statistics: Literal["auto", "all", "default", "none"] = setting(
        "auto", "whose reference statistics the warm-up records, given to a first piece's windows: `all` every "
        "language's own voices (a whole decode each), `default` the default voice (its first synthesis), `none` "
        "none (the windows keep their own, made up for level; so do a blend's and a custom style's); `auto`: "
        "`all` on CUDA, `default` on the CPU (where `all` costs seconds of cold start a voice)", "engine")
    piece_growth: OnOff = setting(
        "on", "once a stream is far enough ahead, its next sentences go to the model together (up to 510 tokens)",
        "engine")
    fast_first_fragment_chars: int = setting(
        10, "cut a long first sentence at a clause past this many characters (0: never)", "engine", ge=0)
    pause_clause_ms: int = setting(Pauses.clause_ms, "silence at a clause mark, audible to audible", "engine", ge=0)
    pause_sentence_ms: int = setting(Pauses.sentence_ms, "silence between sentences", "engine", ge=0)
    pause_paragraph_ms: int = setting(Pauses.paragraph_ms, "silence between paragraphs", "engine", ge=0)
    # Admission (admission.py)
    max_concurrent_syntheses: Derived = setting(
        None, "synthesis slots (0 or unset: derived from the warm-up's real-time factors)", "admission")
    max_sessions: int = setting(512, "open WebSocket sessions (a connection cap; idle ones cost a slot only)",
                                "admission", ge=1)
    target_first_audio_ms: int = setting(
        2000, "new work predicted to start speaking later than this is shed while first pieces queue",
        "admission", ge=1)
    overload_retry_after_s: int = setting(1, "`retry_after` and `Retry-After` of a 503 / refused session",
                                          "admission", ge=1)
    # Limits (SPEC §10)
    ws_max_pending_responses: int = setting(15, "responses queued behind the active one, per session", "limits",
                                            ge=0)
    ws_max_frame_bytes: int = setting(
        FrameLimits.max_bytes, "largest WebSocket message (a custom style pack is ~700 KB)", "limits", ge=1024)
    max_request_bytes: int = setting(1 << 20, "largest `POST /invocations` body", "limits", ge=1024)
    max_json_depth: int = setting(FrameLimits.max_depth, "deepest JSON nesting in a frame or body", "limits", ge=4)
    session_idle_timeout_s: Seconds = setting(300.0, "a session with no client message and nothing being spoken "
                                              "this long is closed", "limits")
    session_max_lifetime_s: Seconds = setting(3600.0, "a session's maximum lifetime", "limits")
    stream_buffer_bytes: int = setting(1 << 20, "audio an HTTP stream holds for a slow reader", "limits",
                                       ge=4096)
    # Compatibility surfaces (families/)
    model_id: str = setting("kokoro-82m", "the served model: what `model` may name, and `X-Model` says",
                            "compatibility", min_length=1)
    model_aliases: Names = setting(
        None, "other ids `model` may name, comma-separated (empty: none; unset: the client families' own, "
        "e.g. bulbul:v3,bulbul:v2,bulbul:v4-flash)", "compatibility")
    voice_fallback: Literal["closest", "strict"] = setting(
        "closest", "a voice the engine lacks (OpenAI's names, `af_heart` on the embedded engine): `closest` "
        "speaks with the closest voice it has (same language and gender) and says which; `strict` refuses",
        "compatibility")
    voice_aliases: NameMap = setting(
        None, "JSON object, voice name -> Kokoro voice id, over the client families' own (OpenAI's `alloy` -> "
        "`af_alloy`, ...)", "compatibility")
    api_keys: Names = setting(
        None, "API keys the local server requires on every surface, comma-separated, in each client family's own "
        "key fields or `Authorization: Bearer`; unset: none (behind SageMaker its IAM decides and the deploy never "
        "sets this)", "compatibility")

    @field_validator("*", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: Any, info) -> Any:
        if isinstance(value, str) and not value.strip() and info.field_name != "model_aliases":
            raise PydanticUseDefault()
        if isinstance(value, str) and info.field_name in ("engine", "device", "preemption", "first_window",
                                                           "piece_growth", "voice_fallback", "voice_statistics"):
            return value.strip().lower()
        return value

    @classmethod
    def from_env(cls) -> Settings:
        return _read(_Environment)

    @classmethod
    def variable(cls, field: str) -> str:
        """The environment variable of a field, for messages that tell an operator what to raise."""
        return _variable(cls, field)

    @property
    def fast_first_fragment(self) -> int | None:
        return self.fast_first_fragment_chars or None

    @property
    def frame_limits(self) -> FrameLimits:
        return FrameLimits(self.ws_max_frame_bytes, self.max_json_depth, self.variable("ws_max_frame_bytes"),
                           self.variable("max_json_depth"))

    @property
    def pauses(self) -> Pauses:
        return Pauses(self.pause_clause_ms, self.pause_sentence_ms, self.pause_paragraph_ms)

    @property
    def accepted_models(self) -> tuple[str, ...]:
        return (self.model_id, *(a for a in self.model_aliases or () if a != self.model_id))

    def with_model_aliases(self, model_ids: tuple[str, ...]) -> Settings:
        """MODEL_ALIASES unset: the ids the client families' clients send."""
        return self if self.model_aliases is not None else self.model_copy(update={"model_aliases": model_ids})


class _Environment(BaseSettings, Settings):
    model_config = SettingsConfigDict(frozen=True, case_sensitive=False, extra="ignore", str_strip_whitespace=True)


class FamilySettings(BaseModel):
    """A client family's own settings, declared in its package (`families/<name>/settings.py`) as
    fields of a subclass: each is an environment variable, read and checked like Settings'.
    Registered families' settings are read at start-up and land in the settings tables too."""

    model_config = ConfigDict(frozen=True, str_strip_whitespace=True)

    @field_validator("*", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            raise PydanticUseDefault()
        return value

    @classmethod
    def from_env(cls) -> FamilySettings:
        return _read(type(f"_{cls.__name__}Environment", (BaseSettings, cls), {"model_config": _Environment.model_config}))

    @classmethod
    def variable(cls, field: str) -> str:
        return _variable(cls, field)


def _read(environment: type[BaseSettings]):
    """Settings read from the environment; a bad value exits naming each variable it was wrong in."""
    try:
        return environment()
    except ValidationError as error:
        raise SystemExit("\n".join(_named(item) for item in error.errors(include_url=False))) from None


def _variable(settings: type[BaseModel], field: str) -> str:
    if field not in settings.model_fields:
        raise KeyError(field)
    return field.upper()


def _named(item: dict) -> str:
    variable = str(item["loc"][0]).upper() if item["loc"] else "settings"
    return f"{variable}: {item['msg']}, got {item['input']!r}"
