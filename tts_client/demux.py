"""Tells audio from control frames on one socket, and pairs binary audio with its chunk event.

The rule (kokoro-sagemaker-blog.txt, Step 4): a frame is control only if the *whole* frame
parses as a JSON object. Raw PCM may well begin with 0x7b ('{'), so the first byte alone
proves nothing.
"""

from __future__ import annotations

import json

from .events import Event, RawAudio, parse_event

_WHITESPACE = b" \t\r\n"


def as_control(frame: bytes | str) -> dict | None:
    """The JSON object a frame holds, or None when the frame is audio."""
    data = frame.encode("utf-8") if isinstance(frame, str) else frame
    if not data.lstrip(_WHITESPACE).startswith(b"{"):
        return None  # cheap early out: no JSON object can start any other way
    try:
        value = json.loads(data)
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


class Demuxer:
    """Frames in, typed events out.

    In binary mode each `audio.chunk` event (without `audio`) is followed by one binary
    frame with its bytes; the chunk is held back until that frame arrives.
    """

    def __init__(self) -> None:
        self._awaiting_audio: dict | None = None

    def feed(self, frame: bytes | str) -> list[Event]:
        control = as_control(frame)
        if control is None:
            audio = frame.encode("utf-8") if isinstance(frame, str) else bytes(frame)
            if self._awaiting_audio is None:
                return [RawAudio(audio)]
            chunk, self._awaiting_audio = self._awaiting_audio, None
            return [parse_event(chunk, audio)]
        events: list[Event] = []
        if self._awaiting_audio is not None:
            # The announced binary frame never came: keep the chunk, with no audio.
            events.append(parse_event(self._awaiting_audio, b""))
            self._awaiting_audio = None
        if control.get("type") == "audio.chunk" and "audio" not in control:
            self._awaiting_audio = control
            return events
        events.append(parse_event(control))
        return events

    @property
    def pending(self) -> bool:
        return self._awaiting_audio is not None

