"""The AWS blog sample's names for our errors (sample-kokoro-tts-for-ai-agents, packages/tts-client).

Its client types errors by tokens in the message of a WebSocket `error` frame (`queue_saturated`,
`queue_full`, `request_stale`, `too_many_requests`) and by the HTTP status behind SageMaker's 424
(408 stale, 429 throttled, 503 saturated). Its container answers a stale request with 408
`{"error": "request_stale"}`. Its clients default to the voice `af_heart`.
"""

from __future__ import annotations

import time

from ...engine.voice_policy import VoiceNames
from ...wire.errors import ErrorCode, ProtocolError
from .settings import BlogSettings

REQUEST_STALE = "request_stale"
DEFAULT_VOICE = "af_heart"  # speaks for English where the engine has it; else the language's woman-1
VOICES = VoiceNames(default=DEFAULT_VOICE)
TOKENS: dict[ErrorCode, str] = {
    ErrorCode.SERVICE_OVERLOADED: "queue_saturated",
    ErrorCode.MODEL_LOADING: "queue_saturated",  # refused for now, retry: what their client retries
    ErrorCode.TOO_MANY_QUEUED: "queue_full",
    ErrorCode.REQUEST_STALE: REQUEST_STALE,
}


def token(error: ProtocolError) -> str:
    """The blog's name for this error where it has one, else our code."""
    return TOKENS.get(error.code, str(error.code))


def message(error: ProtocolError) -> str:
    """The message with the blog's token in front, where their client looks for it."""
    name = TOKENS.get(error.code)
    return f"{name}: {error.message}" if name else error.message


def refuse_if_stale(stamp, max_age_s: float) -> None:
    """A `request_timestamp` (epoch seconds) older than MAX_REQUEST_AGE_S: `request_stale`, which
    their client types (HTTP 408 on /invocations, the token in the message on the socket)."""
    if isinstance(stamp, int | float) and not isinstance(stamp, bool) and time.time() - stamp > max_age_s:
        raise ProtocolError(ErrorCode.REQUEST_STALE, f"request_timestamp: older than {max_age_s:g} s "
                            f"({BlogSettings.variable('max_request_age_s')})")
