"""WebSocket frames -> JSON objects. SageMaker sends every client message as a binary frame."""

from __future__ import annotations

import json

from .errors import ProtocolError


def decode_frame(message: dict) -> dict:
    """The JSON object in a text or binary (UTF-8) frame, or a ProtocolError saying what is wrong."""
    data = message.get("text")
    return parse_json_object(message.get("bytes") or b"" if data is None else data, "frame")


def parse_json_object(data: str | bytes, field: str) -> dict:
    """`data` as a JSON object; a ProtocolError naming `field` (frame, body) when it is not one."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as error:
            where = f"{error.reason} at byte {error.start}"
            raise ProtocolError.invalid(f"{field}: Input should be UTF-8 encoded JSON ({where})") from None
    try:
        event = json.loads(data)
    except json.JSONDecodeError as error:
        raise ProtocolError.invalid(f"{field}: Invalid JSON: {error.msg} at line {error.lineno} column {error.colno}") from None
    if not isinstance(event, dict):
        raise ProtocolError.invalid(f"{field}: Input should be a JSON object, got {type(event).__name__}")
    return event
