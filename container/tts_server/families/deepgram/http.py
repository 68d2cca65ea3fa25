"""Deepgram Aura's REST text-to-speech: `POST /v1/speak?model=...&encoding=...&sample_rate=...`
with `{"text"}`, the audio streamed back as it is synthesized (linear16 in a WAV container unless
`container=none`; default encoding mp3, as Deepgram's). On /invocations (behind SageMaker the
only path) the same body with the query's fields in it (`model`, `encoding`, ...).
Errors: `{"err_code", "err_msg", "request_id"}` with the HTTP status (a bad query:
INVALID_QUERY_PARAMETER, 400).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from ...session.options import SessionOptions
from ...transport.http_errors import request_id
from ...transport.http_synthesis import admit, audio_bytes, refuse_unless_accepting, started
from ...transport.invocations import read_json_body
from ...transport.state import server_state
from ...wire.errors import CLIENT_MISTAKES, ProtocolError, as_protocol_error
from ...wire.fields import Text
from .fields import FIELDS, INVALID_QUERY, VOICES, Query, model_language, output_spec, token

QUERY_FIELDS = frozenset(Query.model_fields)
DEFAULT_ENCODING = "mp3"  # over HTTP, Deepgram's default (its socket's is linear16)


class SpeakBody(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    text: Text


def claims_body(raw: dict) -> bool:
    """Its body on /invocations: `text` with an Aura `model` or an `encoding` (no other family's)."""
    model = raw.get("model")
    return "text" in raw and ("encoding" in raw or (isinstance(model, str) and model.lower().startswith("aura")))


def error_reply(error: ProtocolError, rid: str = "", code: str | None = None) -> JSONResponse:
    headers = {"Retry-After": str(error.retry_after)} if error.retry_after is not None else {}
    return JSONResponse({"err_code": code or token(error.code), "err_msg": error.message, "request_id": rid},
                        status_code=error.http_status, headers=headers | {"dg-request-id": rid})


async def speak(request: Request) -> Response:
    rid = request_id(request)
    try:
        raw = await read_json_body(request)
    except ProtocolError as error:
        return error_reply(error, rid)
    return await _answer(request, raw, dict(request.query_params), rid)


async def invoke(request: Request, raw: dict, rid: str) -> Response:
    """The /invocations form: the query's fields travel in the body."""
    return await _answer(request, raw, {k: v for k, v in raw.items() if k in QUERY_FIELDS}, rid)


async def _answer(request: Request, raw: dict, query: dict, rid: str) -> Response:
    state = server_state(request)
    try:
        refuse_unless_accepting(state)
        try:
            asked = Query.model_validate({"encoding": DEFAULT_ENCODING} | query)
            spec = output_spec(asked, http=True)
            options = SessionOptions.negotiate(
                state.runtime.synthesizer, policy=state.runtime.voice_policy, names=VOICES, fields=FIELDS,
                language=model_language(asked.model, state.runtime.synthesizer.languages), speaker_id=asked.model,
                format=spec.format, sample_rate=spec.sample_rate, speed=asked.speed or 1.0)
        except CLIENT_MISTAKES as error:
            return error_reply(as_protocol_error(error), rid, INVALID_QUERY)
        speech = options.request(SpeakBody.model_validate(raw).text, response_id=rid)
        synthesis = await admit(state, speech)
        events = await started(synthesis)
    except CLIENT_MISTAKES as error:
        return error_reply(as_protocol_error(error), rid)
    headers = {"dg-request-id": rid, "dg-model-name": asked.model, "X-Model": state.settings.model_id,
               "X-Voice": speech.voice.name}
    return StreamingResponse(audio_bytes(events), media_type=speech.output.media_type, headers=headers,
                             background=BackgroundTask(synthesis.close))  # the stream's end or the client leaving frees it
