"""POST /invocations: one path for every client family (behind SageMaker it is the only one).

The body is read within the limits, then answered by the family whose shape it has
(the registry asks each family in turn; the canonical protocol answers the rest), once it has
shown an API key in that family's fields where API_KEYS asks for one.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ..settings import Settings
from ..wire.errors import ErrorCode, ProtocolError
from ..wire.frames import parse_json_object
from .family import error_response, http_refusal
from .http_errors import request_id
from .state import server_state

JSON = "application/json"
DRAIN_LIMIT = 16 << 20  # an oversized body is read (and dropped) up to here, so the 413 reaches the client


async def invocations(request: Request) -> Response:
    raw = await read_json_body(request)
    family, rid = server_state(request).families.claiming(raw), request_id(request)
    problem = http_refusal(family, request)
    if problem is not None:
        return error_response(family, problem, rid)
    return await family.invoke(request, raw, rid)


async def read_json_body(request: Request) -> dict:
    """The body as a JSON object within the app's limits (MAX_REQUEST_BYTES, MAX_JSON_DEPTH), or a
    ProtocolError: too large, invalid if not JSON."""
    settings = server_state(request).settings
    limit, max_depth = settings.max_request_bytes, settings.max_json_depth
    body, size = bytearray(), 0
    async for chunk in request.stream():
        size += len(chunk)
        if size <= limit:
            body += chunk
        elif size > DRAIN_LIMIT:
            break
    if size > limit:
        message = (f"body: the request body should be at most {limit} bytes "
                   f"({Settings.variable('max_request_bytes')}), got {size}")
        raise ProtocolError(ErrorCode.REQUEST_TOO_LARGE, message)
    media_type = request.headers.get("content-type", JSON).split(";")[0].strip().lower()
    if media_type != JSON and not media_type.endswith("+json"):
        raise ProtocolError.invalid(f"content-type: Input should be '{JSON}', got {media_type!r}")
    return parse_json_object(bytes(body), "body", max_depth, Settings.variable("max_json_depth"))
