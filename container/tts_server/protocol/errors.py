"""Protocol error codes and pydantic-style messages that name the field and accepted values."""

from __future__ import annotations

from enum import StrEnum

from pydantic import ValidationError

from ..errors import FieldError


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


class ProtocolError(Exception):
    """A client mistake or server condition reported as an `error` event."""

    def __init__(self, code: ErrorCode, message: str, response_id: str | None = None, retry_after: int | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.response_id = response_id
        self.retry_after = retry_after

    @classmethod
    def invalid(cls, *lines: str, response_id: str | None = None) -> ProtocolError:
        return cls(ErrorCode.INVALID_REQUEST, validation_message(lines), response_id)

    @classmethod
    def from_validation(cls, error: ValidationError, response_id: str | None = None) -> ProtocolError:
        return cls.invalid(*describe_validation_error(error), response_id=response_id)

    @classmethod
    def from_field(cls, error: FieldError, response_id: str | None = None) -> ProtocolError:
        return cls.invalid(f"{error.field}: {error.message}", response_id=response_id)


def validation_message(lines) -> str:
    return "Validation Error(s):\n" + "\n".join(f"- {line}" for line in lines)


def describe_validation_error(error: ValidationError) -> list[str]:
    lines = []
    for item in error.errors(include_url=False):
        field = ".".join(str(part) for part in item["loc"]) or "body"
        lines.append(f"{field}: {item['msg']}")
    return lines
