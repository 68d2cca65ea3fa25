"""Cartesia's vendor tables: its model ids, a few of its voices, its output formats, its request
fields and the names its errors go by. Each maps onto ours; errors name the field as Cartesia
spells it (`output_format.encoding`, `voice.id`, ...).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ...audio.formats import OutputSpec
from ...engine.voice_policy import VoiceNames
from ...wire.errors import ErrorCode, FieldError, one_of
from ...wire.fields import MAX_ID_CHARS, Speed, Text

# Its model ids are `sonic*` (sonic-3, sonic-3.5, sonic-latest, dated snapshots such as
# sonic-3-2025-10-27, ...): their clients send one; the model that speaks is still MODEL_ID.
MODEL_PREFIX = "sonic"
MODEL_EXAMPLES = ("sonic-3", "sonic-3.5", "sonic-3.6", "sonic-latest", "sonic-2", "sonic-turbo")

# A few of its voices, as the frameworks' examples and defaults name them -> Kokoro voices of the
# same gender and English variety. Any other id (its library is large, clones are the user's)
# speaks as the language's first voice; VOICE_ALIASES maps any id to a voice of your choice.
PREMADE: dict[str, str] = {
    "f786b574-daa5-4673-aa0c-cbe3e8534c02": "af_heart",  # Katie: LiveKit's cartesia.TTS default
    "6ccbfb76-1fc6-48f7-b71d-91ac6298247b": "af_bella",  # the cartesia SDK's default in no_more_inputs()
    "71a7ad14-091c-4e8e-a314-022ece01c121": "bf_emma",  # British Reading Lady: Pipecat's examples
    "79a125e8-cd45-4c13-8a67-188112f4dd22": "bf_isabella",  # British Lady
    "a0e99841-438c-4a64-b679-ae501e7d6091": "am_michael",  # Barbershop Man
}
VOICES = VoiceNames(aliases=PREMADE, unknown="default")

# Its raw encodings -> ours (the format table's records); its containers and what each takes.
ENCODINGS = {"pcm_s16le": "pcm_16", "pcm_f32le": "pcm_f32", "pcm_mulaw": "mulaw", "pcm_alaw": "alaw"}
CONTAINERS = {"raw": tuple(ENCODINGS), "wav": ("pcm_s16le",), "mp3": ()}  # our WAV is 16-bit PCM
SOCKET_CONTAINERS = ("raw",)  # its socket speaks raw PCM only
# Its `speed` (experimental) as our speed factor.
MODEL_SPEEDS = {"slow": 0.8, "normal": 1.0, "fast": 1.25}
# Our field names as its clients know them (negotiation's errors name these).
FIELDS = {"speaker_id": "voice.id", "language": "language", "format": "output_format.encoding",
          "sample_rate": "output_format.sample_rate", "speed": "generation_config.speed"}

ContextId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]


class VoiceSpec(BaseModel):
    """`{"mode": "id", "id": ...}`; its SDK may send the id alone. Embeddings are not offered."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    mode: Literal["id"] = "id"
    id: Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]


class OutputFormat(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    container: str = "raw"
    encoding: str | None = None
    sample_rate: int
    bit_rate: int | None = None  # mp3's: the encoder's choice here

    def spec(self, containers: tuple[str, ...]) -> OutputSpec:
        """Its format as ours: raw/wav with an encoding, or mp3; errors name the field."""
        if self.container not in containers:
            raise FieldError("output_format.container", one_of(containers))
        encodings = CONTAINERS[self.container]
        if encodings and self.encoding not in encodings:
            raise FieldError("output_format.encoding", one_of(encodings) + f" for container {self.container!r}")
        ours = "mp3" if self.container == "mp3" else "wav" if self.container == "wav" else ENCODINGS[self.encoding]
        try:
            return OutputSpec(ours, self.sample_rate)
        except FieldError as error:
            raise FieldError("output_format.sample_rate", error.message) from None


class GenerationConfig(BaseModel):
    """Only `speed` means something here (volume and emotion are ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    speed: Speed | None = None


class Generation(BaseModel):
    """A generation request: a socket message, the body of /tts/bytes and /tts/sse, or the same on
    /invocations. Fields that mean nothing here (pronunciation_dict_id, ...) are accepted."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)
    model_id: str | None = None
    transcript: str
    voice: VoiceSpec
    output_format: OutputFormat
    language: str | None = None
    context_id: ContextId | None = None
    continue_: bool = Field(False, alias="continue")
    flush: bool = False
    add_timestamps: bool = False
    max_buffer_delay_ms: Annotated[int, Field(ge=0, le=5000)] | None = None
    generation_config: GenerationConfig | None = None
    speed: Literal["slow", "normal", "fast"] | None = None

    @field_validator("voice", mode="before")
    @classmethod
    def _id_alone(cls, value):
        return {"mode": "id", "id": value} if isinstance(value, str) else value

    @property
    def speed_factor(self) -> float | None:
        if self.generation_config is not None and self.generation_config.speed is not None:
            return self.generation_config.speed
        return MODEL_SPEEDS[self.speed] if self.speed else None


class SpeechBody(Generation):
    """The HTTP forms: one transcript, spoken whole."""

    transcript: Text


def check_model(model_id: str | None, accepted: tuple[str, ...]) -> None:
    if model_id is not None and not model_id.startswith(MODEL_PREFIX) and model_id not in accepted:
        raise FieldError("model_id", one_of((*MODEL_EXAMPLES, *accepted)) + " (or another sonic model id)")


def claims_body(raw: dict) -> bool:
    """Its body on /invocations: `transcript` (no other family names its text so)."""
    return "transcript" in raw


# Our error codes as Cartesia's `error_code` and `title`, where it has one.
TITLES: dict[ErrorCode, tuple[str, str]] = {
    ErrorCode.INVALID_REQUEST: ("invalid_request", "Invalid request"),
    ErrorCode.UNKNOWN_EVENT_TYPE: ("invalid_request", "Invalid request"),
    ErrorCode.UNAUTHORIZED: ("unauthorized", "Unauthorized"),
    ErrorCode.SERVICE_OVERLOADED: ("rate_limited", "Too many requests"),
    ErrorCode.TOO_MANY_QUEUED: ("rate_limited", "Too many requests"),
    ErrorCode.MODEL_LOADING: ("service_unavailable", "Service unavailable"),
    ErrorCode.REQUEST_TOO_LARGE: ("request_too_large", "Request too large"),
    ErrorCode.IDLE_TIMEOUT: ("timeout", "Timeout"),
    ErrorCode.INTERNAL: ("internal_error", "Internal server error"),
}


def error_body(code: ErrorCode, message: str, status: int, request_id: str = "") -> dict:
    """Its error fields: `error_code`, `title`, `message`, `status_code`, `request_id`."""
    error_code, title = TITLES.get(code, (str(code), str(code).replace("_", " ").capitalize()))
    return {"error_code": error_code, "title": title, "message": message, "status_code": status,
            "request_id": request_id}
