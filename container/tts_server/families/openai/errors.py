"""OpenAI's error envelope: `{"error": {"message", "type", "param", "code"}}`.

A client mistake is 400 `invalid_request_error` naming the field (`param`) and the accepted
values; overload and a loading model are 503 with `Retry-After`, as on every surface.
"""

from __future__ import annotations

from pydantic import ValidationError
from starlette.responses import JSONResponse

from ...wire.errors import FieldError, ProtocolError, as_protocol_error


def param_of(error: ValidationError | FieldError | ProtocolError) -> str | None:
    if isinstance(error, ValidationError):
        first = error.errors(include_url=False)[0]["loc"]
        return str(first[0]) if first else None
    if isinstance(error, FieldError):
        return error.field
    return None


def family_error_reply(error: ProtocolError, _rid: str) -> JSONResponse:
    return openai_error_reply(error)


def openai_error_reply(error: ValidationError | FieldError | ProtocolError, param: str | None = None) -> JSONResponse:
    problem = as_protocol_error(error)
    status = problem.http_status
    kind = "invalid_request_error" if status < 500 else "server_error"
    body = {"message": problem.message, "type": kind, "param": param or param_of(error), "code": str(problem.code)}
    headers = {"Retry-After": str(problem.retry_after)} if problem.retry_after is not None else {}
    return JSONResponse({"error": body}, status_code=status, headers=headers)
