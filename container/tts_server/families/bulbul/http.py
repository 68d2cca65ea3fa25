"""Bulbul's REST surface: `POST /text-to-speech` (the real-time JSON reply), `/text-to-speech/stream`
(the audio as a byte stream), and `/invocations` bodies that use Bulbul's field names.

The reply is the canonical one (Bulbul's REST reply is `{"request_id", "audios": [...]}`);
only the field names, codecs and speakers are Bulbul's.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ...transport.http_errors import request_id
from ...transport.invocations import read_json_body
from ...transport.state import server_state
from ..canonical.http import InvocationRequest, answer
from .fields import NAMES, OWN_NAMES, Codec, voices
from .settings import BulbulSettings


class BulbulInvocation(InvocationRequest.named(NAMES)):
    format: Codec = "wav"


def claims_body(raw: dict) -> bool:
    return bool(OWN_NAMES & raw.keys())


async def invoke(request: Request, raw: dict, rid: str, stream_default: bool | None = None) -> Response:
    names = voices(server_state(request).family(BulbulSettings))
    return await answer(request, raw, rid, BulbulInvocation, stream_default, names)


async def _own_path(request: Request, stream_default: bool) -> Response:
    raw = await read_json_body(request)
    return await invoke(request, raw, request_id(request), stream_default)


async def rest(request: Request) -> Response:
    return await _own_path(request, stream_default=False)


async def stream(request: Request) -> Response:
    return await _own_path(request, stream_default=True)
