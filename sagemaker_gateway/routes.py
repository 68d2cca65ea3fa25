"""What the gateway serves, and SageMaker's error shapes."""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

BIDI = re.compile(r"^/endpoints/(?P<name>[^/?]+)/invocations-bidirectional-stream(?:\?.*)?$")
INVOKE = re.compile(r"^/endpoints/(?P<name>[^/?]+)/invocations(?P<stream>-response-stream)?(?:\?.*)?$")
EVENT_STREAM = "application/vnd.amazon.eventstream"
DEFAULT_BIDI_PATH = "invocations-bidirectional-stream"
SIGV4 = "AWS4-HMAC-SHA256 Credential="


def is_signed(headers: dict[str, str]) -> bool:
    return headers.get("authorization", "").startswith(SIGV4)


def websocket_url(upstream: str, headers: dict[str, str]) -> str:
    """The container's WebSocket URL: the invocation path and query string the client asked for."""
    base = urlsplit(upstream)
    scheme = "wss" if base.scheme == "https" else "ws"
    path = headers.get("x-amzn-sagemaker-model-invocation-path") or DEFAULT_BIDI_PATH
    query = headers.get("x-amzn-sagemaker-model-query-string")
    return f"{scheme}://{base.netloc}/{path.lstrip('/')}" + (f"?{query}" if query else "")


def model_error(status: int, body: bytes, endpoint: str) -> tuple[int, list[tuple[str, str]], bytes]:
    """SageMaker's 424 for a container's non-2xx reply, carrying the original status and body."""
    original = body.decode("utf-8", "replace")
    kind = "client" if status < 500 else "server"
    log_stream = f"arn:aws:logs:local:000000000000:log-group:/aws/sagemaker/Endpoints/{endpoint}"
    payload = {
        "ErrorCode": f"{kind.upper()}_ERROR_FROM_MODEL",
        "Message": f"Received {kind} error ({status}) from primary with message \"{original}\". "
                   f"See {log_stream} for more information.",
        "OriginalStatusCode": status,
        "OriginalMessage": original,
        "LogStreamArn": log_stream,
    }
    headers = [("content-type", "application/json"), ("x-amzn-errortype", "ModelError:http://internal.amazon.com/coral/com.amazon.sagemaker/")]
    return 424, headers, json.dumps(payload).encode()


def service_error(status: int, error_type: str, message: str) -> tuple[int, list[tuple[str, str]], bytes]:
    """An error of the front door itself (bad route, unsigned request), in SageMaker's shape."""
    return status, [("content-type", "application/json"), ("x-amzn-errortype", error_type)], json.dumps({"message": message}).encode()
