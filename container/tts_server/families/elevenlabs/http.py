"""ElevenLabs' HTTP text-to-speech: `POST /v1/text-to-speech/{voice_id}` and `/stream` (the audio,
chunked as it is synthesized), `/with-timestamps` (one JSON: `audio_base64`, `alignment`,
`normalized_alignment`) and `/stream/with-timestamps` (one such JSON a line per chunk); query
`output_format` (default mp3_44100_128), body `text`, `model_id`, `language_code`,
`voice_settings.speed`. On /invocations (behind SageMaker the only path) the same body with
`voice_id` and `output_format` in it, and `with_timestamps: true` for the lines.
Errors: `{"detail": {"status": its token, "message"}}` with the HTTP status.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from ...session.events import AudioChunk, ResponseDone, Status
from ...session.options import SessionOptions
from ...session.request import ResponseRequest
from ...transport.http_errors import request_id
from ...transport.http_synthesis import admit, audio_bytes, collect, refuse_unless_accepting, started
from ...transport.invocations import JSON, read_json_body
from ...transport.state import server_state
from ...wire.errors import CLIENT_MISTAKES, ProtocolError, as_protocol_error
from .alignment import CharTimes, http_alignment
from .fields import DEFAULT_OUTPUT_FORMAT, FIELDS, VOICES, SpeechBody, check_model, output_spec, token

NDJSON = "application/x-ndjson"


def error_reply(error: ProtocolError, _rid: str = "") -> JSONResponse:
    headers = {"Retry-After": str(error.retry_after)} if error.retry_after is not None else {}
    return JSONResponse({"detail": {"status": token(error.code), "message": error.message}},
                        status_code=error.http_status, headers=headers)


async def convert(request: Request) -> Response:
    return await _own_path(request, timestamps=False)


async def with_timestamps(request: Request) -> Response:
    return await _own_path(request, timestamps=True, whole=True)


async def stream_with_timestamps(request: Request) -> Response:
    return await _own_path(request, timestamps=True)


async def invoke(request: Request, raw: dict, rid: str) -> Response:
    """The /invocations form: the voice and the format travel in the body."""
    return await _answer(request, raw, rid, raw.get("voice_id"), raw.get("output_format"), bool(raw.get("with_timestamps")))


async def _own_path(request: Request, timestamps: bool, whole: bool = False) -> Response:
    rid = request_id(request)
    try:
        raw = await read_json_body(request)
    except ProtocolError as error:
        return error_reply(error)
    return await _answer(request, raw, rid, request.path_params["voice_id"], request.query_params.get("output_format"),
                         timestamps, whole)


async def _answer(request: Request, raw: dict, rid: str, voice_id: str | None, output_format: str | None,
                  timestamps: bool, whole: bool = False) -> Response:
    state = server_state(request)
    try:
        refuse_unless_accepting(state)
        body = SpeechBody.model_validate(raw)
        check_model(body.model_id, state.settings.accepted_models)
        spec = output_spec(output_format or DEFAULT_OUTPUT_FORMAT)
        speed = body.voice_settings.speed if body.voice_settings else None
        options = SessionOptions.negotiate(state.runtime.synthesizer, policy=state.runtime.voice_policy, names=VOICES,
                                           language=body.language_code, speaker_id=voice_id, format=spec.format,
                                           sample_rate=spec.sample_rate, speed=speed or 1.0, fields=FIELDS)
        speech = options.request(body.text, response_id=rid, with_timestamps=timestamps)
        synthesis = await admit(state, speech)
        if whole:
            return await _whole(synthesis, speech)
        events = await started(synthesis)
    except CLIENT_MISTAKES as error:
        return error_reply(as_protocol_error(error))
    headers = {"request-id": rid, "X-Model": state.settings.model_id, "X-Voice": speech.voice.name}
    release = BackgroundTask(synthesis.close)  # the stream's end or the client leaving frees it at once
    if timestamps:
        return StreamingResponse(_lines(events, speech), media_type=NDJSON, headers=headers, background=release)
    return StreamingResponse(audio_bytes(events), media_type=speech.output.media_type, headers=headers,
                             background=release)


def _chunk_json(chars: CharTimes, chunk: AudioChunk) -> dict:
    alignment = http_alignment(*chars.chunk(chunk.alignments or [], chunk.start_ms, chunk.end_ms))
    return {"audio_base64": base64.b64encode(chunk.audio).decode("ascii"), "alignment": alignment,
            "normalized_alignment": alignment}


async def _lines(events: AsyncIterator[AudioChunk | ResponseDone], speech: ResponseRequest) -> AsyncIterator[bytes]:
    """One JSON a line per chunk; a failure mid-stream is a line of its error shape, then the end."""
    chars = CharTimes(speech.text)
    async for event in events:
        if isinstance(event, AudioChunk):
            yield json.dumps(_chunk_json(chars, event), ensure_ascii=False).encode() + b"\n"
        elif event.status == Status.FAILED:
            yield json.dumps({"detail": {"status": "internal_error", "message": "synthesis failed"}}).encode() + b"\n"


async def _whole(synthesis, speech: ResponseRequest) -> Response:
    chars = CharTimes(speech.text)
    audio, alignments, done = await collect(synthesis)
    merged = _chunk_json(chars, AudioChunk(speech.response_id, 0, audio, alignments, 0, done.audio_ms))
    return JSONResponse(merged, media_type=JSON, headers={"request-id": speech.response_id})
