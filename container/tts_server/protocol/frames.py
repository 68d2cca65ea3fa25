"""WebSocket frames -> JSON objects. SageMaker sends every client message as a binary frame."""

from __future__ import annotations

import json

from .errors import ProtocolError


def decode_frame(message: dict) -> dict:
    """The JSON object in a text or binary (UTF-8) frame, or a ProtocolError saying what is wrong."""
    data = message.get("text")
    if data is None:
        try:
            data = (message.get("bytes") or b"").decode("utf-8")
        except UnicodeDecodeError as error:
            raise ProtocolError.invalid(f"frame: binary frames must hold UTF-8 JSON ({error.reason} at byte {error.start})") from None
    try:
        event = json.loads(data)
    except json.JSONDecodeError as error:
        raise ProtocolError.invalid(f"frame: Invalid JSON: {error.msg} at line {error.lineno} column {error.colno}") from None
    if not isinstance(event, dict):
        raise ProtocolError.invalid(f"frame: Input should be a JSON object, got {type(event).__name__}")
    return event
