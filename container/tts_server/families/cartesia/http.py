"""Cartesia's HTTP text-to-speech: `POST /tts/bytes` (the audio, chunked as it is synthesized;
`output_format` raw, wav or mp3) and `POST /tts/sse` (server-sent events: `chunk`, `timestamps`
with `add_timestamps`, then `done`; raw formats). On /invocations (behind SageMaker the only
path) the same body, recognised by its `transcript`: the events with `Accept: text/event-stream`
(which its SDK's `generate_sse` sends), else the bytes.
Errors: `{"error_code", "title", "message", "status_code", "request_id"}` with the HTTP status.
"""

from __future__ import annotations

import json
from base64 import b64encode
from collections.abc import AsyncIterator

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from ...session.events import AudioChunk, ResponseDone, Status
from ...session.options import SessionOptions
from ...transport.http_errors import request_id
from ...transport.http_synthesis import admit, audio_bytes, refuse_unless_accepting, started
from ...transport.invocations import read_json_body
from ...transport.state import server_state
from ...wire.errors import CLIENT_MISTAKES, ErrorCode, ProtocolError, as_protocol_error
from .fields import CONTAINERS, FIELDS, SOCKET_CONTAINERS, VOICES, SpeechBody, check_model, error_body
from .timestamps import WordTimes

SSE = "text/event-stream"


def error_reply(error: ProtocolError, rid: str = "") -> JSONResponse:
    headers = {"Retry-After": str(error.retry_after)} if error.retry_after is not None else {}
    return JSONResponse(error_body(error.code, error.message, error.http_status, rid), status_code=error.http_status,
                        headers=headers)


async def tts_bytes(request: Request) -> Response:
    return await _own_path(request, sse=False)


async def tts_sse(request: Request) -> Response:
    return await _own_path(request, sse=True)


async def invoke(request: Request, raw: dict, rid: str) -> Response:
    """The /invocations form: the events when the caller accepts them, else the bytes."""
    return await _answer(request, raw, rid, sse=SSE in request.headers.get("accept", ""))


async def _own_path(request: Request, sse: bool) -> Response:
    rid = request_id(request)
    try:
        raw = await read_json_body(request)
    except ProtocolError as error:
        return error_reply(error, rid)
    return await _answer(request, raw, rid, sse)


async def _answer(request: Request, raw: dict, rid: str, sse: bool) -> Response:
    state = server_state(request)
    try:
        refuse_unless_accepting(state)
        body = SpeechBody.model_validate(raw)
        check_model(body.model_id, state.settings.accepted_models)
        spec = body.output_format.spec(SOCKET_CONTAINERS if sse else tuple(CONTAINERS))
        options = SessionOptions.negotiate(state.runtime.synthesizer, policy=state.runtime.voice_policy, names=VOICES,
                                           language=body.language, speaker_id=body.voice.id, format=spec.format,
                                           sample_rate=spec.sample_rate, speed=body.speed_factor or 1.0, fields=FIELDS)
        speech = options.request(body.transcript, response_id=rid, with_timestamps=sse and body.add_timestamps)
        synthesis = await admit(state, speech)
        events = await started(synthesis)
    except CLIENT_MISTAKES as error:
        return error_reply(as_protocol_error(error), rid)
    headers = {"X-Request-Id": rid, "X-Model": state.settings.model_id, "X-Voice": speech.voice.name}
    release = BackgroundTask(synthesis.close)  # the stream's end or the client leaving frees it at once
    if sse:
        return StreamingResponse(_events(events, WordTimes(speech.text), body.context_id, rid), media_type=SSE,
                                 headers=headers | {"Cache-Control": "no-cache"}, background=release)
    return StreamingResponse(audio_bytes(events), media_type=speech.output.media_type, headers=headers,
                             background=release)


async def _events(events: AsyncIterator[AudioChunk | ResponseDone], words: WordTimes, context_id: str | None,
                  rid: str) -> AsyncIterator[bytes]:
    """Its SSE: `event: <type>` and `data: {json}` per event; a failure mid-stream is an `error` event."""
    tag = {"context_id": context_id} if context_id else {}
    async for event in events:
        if isinstance(event, AudioChunk):
            yield _event({"type": "chunk", "data": b64encode(event.audio).decode("ascii"), "done": False,
                          "status_code": 200} | tag)
            timed = words.chunk(event.alignments, 0) if event.alignments else None
            if timed:
                yield _event({"type": "timestamps", "word_timestamps": timed, "done": False, "status_code": 200} | tag)
        elif event.status == Status.FAILED:
            failure = event.error or ProtocolError(ErrorCode.INTERNAL, "synthesis failed; the request was not completed")
            yield _event({"type": "error", "done": True, **error_body(failure.code, failure.message,
                                                                      failure.http_status, rid)} | tag)
        else:
            yield _event({"type": "done", "done": True, "status_code": 200} | tag)


def _event(data: dict) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()
