"""POST /invocations (SPEC §5): one request, one response of the session engine, three ways back.

- default: `{"request_id", "audios": ["<base64>"], "timestamps"?}` once the audio is complete;
- streamed: the encoded audio as a chunked byte stream, each sentence's bytes as they exist;
- streamed with `Accept: text/event-stream`: SSE `data: {json}` events, one per audio
  chunk (base64, with alignments when asked), then a `response.done` event.
Streaming is chosen by the `stream` field when the body has one, else by the path (Bulbul's
`/text-to-speech/stream`), else by an `Accept` asking for audio: behind SageMaker the path is
always /invocations and InvokeEndpointWithResponseStream passes only its `Accept` on.
A body in the AWS blog container's shape is answered in that shape (blog_http.py).
The request is validated before admission, and admitted or shed (503) at once, never queued.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from dataclasses import asdict
from typing import Annotated

from pydantic import Field
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from ..protocol.compat import MODEL_ID, Codec, Text, VoiceFields
from ..protocol.errors import CLIENT_MISTAKES, ErrorCode, ProtocolError, as_protocol_error
from ..protocol.frames import FrameLimits, parse_json_object
from ..protocol.voice_defaults import BULBUL_SPEAKERS
from ..session.events import AudioChunk, ResponseDone
from . import blog_http
from .http_errors import request_id
from .synthesis import Synthesis, admit, audio_bytes, collect, failure_message, refuse_unless_accepting, started

JSON = "application/json"
SSE = "text/event-stream"
DRAIN_LIMIT = 16 << 20  # an oversized body is read (and dropped) up to here, so the 413 reaches the client


class InvocationRequest(VoiceFields):
    text: Text
    format: Codec = "wav"  # a base64 WAV plays as it is
    stream: bool = False
    with_timestamps: bool = False
    max_length: Annotated[int, Field(gt=0)] | None = None


def wants_audio(request: Request) -> bool:
    """An `Accept` naming an audio type (what a SageMaker client can set) asks for the byte stream."""
    return any(part.strip().lower().startswith("audio/") for part in request.headers.get("accept", "").split(","))


async def invocations(request: Request) -> Response:
    return await _invoke(request, stream_default=None)


async def bulbul_rest(request: Request) -> Response:
    """Bulbul's `POST /text-to-speech`: the real-time JSON reply."""
    return await _invoke(request, stream_default=False)


async def bulbul_stream(request: Request) -> Response:
    """Bulbul's `POST /text-to-speech/stream`: the audio as a byte stream."""
    return await _invoke(request, stream_default=True)


async def _invoke(request: Request, stream_default: bool | None) -> Response:
    state = request.app.state
    rid = request_id(request)
    raw = await read_json_body(request, state.settings.max_request_bytes, state.settings.max_json_depth)
    if stream_default is None and blog_http.is_blog_body(raw):
        return await blog_http.invoke(request, raw, rid)
    refuse_unless_accepting(state)
    try:
        fields = InvocationRequest.model_validate(raw, context={MODEL_ID: state.settings.accepted_models})
        options = fields.session_options(state.runtime.synthesizer, raw, fields.format, speakers=speaker_map(state.settings))
    except CLIENT_MISTAKES as error:
        raise as_protocol_error(error) from None
    stream = fields.stream if "stream" in raw else stream_default if stream_default is not None else wants_audio(request)
    speech = options.request(fields.text, response_id=rid, with_timestamps=fields.with_timestamps,
                             max_length_ms=fields.max_length)
    synthesis = await admit(state, speech)
    headers = {"X-Request-Id": rid, "X-Model": state.settings.model_id}  # what actually speaks, whatever `model` said
    if not stream:
        return await _whole(synthesis, state.runtime.codec, headers)
    # The stream's end, or the client leaving mid-stream, frees the synthesis at once.
    release = BackgroundTask(synthesis.close)
    if SSE in request.headers.get("accept", ""):
        events = _sse_events(await started(synthesis))
        return StreamingResponse(events, media_type=SSE, headers=headers | {"Cache-Control": "no-cache"},
                                 background=release)
    return StreamingResponse(audio_bytes(await started(synthesis)), media_type=speech.output.media_type,
                             headers=headers, background=release)


def speaker_map(settings) -> dict[str, str]:
    return BULBUL_SPEAKERS if settings.bulbul_speakers is None else settings.bulbul_speakers


async def read_json_body(request: Request, limit: int, max_depth: int = FrameLimits.max_depth) -> dict:
    """The body as a JSON object, or a ProtocolError: too large over `limit` bytes, invalid if not JSON."""
    body, size = bytearray(), 0
    async for chunk in request.stream():
        size += len(chunk)
        if size <= limit:
            body += chunk
        elif size > DRAIN_LIMIT:
            break
    if size > limit:
        message = f"body: the request body should be at most {limit} bytes (MAX_REQUEST_BYTES), got {size}"
        raise ProtocolError(ErrorCode.REQUEST_TOO_LARGE, message)
    media_type = request.headers.get("content-type", JSON).split(";")[0].strip().lower()
    if media_type != JSON and not media_type.endswith("+json"):
        raise ProtocolError.invalid(f"content-type: Input should be '{JSON}', got {media_type!r}")
    return parse_json_object(bytes(body), "body", max_depth)


async def _whole(synthesis: Synthesis, codec_pool, headers: dict[str, str]) -> Response:
    audio, alignments, _ = await collect(synthesis)
    timestamps = [asdict(a) for a in alignments] if synthesis.request.with_timestamps else None
    # Base64 and JSON of minutes of audio take a while: not on the event loop.
    body = await asyncio.get_running_loop().run_in_executor(
        codec_pool, _whole_body, synthesis.request.response_id, audio, timestamps
    )
    return Response(body, media_type=JSON, headers=headers)


def _whole_body(rid: str, audio: bytes, timestamps: list[dict] | None) -> bytes:
    body: dict = {"request_id": rid, "audios": [base64.b64encode(audio).decode("ascii")]}
    if timestamps is not None:
        body["timestamps"] = timestamps
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


async def _sse_events(events: AsyncIterator[AudioChunk | ResponseDone]) -> AsyncIterator[bytes]:
    async for event in events:
        if isinstance(event, AudioChunk):
            data: dict = {"type": "audio.chunk", "request_id": event.response_id, "sequence": event.sequence,
                          "audio": base64.b64encode(event.audio).decode("ascii")}
            if event.alignments is not None:
                data["alignments"] = [asdict(a) for a in event.alignments]
        else:
            data = {"type": "response.done", "request_id": event.response_id, "status": str(event.status),
                    "usage": {"characters": event.characters, "audio_ms": event.audio_ms}}
            if event.error:
                data["error"] = {"code": ErrorCode.INTERNAL, "message": failure_message(event.response_id)}
        yield b"data: " + json.dumps(data, ensure_ascii=False).encode("utf-8") + b"\n\n"
