"""The HTTP error envelope (SPEC §5) on every reply that is not audio, whatever went wrong:

    {"error": {"message", "code", "request_id", "retry_after"?}}   (+ Retry-After on 503)

A client mistake (400, 413), overload or a model still loading (503), a route or method that
does not exist (404, 405), or a server bug (500: logged with its request id, never a
traceback to the client). Handlers raise ProtocolError; its code decides the status.
"""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime

from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse

from ..wire.errors import ErrorCode, ProtocolError

log = logging.getLogger(__name__)
_ROUTE_CODES = {404: "not_found", 405: "method_not_allowed"}


def request_id(connection: HTTPConnection) -> str:
    """This request's id, "YYYYMMDD_<uuid>" (UTC date), made on first use."""
    state = connection.state
    if getattr(state, "request_id", None) is None:
        state.request_id = f"{datetime.now(UTC):%Y%m%d}_{uuid.uuid4()}"
    return state.request_id


def error_response(request: Request, status: int, code: str, message: str, retry_after: int | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    body: dict = {"message": message, "code": str(code), "request_id": request_id(request)}
    headers = dict(headers or {})
    if retry_after is not None:
        body["retry_after"] = retry_after
        headers["Retry-After"] = str(retry_after)
    return JSONResponse({"error": body}, status_code=status, headers=headers)


async def _protocol_error(request: Request, error: ProtocolError) -> JSONResponse:
    return error_response(request, error.http_status, error.code, error.message, error.retry_after)


async def _route_error(request: Request, error: HTTPException) -> JSONResponse:
    code = _ROUTE_CODES.get(error.status_code, "http_error")
    return error_response(request, error.status_code, code, str(error.detail), headers=error.headers)


async def _internal_error(request: Request, error: Exception) -> JSONResponse:
    rid = request_id(request)
    log.error("request %s failed", rid, exc_info=error)
    return error_response(request, 500, ErrorCode.INTERNAL, f"internal error; the request was not completed ({rid})")


EXCEPTION_HANDLERS = {ProtocolError: _protocol_error, HTTPException: _route_error, Exception: _internal_error}
