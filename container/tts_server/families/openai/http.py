"""OpenAI's speech surface: `POST /v1/audio/speech`, `GET /v1/audio/voices`, `GET /v1/models`
and `/v1/audio/models` (what Open WebUI reads), and the same speech body on `/invocations`
(behind SageMaker the only path there is).

The audio is always chunked as it is synthesized (`stream_format: "audio"`), so a client that
reads the whole body gets one file and one that streams hears the first sentence first; or
SSE (`stream_format: "sse"`): `speech.audio.delta` events with base64 audio, then
`speech.audio.done` with the usage. `X-Voice` says which voice spoke.
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
from ...transport.http_errors import request_id
from ...transport.http_synthesis import admit, audio_bytes, refuse_unless_accepting, started
from ...transport.invocations import read_json_body
from ...transport.state import server_state
from ...wire.errors import CLIENT_MISTAKES, FieldError, ProtocolError, one_of
from .errors import openai_error_reply
from .fields import FORMATS, MODELS, NAMES, SAMPLE_RATE, VOICES, SpeechRequest

# Our negotiation's field names as OpenAI's clients know them.
PARAMS = {"text": "input", "speaker_id": "voice", "language": "lang_code", "format": "response_format",
          "sample_rate": "response_format", "speed": "speed"}


async def speech(request: Request) -> Response:
    try:
        raw = await read_json_body(request)
    except ProtocolError as error:
        return openai_error_reply(error)
    return await invoke(request, raw, request_id(request))


async def invoke(request: Request, raw: dict, rid: str) -> Response:
    state = server_state(request)
    try:
        refuse_unless_accepting(state)
        fields = SpeechRequest.model_validate(raw)
        accepted = _model_ids(request)
        if fields.model is not None and fields.model not in accepted:
            raise FieldError("model", one_of(accepted))
        speech = _negotiate(state.runtime, fields).request(fields.input, response_id=rid)
        synthesis = await admit(state, speech)
        events = await started(synthesis)
    except CLIENT_MISTAKES as error:
        return openai_error_reply(error)
    headers = {"X-Request-Id": rid, "X-Model": state.settings.model_id, "X-Voice": speech.voice.name}
    release = BackgroundTask(synthesis.close)  # the stream's end or the client leaving frees it at once
    if fields.stream_format == "sse":
        return StreamingResponse(_sse(events), media_type="text/event-stream", background=release,
                                 headers=headers | {"Cache-Control": "no-cache"})
    return StreamingResponse(audio_bytes(events), media_type=synthesis.request.output.media_type, headers=headers,
                             background=release)


def _negotiate(runtime, fields: SpeechRequest) -> SessionOptions:
    try:
        return SessionOptions.negotiate(runtime.synthesizer, language=fields.lang_code, speaker_id=fields.voice,
                                        format=FORMATS[fields.response_format], sample_rate=SAMPLE_RATE,
                                        speed=fields.speed, policy=runtime.voice_policy, names=NAMES, fields=PARAMS)
    except FieldError as error:
        extra = f"; OpenAI's voices: {', '.join(VOICES)}" if error.field == "voice" else ""
        raise FieldError(error.field, error.message + extra) from None


async def _sse(events: AsyncIterator[AudioChunk | ResponseDone]) -> AsyncIterator[bytes]:
    async for event in events:
        if isinstance(event, AudioChunk):
            if event.audio:
                data = {"type": "speech.audio.delta", "audio": base64.b64encode(event.audio).decode("ascii")}
                yield b"data: " + json.dumps(data).encode() + b"\n\n"
        elif event.status == Status.FAILED:
            error = {"type": "error", "error": {"message": f"synthesis failed ({event.response_id})",
                                                "type": "server_error", "code": "internal_error"}}
            yield b"data: " + json.dumps(error).encode() + b"\n\n"
        else:
            usage = {"input_tokens": event.characters, "output_tokens": 0, "total_tokens": event.characters}
            data = {"type": "speech.audio.done", "usage": usage, "audio_ms": event.audio_ms}
            yield b"data: " + json.dumps(data).encode() + b"\n\n"


async def voices(request: Request) -> JSONResponse:
    """Kokoro-FastAPI's list, in the `{"voices": [{"id", "name"}]}` shape Open WebUI reads, then
    OpenAI's names (each speaks as its mapped voice, or the closest one the engine has)."""
    state = server_state(request)
    runtime = state.runtime
    if not runtime.ready:
        return openai_error_reply(state.admission.model_loading())
    synthesizer = runtime.synthesizer
    ids = sorted({v for language in synthesizer.languages for v in synthesizer.voice_book(language).voice_ids})
    aliases = VOICES | runtime.voice_policy.aliases  # the operator's aliases stand over OpenAI's
    listed = [{"id": v, "name": v} for v in ids] + [{"id": a, "name": f"{a} ({aliases[a]})"} for a in aliases]
    return JSONResponse({"voices": listed})


def _model_ids(request: Request) -> list[str]:
    """The served model, its aliases, and OpenAI's ids (accepted on this surface only)."""
    return list(dict.fromkeys((*server_state(request).settings.accepted_models, *MODELS)))


async def models(request: Request) -> JSONResponse:
    """OpenAI's model list."""
    data = [{"id": m, "object": "model", "created": 0, "owned_by": "kokoro-streaming-tts"} for m in _model_ids(request)]
    return JSONResponse({"object": "list", "data": data})


async def audio_models(request: Request) -> JSONResponse:
    """Kokoro-FastAPI's `{"models": [{"id"}]}`, which Open WebUI reads."""
    return JSONResponse({"models": [{"id": m} for m in _model_ids(request)]})
