"""POST /invocations (SPEC §5): one request, one response of the session engine, three ways back.

- default: `{"request_id", "audios": ["<base64>"], "timestamps"?}` once the audio is complete;
- `stream: true`: the encoded audio as a chunked byte stream, each sentence's bytes as they exist;
- `stream: true` with `Accept: text/event-stream`: SSE `data: {json}` events, one per audio
  chunk (base64, with alignments when asked), then a `response.done` event.
The request is validated before admission, and admitted or shed (503) at once, never queued.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import asdict
from typing import Annotated

from pydantic import Field
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from ..audio.encoders import WavEncoder
from ..protocol.compat import MODEL_ID, Codec, Text, VoiceFields
from ..protocol.errors import CLIENT_MISTAKES, ErrorCode, ProtocolError, as_protocol_error
from ..protocol.frames import FrameLimits, parse_json_object
from ..session.events import AudioChunk, ResponseDone, Status
from .http_errors import request_id
from .synthesis import Synthesis

JSON = "application/json"
SSE = "text/event-stream"
DRAIN_LIMIT = 16 << 20  # an oversized body is read (and dropped) up to here, so the 413 reaches the client


class InvocationRequest(VoiceFields):
    text: Text
    format: Codec = "wav"  # a base64 WAV plays as it is
    stream: bool = False
    with_timestamps: bool = False
    max_length: Annotated[int, Field(gt=0)] | None = None


class ResponseFailed(Exception):
    """Synthesis failed after audio had left: the stream is cut, never ended as if complete."""


async def invocations(request: Request) -> Response:
    state = request.app.state
    rid = request_id(request)
    raw = await read_json_body(request, state.settings.max_request_bytes, state.settings.max_json_depth)
    if not state.runtime.ready:
        raise state.admission.model_loading()
    if state.lifecycle.stopping.is_set():  # SIGTERM: new work gets the overload answer
        raise state.admission.overloaded()
    try:
        fields = InvocationRequest.model_validate(raw, context={MODEL_ID: state.settings.model_id})
        options = fields.session_options(state.runtime.synthesizer, raw, fields.format)
    except CLIENT_MISTAKES as error:
        raise as_protocol_error(error) from None
    speech = options.request(fields.text, response_id=rid, with_timestamps=fields.with_timestamps,
                             max_length_ms=fields.max_length)
    slot = state.admission.syntheses.try_take()
    if slot is None:
        raise state.admission.overloaded()
    synthesis = Synthesis(state.runtime, speech, slot, state.settings.stream_buffer_bytes)
    await synthesis.start()  # on failure it has released the slot
    if not fields.stream:
        return await _whole(synthesis, state.runtime.codec)
    headers = {"X-Request-Id": rid}
    # The stream's end, or the client leaving mid-stream, frees the synthesis at once.
    release = BackgroundTask(synthesis.close)
    if SSE in request.headers.get("accept", ""):
        events = _sse_events(await _started(synthesis))
        return StreamingResponse(events, media_type=SSE, headers=headers | {"Cache-Control": "no-cache"},
                                 background=release)
    return StreamingResponse(_audio_bytes(await _started(synthesis)), media_type=speech.output.media_type,
                             headers=headers, background=release)


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


async def _whole(synthesis: Synthesis, codec_pool) -> Response:
    audio, alignments, done = bytearray(), [], None
    async with contextlib.aclosing(synthesis.events()) as events:
        async for event in events:
            if isinstance(event, AudioChunk):
                audio += event.audio
                alignments += event.alignments or []
            else:
                done = event
    _raise_if_failed(done)
    if synthesis.request.output.format == "wav":
        audio = WavEncoder.with_sizes(bytes(audio))  # whole now, so a player needs no streaming support
    timestamps = [asdict(a) for a in alignments] if synthesis.request.with_timestamps else None
    # Base64 and JSON of minutes of audio take a while: not on the event loop.
    body = await asyncio.get_running_loop().run_in_executor(
        codec_pool, _whole_body, synthesis.request.response_id, bytes(audio), timestamps
    )
    return Response(body, media_type=JSON)


def _whole_body(rid: str, audio: bytes, timestamps: list[dict] | None) -> bytes:
    body: dict = {"request_id": rid, "audios": [base64.b64encode(audio).decode("ascii")]}
    if timestamps is not None:
        body["timestamps"] = timestamps
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


async def _started(synthesis: Synthesis) -> AsyncIterator[AudioChunk | ResponseDone]:
    """The events, once the first is in: a failure before any audio is still a 500 reply."""
    events = synthesis.events()
    first = await anext(events)
    if isinstance(first, ResponseDone):
        await events.aclose()
        _raise_if_failed(first)

    async def replay():
        yield first
        async for event in events:
            yield event

    return replay()


async def _audio_bytes(events: AsyncIterator[AudioChunk | ResponseDone]) -> AsyncIterator[bytes]:
    async for event in events:
        if isinstance(event, AudioChunk):
            yield event.audio
        elif event.status == Status.FAILED:
            raise ResponseFailed(f"response {event.response_id} failed mid-stream")


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
                data["error"] = {"code": ErrorCode.INTERNAL, "message": _failure_message(event.response_id)}
        yield b"data: " + json.dumps(data, ensure_ascii=False).encode("utf-8") + b"\n\n"


def _raise_if_failed(done: ResponseDone | None) -> None:
    if done is None or done.status == Status.FAILED:
        rid = done.response_id if done else "?"
        raise ProtocolError(ErrorCode.INTERNAL, _failure_message(rid))


def _failure_message(rid: str) -> str:
    return f"internal error: synthesis failed; the request was not completed ({rid})"

