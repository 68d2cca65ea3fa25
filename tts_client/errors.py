"""One error type for HTTP callers, whichever way the request went.

Directly, the container answers `{"error": {"message", "code", "request_id", ...}}` with
its status. Through SageMaker, any non-2xx from the container becomes a 424 ModelError
whose body carries `OriginalStatusCode` and `OriginalMessage` (the container's body);
`service_error()` unwraps that back into the container's own status and envelope.
"""

from __future__ import annotations

import json
from typing import Any

MODEL_ERROR_STATUS = 424


class ServiceError(Exception):
    def __init__(self, status: int, code: str, message: str, request_id: str | None = None,
                 retry_after: float | None = None, body: bytes = b"", via_model_error: bool = False):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        self.retry_after = retry_after
        self.body = body
        self.via_model_error = via_model_error  # it arrived wrapped in SageMaker's 424


def service_error(status: int, body: bytes | str, headers: dict[str, str] | None = None) -> ServiceError:
    """The container's error from a reply: direct, or a SageMaker 424 ModelError around it."""
    raw = body.encode("utf-8") if isinstance(body, str) else body
    parsed = _json(raw)
    if status == MODEL_ERROR_STATUS and isinstance(parsed, dict) and "OriginalStatusCode" in parsed:
        original = parsed.get("OriginalMessage") or ""
        error = service_error(int(parsed["OriginalStatusCode"]), original, headers)
        error.via_model_error = True
        return error
    return _from_envelope(status, raw, parsed, headers or {})


def from_model_error(fields: dict[str, Any]) -> ServiceError:
    """From botocore's parsed ModelError (ClientError.response) or the SDK's ModelError fields."""
    status = fields.get("OriginalStatusCode") or MODEL_ERROR_STATUS
    error = service_error(int(status), fields.get("OriginalMessage") or fields.get("Message") or "")
    error.via_model_error = True
    return error


def _from_envelope(status: int, raw: bytes, parsed: Any, headers: dict[str, str]) -> ServiceError:
    envelope = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(envelope, dict):
        retry_after = envelope.get("retry_after")
    else:
        text = raw.decode("utf-8", "replace").strip()
        envelope = {"code": f"http_{status}", "message": text[:500] or f"HTTP {status}"}
        retry_after = None
    header = {k.lower(): v for k, v in headers.items()}.get("retry-after")
    if retry_after is None and header:
        retry_after = float(header)
    return ServiceError(status, str(envelope.get("code", f"http_{status}")), str(envelope.get("message", "")),
                        envelope.get("request_id"), retry_after, raw)


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None
