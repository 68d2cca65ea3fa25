"""ElevenLabs' text-to-speech sockets, on the one session engine: `stream-input` (one stream of
text) and `multi-stream-input` (contexts, by `context_id`).

Opening: the voice in the path (`/v1/text-to-speech/{voice_id}/...`; on the shared socket, query
`voice_id`), query `model_id`, `output_format` (default mp3_44100_128), `language_code`,
`auto_mode`; the rest of its query (`inactivity_timeout`, `sync_alignment`, ...) is accepted and
ignored. The first message of a context is `{"text": " ", "voice_settings"?, ...}`; then text
(`{"text": "Hello world. ", "flush"?, "try_trigger_generation"?}`): each sentence leaves as it
completes (transport/incremental.py), `flush` sends the rest; with `auto_mode=true` each message
is spoken as it comes (its clients then send whole sentences).
- stream-input: `{"text": ""}` ends the stream: everything sent is spoken, then `{"isFinal": true}`
  and close 1000. `{"text": " "}` keeps it alive.
- multi-stream-input: `{"context_id", "text": ""}` keeps a context alive; `{"context_id", "flush":
  true}` flushes it; `{"context_id", "close_context": true}` ends it: what was flushed before is
  still spoken, anything else is cancelled at once (a barge-in; so is everything of a context
  closed a second time), then `{"isFinal": true, "contextId"}`; `{"close_socket": true}` flushes
  every context, ends each, closes 1000.
Replies: `{"audio": base64, "alignment", "normalizedAlignment", "contextId"?}` (character times,
alignment.py), `isFinal` as above, errors `{"message", "error": its token, "code"}` (`code`: the
close code that follows a fatal one, else the HTTP status it stands for); a bad message is
reported and the session goes on.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict
from starlette import status

from ...session.events import AudioChunk, ResponseDone, SessionEvent, Status
from ...session.options import SessionOptions
from ...transport.dialect import Dialect, SessionContext
from ...transport.incremental import IncrementalText
from ...wire.errors import CLIENT_MISTAKES, ErrorCode, ProtocolError, as_protocol_error
from .alignment import CharTimes, socket_alignment
from .fields import FIELDS, Query, VoiceSettings, check_model, output_spec, token

MULTI_PATH = "/multi-stream-input"
# Fatal errors close with this code after the error message (a bad opening).
FATAL_CLOSE = {ErrorCode.SERVICE_OVERLOADED: status.WS_1013_TRY_AGAIN_LATER,
               ErrorCode.MODEL_LOADING: status.WS_1013_TRY_AGAIN_LATER, ErrorCode.INTERNAL: status.WS_1011_INTERNAL_ERROR}


class Message(BaseModel):
    """Any client message of either socket (each field optional)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    text: str | None = None
    context_id: str | None = None
    flush: bool = False
    close_context: bool = False
    close_socket: bool = False
    voice_settings: VoiceSettings | None = None


@dataclass
class Context:
    """One stream of text: its sentences so far, its responses still outstanding, how it ends."""

    id: str | None
    text: IncrementalText
    speed: float | None = None
    outstanding: list[str] = field(default_factory=list)
    flushed: bool = False  # a flush came after its last text: closing it lets that finish
    ending: bool = False  # closed: isFinal once nothing is outstanding


