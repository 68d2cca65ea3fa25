"""Errors every surface reports: codes, pydantic-style messages naming the field and the accepted
values, and the HTTP status each code stands for. Wire-neutral: each client family renders them."""

from __future__ import annotations

from enum import StrEnum

from pydantic import ValidationError


class FieldError(ValueError):
    """A request field holds a value the server cannot serve; message names accepted values."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def one_of(values) -> str:
    """Pydantic's wording for a choice: "Input should be 'a', 'b' or 'c'"."""
    quoted = [repr(v) if isinstance(v, str) else str(v) for v in values]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f"Input should be {listed}"


class ErrorCode(StrEnum):
    INVALID_REQUEST = "invalid_request_error"
    UNKNOWN_EVENT_TYPE = "unknown_event_type"
    DUPLICATE_RESPONSE_ID = "duplicate_response_id"
    RESPONSE_NOT_FOUND = "response_not_found"
    TOO_MANY_QUEUED = "too_many_queued_responses"
    SESSION_NOT_OPEN = "session_not_open"
    SERVICE_OVERLOADED = "service_overloaded"
    MODEL_LOADING = "model_loading"
    INTERNAL = "internal_error"
    REQUEST_TOO_LARGE = "request_too_large"
    REQUEST_STALE = "request_stale"
    UNAUTHORIZED = "unauthorized"
    IDLE_TIMEOUT = "session_idle_timeout"
    SESSION_EXPIRED = "session_lifetime_exceeded"
    SHUTTING_DOWN = "server_shutting_down"


# What each code means, for the errors reference (docs/errors.md, scripts/error_codes_table.py).
MEANINGS: dict[ErrorCode, str] = {
    ErrorCode.INVALID_REQUEST: "a field holds a value the server cannot serve; the message names the field "
                               "and the accepted values",
    ErrorCode.UNKNOWN_EVENT_TYPE: "a client event of a type the protocol does not have",
    ErrorCode.DUPLICATE_RESPONSE_ID: "a response_id that is still outstanding in this session",
    ErrorCode.RESPONSE_NOT_FOUND: "a cancel of a response_id that is not outstanding",
    ErrorCode.TOO_MANY_QUEUED: "more responses queued than WS_MAX_PENDING_RESPONSES; this one is not queued",
    ErrorCode.SESSION_NOT_OPEN: "anything but a valid open as a session's first event (fatal)",
    ErrorCode.SERVICE_OVERLOADED: "at capacity or stopping: retry after retry_after seconds",
    ErrorCode.MODEL_LOADING: "the model is still loading: retry after retry_after seconds",
    ErrorCode.INTERNAL: "a server fault, logged with the session and response ids",
    ErrorCode.REQUEST_TOO_LARGE: "a body or frame over its size limit (MAX_REQUEST_BYTES, WS_MAX_FRAME_BYTES)",
    ErrorCode.REQUEST_STALE: "older than MAX_REQUEST_AGE_S when it arrived (the blog's request_timestamp)",
    ErrorCode.UNAUTHORIZED: "API_KEYS is set on the local server and the request carried none of them (in its "
                            "family's own key field or Authorization: Bearer)",
    # The server ends a session (SPEC §10): each is announced, then the socket closes.
    ErrorCode.IDLE_TIMEOUT: "no client event and nothing spoken for SESSION_IDLE_TIMEOUT_S: the session ends",
    ErrorCode.SESSION_EXPIRED: "the session outlived SESSION_MAX_LIFETIME_S: it ends",
    ErrorCode.SHUTTING_DOWN: "the server stops (SIGTERM) once the active response is done: the session ends",
}


# The HTTP status each code stands for: POST /invocations answers with it, and Bulbul's
# error events carry it as their `code`.
HTTP_STATUS: dict[ErrorCode, int] = {
    ErrorCode.INVALID_REQUEST: 400,
    ErrorCode.UNKNOWN_EVENT_TYPE: 400,
    ErrorCode.DUPLICATE_RESPONSE_ID: 409,
    ErrorCode.RESPONSE_NOT_FOUND: 404,
    ErrorCode.TOO_MANY_QUEUED: 429,
    ErrorCode.SESSION_NOT_OPEN: 400,
    ErrorCode.SERVICE_OVERLOADED: 503,
    ErrorCode.MODEL_LOADING: 503,
    ErrorCode.INTERNAL: 500,
    ErrorCode.REQUEST_TOO_LARGE: 413,
    ErrorCode.REQUEST_STALE: 408,
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.IDLE_TIMEOUT: 408,
    ErrorCode.SESSION_EXPIRED: 408,
    ErrorCode.SHUTTING_DOWN: 503,
}


class ProtocolError(Exception):
    """A client mistake or server condition reported as an `error` event."""

    def __init__(self, code: ErrorCode, message: str, response_id: str | None = None, retry_after: int | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.response_id = response_id
        self.retry_after = retry_after

    @property
    def http_status(self) -> int:
        return HTTP_STATUS[self.code]

    @classmethod
    def invalid(cls, *lines: str, response_id: str | None = None) -> ProtocolError:
        return cls(ErrorCode.INVALID_REQUEST, validation_message(lines), response_id)

    @classmethod
    def from_validation(cls, error: ValidationError, response_id: str | None = None) -> ProtocolError:
        return cls.invalid(*describe_validation_error(error), response_id=response_id)

    @classmethod
    def from_field(cls, error: FieldError, response_id: str | None = None) -> ProtocolError:
        return cls.invalid(f"{error.field}: {error.message}", response_id=response_id)


def as_protocol_error(error: ValidationError | FieldError | ProtocolError, response_id: str | None = None) -> ProtocolError:
    """Any client mistake as a ProtocolError, tagged with the response it concerns."""
    if isinstance(error, ProtocolError):
        if response_id and error.response_id is None:
            error.response_id = response_id
        return error
    if isinstance(error, ValidationError):
        return ProtocolError.from_validation(error, response_id)
    return ProtocolError.from_field(error, response_id)


CLIENT_MISTAKES = (ValidationError, FieldError, ProtocolError)  # what a dialect reports and goes on


def validation_message(lines) -> str:
    return "Validation Error(s):\n" + "\n".join(f"- {line}" for line in lines)


def describe_validation_error(error: ValidationError) -> list[str]:
    lines = []
    for item in error.errors(include_url=False):
        field = ".".join(str(part) for part in item["loc"]) or "body"
        lines.append(f"{field}: {item['msg']}")
    return lines
