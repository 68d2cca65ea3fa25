"""Server settings from the environment (SageMaker passes the model's Environment map)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from .engine.pauses import Pauses
from .errors import one_of
from .protocol.frames import FrameLimits


def _parsed(name: str, default, parse, kind: str):
    """The variable parsed, or `default` when unset; SystemExit naming it when it does not parse."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return parse(raw)
    except ValueError:
        raise SystemExit(f"{name}: Input should be {kind}, got {raw!r}") from None


def _at_least(name: str, value, minimum):
    if not value >= minimum:
        raise SystemExit(f"{name}: Input should be greater than or equal to {minimum}, got {value}")
    return value


def _int(name: str, default: int, minimum: int = 0) -> int:
    return _at_least(name, _parsed(name, default, int, "a valid integer"), minimum)


def _choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    raw = os.environ.get(name, "").strip().lower() or default
    if raw not in choices:
        raise SystemExit(f"{name}: {one_of(choices)}, got {raw!r}")
    return raw


def _float(name: str, default: float, minimum: float = 0.0) -> float:
    return _at_least(name, _parsed(name, default, float, "a valid number"), minimum)


def _seconds(name: str, default: float) -> float:
    value = _parsed(name, default, float, "a number of seconds")
    if not value > 0:
        raise SystemExit(f"{name}: Input should be greater than 0, got {value}")
    return value


def _names(name: str, default: tuple[str, ...]) -> tuple[str, ...]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def _speaker_map(name: str) -> dict[str, str] | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError as error:
        raise SystemExit(f"{name}: Input should be a JSON object of speaker -> voice, got {raw!r} ({error})") from None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise SystemExit(f"{name}: Input should be a JSON object of speaker -> voice, got {raw!r}")
    return {k.lower(): v for k, v in value.items()}


# Bulbul's model ids: their clients send one; the model that speaks is still MODEL_ID.
BULBUL_MODELS = ("bulbul:v3", "bulbul:v2", "bulbul:v4-flash")


