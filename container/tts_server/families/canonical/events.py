"""Client -> server events of the canonical protocol, validated with pydantic."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from ...audio.formats import AUDIO_FORMATS
from ...wire.fields import MAX_TEXT_CHARS, ResponseId, Speed

AudioFormatName = Literal[AUDIO_FORMATS]  # type: ignore[valid-type]


class ClientEvent(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class OpenEvent(ClientEvent):
    type: Literal["open"]
    language: str | None = None  # None: each response's text decides (its script), never the voice
    speaker_id: str = "default"
    format: AudioFormatName = "pcm_f32"
    sample_rate: int | None = None
    spk_ref_audio_tokens: str | None = None
    audio_frames: Literal["json", "binary"] = "json"
    speed: Speed = 1.0


class ResponseCreateEvent(ClientEvent):
    type: Literal["response.create"]
    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)]
    response_id: ResponseId | None = None
    with_timestamps: bool = False
    max_length: Annotated[int, Field(gt=0)] | None = None
    speaker_id: str | None = None
    speed: Speed | None = None


class ResponseCancelEvent(ClientEvent):
    type: Literal["response.cancel"]
    response_id: ResponseId | None = None


class CloseEvent(ClientEvent):
    type: Literal["close"]


class PingEvent(ClientEvent):
    type: Literal["ping"]


SESSION_EVENTS: dict[str, type[ClientEvent]] = {
    "response.create": ResponseCreateEvent,
    "response.cancel": ResponseCancelEvent,
    "close": CloseEvent,
    "ping": PingEvent,
}
