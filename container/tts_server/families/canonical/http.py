"""The canonical `POST /invocations` (SPEC §5): one request, one response of the session engine,
three ways back.

- default: `{"request_id", "audios": ["<base64>"], "timestamps"?}` once the audio is complete;
- streamed: the encoded audio as a chunked byte stream, each sentence's bytes as they exist;
- streamed with `Accept: text/event-stream`: SSE `data: {json}` events, one per audio
  chunk (base64, with alignments when asked), then a `response.done` event.
Streaming is chosen by the `stream` field when the body has one, else by the caller's default
(Bulbul's `/text-to-speech/stream` path), else by an `Accept` asking for audio: behind SageMaker
the path is always /invocations and InvokeEndpointWithResponseStream passes only its `Accept` on.
The request is validated before admission, and admitted or shed (503) at once, never queued.
Other families whose replies have this shape (Bulbul's REST) answer through `answer`.
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

from ...engine.voice_policy import NO_NAMES, VoiceNames
from ...session.events import AudioChunk, ResponseDone
from ...transport.http_synthesis import (Synthesis, admit, audio_bytes, collect, failure_message,
                                         refuse_unless_accepting, started)
from ...transport.invocations import JSON
from ...transport.request_fields import MODEL_ID, Codec, VoiceFields
from ...transport.state import server_state
from ...wire.errors import CLIENT_MISTAKES, ErrorCode, as_protocol_error
from ...wire.fields import Text

SSE = "text/event-stream"


class InvocationRequest(VoiceFields):
    text: Text
    format: Codec = "wav"  # a base64 WAV plays as it is
    stream: bool = False
    with_timestamps: bool = False
    max_length: Annotated[int, Field(gt=0)] | None = None


def wants_audio(request: Request) -> bool:
    """An `Accept` naming an audio type (what a SageMaker client can set) asks for the byte stream."""
    return any(part.strip().lower().startswith("audio/") for part in request.headers.get("accept", "").split(","))


async def invoke(request: Request, raw: dict, rid: str) -> Response:
    return await answer(request, raw, rid, InvocationRequest)


async def answer(request: Request, raw: dict, rid: str, model: type[InvocationRequest],
                 stream_default: bool | None = None, names: VoiceNames = NO_NAMES) -> Response:
    """Validate `raw` as `model` (a family's spelling of these fields, its voice `names`), synthesize, reply."""
    state = server_state(request)
    refuse_unless_accepting(state)
    try:
        fields = model.model_validate(raw, context={MODEL_ID: state.settings.accepted_models})
        options = fields.session_options(state.runtime, raw, fields.format, names=names)
        speech = options.request(fields.text, response_id=rid, with_timestamps=fields.with_timestamps,
                                 max_length_ms=fields.max_length)
    except CLIENT_MISTAKES as error:
        raise as_protocol_error(error) from None
    stream = fields.stream if "stream" in raw else stream_default if stream_default is not None else wants_audio(request)
    synthesis = await admit(state, speech)
    # What actually speaks, whatever `model` and the voice asked for.
    headers = {"X-Request-Id": rid, "X-Model": state.settings.model_id, "X-Voice": speech.voice.name}
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