@dataclass(frozen=True)
class Settings:
    host: str = "0.0.0.0"
    port: int = 8080
    max_pending_responses: int = 15
    max_batch: int | None = None  # pieces per model run; None = the backend's default (1 on ONNX)
    inference_threads: int | None = None  # intra-op threads per inference; None = all cores
    fast_first_fragment: int | None = 10  # cut a long first sentence at a clause past this many chars
    preemption: bool = True  # a first piece may stop a barely started later piece (scheduler.py)
    # Engine selection (engine/factory.py): auto = torch when model_dir holds weights, else onnx.
    engine: str = "auto"
    device: str = "auto"
    model_dir: str | None = None
    languages: tuple[str, ...] | None = None  # LANGUAGES=ja,en-US: serve only these (default: all)
    # Silence between pieces, audible to audible (engine/pauses.py).
    pause_clause_ms: int = 200
    pause_sentence_ms: int = 300
    pause_paragraph_ms: int = 450
    model_id: str = "kokoro-82m"  # the served model; a request's `model` may name it ...
    model_aliases: tuple[str, ...] = BULBUL_MODELS  # ... or one of these
    # Bulbul speaker name -> our speaker id; None = the built-in map by gender (protocol/voice_defaults.py)
    bulbul_speakers: dict[str, str] | None = field(default=None, hash=False, compare=False)
    max_request_age_s: float = 56.0  # the blog shape's request_timestamp bound (its container's default)
    # Admission control (admission.py); syntheses None = derived from the engine's measured speed.
    max_syntheses: int | None = None
    max_sessions: int = 512  # open sessions: a connection cap only, idle ones cost almost nothing
    target_first_audio_ms: int = 2000  # shed new work predicted to start speaking later than this
    overload_retry_after_s: int = 1
    max_request_bytes: int = 1 << 20  # POST /invocations bodies; a full custom style pack is ~700 KB
    # Limits on what clients send and how long they hold a session (SPEC §10, docs/robustness.md).
    max_frame_bytes: int = 1 << 20  # one WebSocket message
    max_json_depth: int = 32  # frames and bodies
    idle_timeout_s: float = 300.0  # no client message and nothing being spoken
    max_session_s: float = 3600.0
    stream_buffer_bytes: int = 1 << 20  # audio an HTTP stream holds for a slow reader
    # SIGTERM: responses in progress may finish this long; SageMaker sends SIGKILL 30 s after SIGTERM.
    shutdown_deadline_s: float = 20.0

    @property
    def frame_limits(self) -> FrameLimits:
        return FrameLimits(self.max_frame_bytes, self.max_json_depth)

    @property
    def pauses(self) -> Pauses:
        return Pauses(self.pause_clause_ms, self.pause_sentence_ms, self.pause_paragraph_ms)

    @classmethod
    def from_env(cls) -> Settings:
        fast = _int("FAST_FIRST_FRAGMENT_CHARS", 10)
        return cls(
            host=os.environ.get("HOST", cls.host),
            port=_int("PORT", cls.port, 1),
            max_pending_responses=_int("WS_MAX_PENDING_RESPONSES", cls.max_pending_responses),
            max_batch=_int("MAX_BATCH", 0) or None,
            inference_threads=_int("INFERENCE_THREADS", 0) or None,
            fast_first_fragment=fast or None,
            preemption=_choice("PREEMPTION", "on", ("on", "off")) == "on",
            model_id=os.environ.get("MODEL_ID", "").strip() or cls.model_id,
            engine=_choice("ENGINE", cls.engine, ("auto", "torch", "onnx")),
            device=_choice("DEVICE", cls.device, ("auto", "cuda", "cpu")),
            model_dir=os.environ.get("MODEL_DIR", "").strip() or None,
            languages=tuple(c.strip() for c in os.environ.get("LANGUAGES", "").split(",") if c.strip()) or None,
            pause_clause_ms=_int("PAUSE_CLAUSE_MS", cls.pause_clause_ms),
            pause_sentence_ms=_int("PAUSE_SENTENCE_MS", cls.pause_sentence_ms),
            pause_paragraph_ms=_int("PAUSE_PARAGRAPH_MS", cls.pause_paragraph_ms),
            model_aliases=_names("MODEL_ALIASES", BULBUL_MODELS),
            bulbul_speakers=_speaker_map("BULBUL_SPEAKER_MAP"),
            max_request_age_s=_float("MAX_REQUEST_AGE_S", cls.max_request_age_s),
            max_syntheses=_int("MAX_CONCURRENT_SYNTHESES", 0) or None,
            max_sessions=_int("MAX_SESSIONS", cls.max_sessions, 1),
            target_first_audio_ms=_int("TARGET_FIRST_AUDIO_MS", cls.target_first_audio_ms, 1),
            overload_retry_after_s=_int("OVERLOAD_RETRY_AFTER_S", cls.overload_retry_after_s, 1),
            max_request_bytes=_int("MAX_REQUEST_BYTES", cls.max_request_bytes, 1024),
            max_frame_bytes=_int("WS_MAX_FRAME_BYTES", cls.max_frame_bytes, 1024),
            max_json_depth=_int("MAX_JSON_DEPTH", cls.max_json_depth, 4),
            idle_timeout_s=_seconds("SESSION_IDLE_TIMEOUT_S", cls.idle_timeout_s),
            max_session_s=_seconds("SESSION_MAX_LIFETIME_S", cls.max_session_s),
            stream_buffer_bytes=_int("STREAM_BUFFER_BYTES", cls.stream_buffer_bytes, 4096),
            shutdown_deadline_s=_seconds("SHUTDOWN_DEADLINE_S", cls.shutdown_deadline_s),
        )

    @property
    def accepted_models(self) -> tuple[str, ...]:
        return (self.model_id, *(a for a in self.model_aliases if a != self.model_id))
