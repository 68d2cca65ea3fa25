"""The AWS blog container's `POST /invocations` shape (sample-kokoro-tts-for-ai-agents), as a dialect.

Recognised by its fields: `voice`, `transport` or `request_timestamp`, and none of the session
protocol's own (`speaker_id`, `with_timestamps`, `max_length`, ...) nor Bulbul's.
`{"text", "voice"?, "speed"?, "format"?, "sample_rate"?, "stream"?, "transport"?, "request_id"?,
"request_timestamp"?}`, answered as their container answers it:
- default (`stream` true): the audio as a chunked byte stream, `audio/wav` (a 44-byte header
  with 0xFFFFFFFF sizes, then PCM16) or `audio/mpeg` (bare MP3 frames);
- `stream: false`: the whole file, with `X-Audio-Duration`, `X-Inference-Time-Ms`, `X-RTF`,
  `X-Characters-Processed`;
- `transport: "sse"`: `event: audio_stream_start | audio_chunk | audio_stream_end | error` frames;
- `request_timestamp` (epoch seconds) older than MAX_REQUEST_AGE_S: 408 `{"error": "request_stale"}`.
Errors are flat, `{"error": <token>, "message", "request_id", "retry_after"?}`, with the blog's
tokens (an overload is `queue_saturated`). Same admission, limits and engine as every path.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import AsyncIterator
from typing import Annotated, Literal

from pydantic import Field
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from ...session.events import AudioChunk, Status
from ...transport.http_synthesis import Synthesis, admit, audio_bytes, collect, refuse_unless_accepting, started
from ...transport.request_fields import MODEL_ID, Codec, VoiceFields
from ...transport.state import server_state
from ...wire.errors import CLIENT_MISTAKES, ProtocolError, as_protocol_error
from ...wire.fields import Text
from . import tokens
from .settings import BlogSettings

BLOG_FIELDS = frozenset({"voice", "transport", "request_timestamp"})
# The session protocol's own fields, which the blog's container never had: a body with one is
# ours. (Bulbul's names are Bulbul's: the registry asks that family first.)
CANONICAL_ONLY = frozenset({"model", "speaker_id", "with_timestamps", "max_length", "spk_ref_audio_tokens"})


def claims_body(raw: dict) -> bool:
    return bool(BLOG_FIELDS & raw.keys()) and not CANONICAL_ONLY & raw.keys()


class BlogRequest(VoiceFields):
    text: Text
    format: Codec = "wav"
    stream: bool = True  # their container streams unless told not to
    transport: Literal["binary", "sse"] = "binary"
    request_id: Annotated[str, Field(min_length=1, max_length=128)] | None = None
    request_timestamp: float | None = None  # epoch seconds when the client sent it


async def invoke(request: Request, raw: dict, rid: str) -> Response:
    try:
        return await _invoke(request, raw, rid)
    except ProtocolError as error:
        return blog_error_reply(error, rid)


def blog_error_reply(error: ProtocolError, rid: str) -> JSONResponse:
    body: dict = {"error": tokens.token(error), "message": error.message, "request_id": rid}
    headers = {}
    if error.retry_after is not None:
        body["retry_after"] = error.retry_after
        headers["Retry-After"] = str(error.retry_after)
    return JSONResponse(body, status_code=error.http_status, headers=headers)


async def _invoke(request: Request, raw: dict, rid: str) -> Response:
    state = server_state(request)
    received = time.perf_counter()
    tokens.refuse_if_stale(raw.get("request_timestamp"), state.family(BlogSettings).max_request_age_s)
    refuse_unless_accepting(state)
    try:
        fields = BlogRequest.model_validate(raw, context={MODEL_ID: state.settings.accepted_models})
        options = fields.session_options(state.runtime, raw, fields.format, names=tokens.VOICES)
        speech = options.request(fields.text, response_id=fields.request_id or rid)
    except CLIENT_MISTAKES as error:
        raise as_protocol_error(error) from None
    synthesis = await admit(state, speech)
    headers = {"X-Request-Id": speech.response_id, "X-Model": state.settings.model_id, "X-Voice": speech.voice.name}
    release = BackgroundTask(synthesis.close)  # the stream's end or the client leaving frees it at once
    media_type = speech.output.media_type
    if fields.transport == "sse":
        start = {"request_id": speech.response_id, "format": fields.format, "voice": speech.voice.name,
                 "sample_rate": speech.output.sample_rate}
        return StreamingResponse(_sse(synthesis, start), media_type="text/event-stream",
                                 headers=headers | {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
                                 background=release)
    if fields.stream:
        return StreamingResponse(audio_bytes(await started(synthesis)), media_type=media_type, headers=headers,
                                 background=release)
    audio, _, done = await collect(synthesis)
    elapsed = time.perf_counter() - received
    seconds = done.audio_ms / 1000
    return Response(audio, media_type=media_type, headers=headers | {
        "X-Audio-Duration": f"{seconds:.3f}",
        "X-Inference-Time-Ms": str(int(elapsed * 1000)),
        "X-RTF": f"{elapsed / seconds:.3f}" if seconds > 0 else "0",
        "X-Characters-Processed": str(len(fields.text)),
    })


def _frame(event: str, payload: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()


async def _sse(synthesis: Synthesis, start: dict) -> AsyncIterator[bytes]:
    """Start before inference (their clients build the decoder meanwhile), then the chunks, then
    the end; a failure is an in-band `error` event."""
    rid = start["request_id"]
    yield _frame("audio_stream_start", start)
    seq = 0
    async for event in synthesis.events():
        if isinstance(event, AudioChunk):
            if event.audio:
                yield _frame("audio_chunk", {"request_id": rid, "seq": seq, "data": base64.b64encode(event.audio).decode("ascii")})
                seq += 1
        elif event.status == Status.FAILED:
            yield _frame("error", {"request_id": rid, "message": f"internal error: synthesis failed ({rid})"})
        else:
            yield _frame("audio_stream_end", {"request_id": rid, "total_chunks": seq, "duration_s": round(event.audio_ms / 1000, 3)})
