"""WebSocket frames and HTTP bodies -> JSON objects, within the server's limits (SPEC §10).

SageMaker sends every client message as a binary frame. A frame over the size limit, nested
deeper than the depth limit, not UTF-8 or not a JSON object is a ProtocolError naming the
limit or the field: the dialect reports it and the session goes on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .errors import ErrorCode, ProtocolError


@dataclass(frozen=True)
class FrameLimits:
    # The defaults of WS_MAX_FRAME_BYTES and MAX_JSON_DEPTH (settings.py reads them here).
    max_bytes: int = 1 << 20  # a custom style pack in `open` is ~700 KB of base64
    max_depth: int = 32  # the deepest valid event nests 3 levels (Bulbul's config.data)
    # The settings behind the limits, named in the errors so an operator knows what to raise
    # (the settings model passes its variables' names; these defaults are theirs).
    bytes_setting: str = "WS_MAX_FRAME_BYTES"
    depth_setting: str = "MAX_JSON_DEPTH"


def decode_frame(message: dict, limits: FrameLimits = FrameLimits()) -> dict:
    """The JSON object in a text or binary (UTF-8) frame, or a ProtocolError saying what is wrong."""
    data = message.get("text")
    data = message.get("bytes") or b"" if data is None else data
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > limits.max_bytes:
        raise ProtocolError(
            ErrorCode.REQUEST_TOO_LARGE,
            f"frame: a frame should be at most {limits.max_bytes} bytes ({limits.bytes_setting}), got {size}",
        )
    return parse_json_object(data, "frame", limits.max_depth, limits.depth_setting)


def parse_json_object(data: str | bytes, field: str, max_depth: int = FrameLimits.max_depth,
                      depth_setting: str = FrameLimits.depth_setting) -> dict:
    """`data` as a JSON object; a ProtocolError naming `field` (frame, body) when it is not one."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as error:
            where = f"{error.reason} at byte {error.start}"
            raise ProtocolError.invalid(f"{field}: Input should be UTF-8 encoded JSON ({where})") from None
    too_deep = ProtocolError.invalid(f"{field}: JSON should nest at most {max_depth} levels deep ({depth_setting})")
    # Only a text with more brackets than the limit can nest too deep: most never pay for the walk.
    may_be_deep = data.count("[") + data.count("{") > max_depth
    try:
        event = json.loads(data)
    except json.JSONDecodeError as error:
        raise ProtocolError.invalid(f"{field}: Invalid JSON: {error.msg} at line {error.lineno} column {error.colno}") from None
    except RecursionError:  # nested deeper than the interpreter's own limit (~1000)
        raise too_deep from None
    if may_be_deep and _nested_deeper(event, max_depth):
        raise too_deep
    if not isinstance(event, dict):
        raise ProtocolError.invalid(f"{field}: Input should be a JSON object, got {type(event).__name__}")
    return event


def _nested_deeper(value, limit: int) -> bool:
    """Whether `value` nests more than `limit` containers deep (iterative: no recursion to exhaust)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
