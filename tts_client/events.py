"""Typed server events of the session protocol (SPEC §3), parsed from JSON control frames.

Unknown event types are kept as `UnknownEvent` rather than dropped, so a newer server
never breaks an older client.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Alignment:
    text: str
    start_char: int
    end_char: int
    start_ms: int
    end_ms: int


@dataclass(frozen=True)
class SessionCreated:
    session_id: str
    language: str | None  # None: the session named none, so each response's text decides its own
    speaker_id: str
    format: str
    sample_rate: int
    audio_frames: str
    speakers: list[str] = field(default_factory=list)
    raw: dict = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class ResponseQueued:
    response_id: str


@dataclass(frozen=True)
class ResponseCreated:
    response_id: str


@dataclass(frozen=True)
class AudioChunk:
    """One chunk of a response's encoded audio, decoded from base64 or a binary frame."""

    response_id: str
    sequence: int
    audio: bytes = field(repr=False)
    alignments: list[Alignment] | None = None


@dataclass(frozen=True)
class ResponseDone:
    response_id: str
    status: str  # completed | cancelled | failed | truncated
    characters: int = 0
    audio_ms: int = 0
    error: ErrorInfo | None = None


@dataclass(frozen=True)
class ErrorInfo:
    code: str
    message: str
    response_id: str | None = None
    retry_after: float | None = None


@dataclass(frozen=True)
class ErrorEvent:
    error: ErrorInfo


@dataclass(frozen=True)
class SessionClosed:
    pass


@dataclass(frozen=True)
class Pong:
    pass


@dataclass(frozen=True)
class UnknownEvent:
    type: str | None
    raw: dict


@dataclass(frozen=True)
class RawAudio:
    """Audio that no `audio.chunk` announced (the blog family's socket sends only raw PCM frames)."""

    audio: bytes = field(repr=False)


@dataclass(frozen=True)
class TransportClosed:
    """The connection ended: WebSocket close code, or the SageMaker stream's end."""

    code: int | None
    reason: str = ""


Event = (
    SessionCreated | ResponseQueued | ResponseCreated | AudioChunk | ResponseDone
    | ErrorEvent | SessionClosed | Pong | UnknownEvent | RawAudio | TransportClosed
)


def parse_error(body: dict) -> ErrorInfo:
    return ErrorInfo(
        code=str(body.get("code", "")),
        message=str(body.get("message", "")),
        response_id=body.get("response_id"),
        retry_after=body.get("retry_after"),
    )


def parse_alignments(records: list[dict] | None) -> list[Alignment] | None:
    if records is None:
        return None
    return [Alignment(r["text"], r["start_char"], r["end_char"], r["start_ms"], r["end_ms"]) for r in records]


def parse_event(message: dict[str, Any], audio: bytes | None = None) -> Event:
    """The typed event for one control frame; `audio` is the binary frame that followed it."""
    kind = message.get("type")
    if kind == "session.created":
        return SessionCreated(
            session_id=message.get("session_id", ""),
            language=message.get("language"),
            speaker_id=message.get("speaker_id", ""),
            format=message.get("format", ""),
            sample_rate=int(message.get("sample_rate", 0)),
            audio_frames=message.get("audio_frames", "json"),
            speakers=list(message.get("speakers", [])),
            raw=message,
        )
    if kind == "response.queued":
        return ResponseQueued(message["response_id"])
    if kind == "response.created":
        return ResponseCreated(message["response_id"])
    if kind == "audio.chunk":
        if audio is None:
            audio = base64.b64decode(message.get("audio", ""))
        return AudioChunk(
            response_id=message["response_id"],
            sequence=int(message["sequence"]),
            audio=audio,
            alignments=parse_alignments(message.get("alignments")),
        )
    if kind == "response.done":
        usage = message.get("usage") or {}
        return ResponseDone(
            response_id=message["response_id"],
            status=message["status"],
            characters=int(usage.get("characters", 0)),
            audio_ms=int(usage.get("audio_ms", 0)),
            error=parse_error(message["error"]) if message.get("error") else None,
        )
    if kind == "error":
        return ErrorEvent(parse_error(message.get("error") or {}))
    if kind == "session.closed":
        return SessionClosed()
    if kind == "pong":
        return Pong()
    return UnknownEvent(kind, message)
