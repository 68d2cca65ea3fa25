"""What the session engine reports; each dialect renders these its own way."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ..engine.output import Alignment
from ..wire.errors import ProtocolError


class Status(StrEnum):
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    FAILED = "failed"
    TRUNCATED = "truncated"


@dataclass(frozen=True)
class ResponseQueued:
    response_id: str


@dataclass(frozen=True)
class ResponseCreated:
    response_id: str


@dataclass(frozen=True)
class AudioChunk:
    response_id: str
    sequence: int
    audio: bytes
    alignments: list[Alignment] | None  # None unless timestamps were asked for
    start_ms: int = 0  # the span of the response's audio (as sent) this chunk carries
    end_ms: int = 0


@dataclass(frozen=True)
class ResponseDone:
    response_id: str
    status: Status
    characters: int
    audio_ms: int
    error: ProtocolError | None = None


SessionEvent = ResponseQueued | ResponseCreated | AudioChunk | ResponseDone