class ElevenLabsDialect(Dialect):
    def __init__(self, context: SessionContext):
        super().__init__(context)
        opening = context.opening
        self._multi = opening.path.endswith(MULTI_PATH) or opening.query.get("multi") == "true"
        self._voice_id = opening.params.get("voice_id") or opening.query.get("voice_id")
        # auto_mode: each message is a whole sentence or phrase, spoken as it comes (as ElevenLabs does).
        self._auto = opening.query.get("auto_mode", "false").lower() == "true"
        self._options: SessionOptions | None = None
        self._contexts: dict[str | None, Context] = {}
        self._owners: dict[str, tuple[Context, CharTimes]] = {}  # response id -> its context, its characters

    @staticmethod
    def error_event(error: ProtocolError, fatal: bool = True) -> dict:
        code = FATAL_CLOSE.get(error.code, status.WS_1008_POLICY_VIOLATION) if fatal else error.http_status
        event = {"message": error.message, "error": token(error.code), "code": code}
        if error.retry_after is not None:
            event["retry_after"] = error.retry_after
        return event

    async def report(self, error: ProtocolError, context_id: str | None = None) -> None:
        event = self.error_event(error, fatal=False)
        await self._sink.send(event | ({"contextId": context_id} if context_id is not None else {}))

    async def start(self, first: dict) -> bool:
        try:
            query = Query.model_validate(self._opening.query)
            check_model(query.model_id, self._settings.accepted_models)
            spec = output_spec(query.output_format)
            self._options = self.negotiate(language=query.language_code, speaker_id=self._voice_id,
                                           format=spec.format, sample_rate=spec.sample_rate, fields=FIELDS)
        except CLIENT_MISTAKES as error:
            problem = as_protocol_error(error)
            await self._sink.send(self.error_event(problem))
            await self._sink.close(status.WS_1008_POLICY_VIOLATION, token(problem.code))
            return False
        self._multi = self._multi or "context_id" in first  # on the shared socket, the first message tells
        return await self.handle(first)

    async def handle(self, event: dict) -> bool:
        context_id = event.get("context_id") if isinstance(event.get("context_id"), str) else None
        try:
            message = Message.model_validate(event)
            if self._multi:
                await self._multi_message(message)
            else:
                await self._single_message(message)
        except CLIENT_MISTAKES as error:
            await self.report(as_protocol_error(error), context_id if self._multi else None)
        return True

    async def _single_message(self, message: Message) -> None:
        context = self._context(None, message)
        if message.text == "":  # the end of the stream: speak the rest, then isFinal and close
            await self._submit(context, context.text.flush())
            context.ending = True
            self.begin_close()
            return
        await self._speak(context, message)

    async def _multi_message(self, message: Message) -> None:
        if message.close_socket:
            for context in list(self._contexts.values()):
                await self._submit(context, context.text.flush())
                await self._end(context)
            self.begin_close()
            return
        if message.close_context:
            context = self._contexts.get(message.context_id) or self._context(message.context_id, message)
            # A barge-in: what was never flushed is not spoken, nor anything of a context closed twice
            # (Pipecat closes a turn's context as its text ends, and again when the user cuts in).
            if context.ending or not context.flushed:
                for response_id in list(context.outstanding):
                    await self._cancel(response_id)
            await self._end(context)
            return
        await self._speak(self._context(message.context_id, message), message)  # text "" keeps it alive

    def _context(self, context_id: str | None, message: Message) -> Context:
        context = self._contexts.get(context_id)
        if context is None or context.ending:  # a closed id opens a new, unrelated context
            context = Context(context_id, IncrementalText(self._runtime.fast_first_fragment, "text", "send flush: true"))
            self._contexts[context_id] = context
        if message.voice_settings is not None and message.voice_settings.speed is not None:
            context.speed = message.voice_settings.speed
        return context

    async def _speak(self, context: Context, message: Message) -> None:
        if message.text:  # spaces too: between an LLM's tokens they part its words
            context.flushed = context.flushed and not message.text.strip()
            await self._submit(context, context.text.feed(message.text))
        if message.flush or (self._auto and message.text and message.text.strip()):
            context.flushed = context.flushed or message.flush
            await self._submit(context, context.text.flush())

    async def _submit(self, context: Context, text: str | None) -> None:
        if text is None:
            return
        request = self._options.request(text, speed=context.speed, with_timestamps=True)
        await self._submit_owned(request, context.outstanding, self._owners, (context, CharTimes(request.text)))

    async def _cancel(self, response_id: str) -> None:
        try:
            await self._engine.cancel(response_id)
        except ProtocolError as error:
            if error.code != ErrorCode.RESPONSE_NOT_FOUND:  # it has just ended on its own: nothing to stop
                raise

    async def _end(self, context: Context) -> None:
        if context.ending:
            return  # its isFinal comes once, as its last response ends
        context.ending = True
        if not context.outstanding:
            await self._final(context)

    async def _final(self, context: Context) -> None:
        if self._contexts.get(context.id) is context:
            del self._contexts[context.id]
        await self._sink.send({"isFinal": True} | ({"contextId": context.id} if self._multi else {}))

    async def finish_close(self) -> None:
        """Everything is spoken: each context still open says its isFinal, then the socket closes."""
        for context in list(self._contexts.values()):
            await self._final(context)
        await super().finish_close()

    async def _on_session_event(self, event: SessionEvent) -> None:
        owner = self._owners.get(event.response_id)
        if owner is None:
            return
        context, chars = owner
        if isinstance(event, AudioChunk):
            alignment = socket_alignment(*chars.chunk(event.alignments or [], event.start_ms, event.end_ms), event.start_ms)
            reply = {"audio": base64.b64encode(event.audio).decode("ascii"), "isFinal": None,
                     "normalizedAlignment": alignment, "alignment": alignment}
            await self._sink.send(reply | ({"contextId": context.id} if self._multi else {}))
        elif isinstance(event, ResponseDone):
            del self._owners[event.response_id]
            context.outstanding.remove(event.response_id)
            if event.status == Status.FAILED:
                failure = event.error or ProtocolError(ErrorCode.INTERNAL, "synthesis failed; the session goes on")
                await self.report(failure, context.id if self._multi else None)
            if context.ending and not context.outstanding and self._multi:
                await self._final(context)
