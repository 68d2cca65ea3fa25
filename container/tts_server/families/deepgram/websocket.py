"""Deepgram Aura's streaming socket (`/v1/speak`), on the one session engine.

Opening: query `model` (its voice and language: aura-2-thalia-en), `encoding` (linear16, mulaw,
alaw, and the format table's mp3, opus, flac, aac), `sample_rate`, `speed`; the rest (`bit_rate`,
`mip_opt_out`, ...) is accepted and ignored. A bad query is told as `{"type": "Error",
"err_code": "INVALID_QUERY_PARAMETER", "err_msg"}` naming the field and its accepted values, then
close 1008. The session says `Metadata` once it starts.
Messages (`type`):
- `Speak` `{"text"}`: each sentence leaves as it completes (transport/incremental.py), so first
  audio comes while the text still streams in; the rest waits for a Flush.
- `Flush`: the rest is spoken; `{"type": "Flushed", "sequence_id"}` follows once everything sent
  before it has been spoken (once per Flush, in order; 0, 1, ...).
- `Clear`: everything not yet heard is cancelled at once (a barge-in: no more audio of it, no
  Flushed for flushes it overtook), then `{"type": "Cleared", "sequence_id"}`.
- `Close`: the rest is spoken, then close 1000.
Replies: the audio as binary frames; a bad message or a failed response is a `Warning`
(`description`, `code`; the session goes on); fatal errors are an `Error` before the close.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict
from starlette import status

from ...session.events import AudioChunk, ResponseDone, SessionEvent, Status
from ...session.options import SessionOptions
from ...transport.dialect import Dialect, SessionContext
from ...transport.incremental import IncrementalText
from ...wire.errors import CLIENT_MISTAKES, ErrorCode, ProtocolError, as_protocol_error
from .fields import FIELDS, INVALID_QUERY, Query, model_language, output_spec, token

FLUSH_HINT = 'send {"type": "Flush"}'


class Message(BaseModel):
    """A client message: its `type`, and `text` for Speak."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    type: Literal["Speak", "Flush", "Clear", "Close"]
    text: str | None = None


@dataclass
class PendingFlush:
    sequence_id: int
    waiting_for: set[str] = field(default_factory=set)  # the responses sent before it, still outstanding


def error_message(code: str, message: str, request_id: str = "") -> dict:
    """Its fatal error: the shape of its HTTP error body, as a socket message."""
    return {"type": "Error", "err_code": code, "err_msg": message, "description": message, "request_id": request_id}


def warning(code: str, message: str) -> dict:
    """Its non-fatal notice. `description`/`code` as its SDK reads it, `warn_msg`/`warn_code` as
    LiveKit's plugin does."""
    return {"type": "Warning", "description": message, "code": code, "warn_msg": message, "warn_code": code}


class DeepgramDialect(Dialect):
    def __init__(self, context: SessionContext):
        super().__init__(context)
        self._options: SessionOptions | None = None
        self._text = self._new_text()
        self._owned: list[str] = []  # response ids being spoken, in order
        self._flushes: list[PendingFlush] = []
        self._flush_count = 0
        self._clear_count = 0

    def _new_text(self) -> IncrementalText:
        return IncrementalText(self._runtime.fast_first_fragment, "text", FLUSH_HINT)

    @staticmethod
    def error_event(error: ProtocolError) -> dict:
        return error_message(token(error.code), error.message)

    async def report(self, error: ProtocolError) -> None:
        await self._sink.send(warning(token(error.code), error.message))

    async def start(self, first: dict) -> bool:
        try:
            query = Query.model_validate(self._opening.query)
            spec = output_spec(query)
            language = model_language(query.model, self._runtime.synthesizer.languages)
            self._options = self.negotiate(language=language, speaker_id=query.model, format=spec.format,
                                           sample_rate=spec.sample_rate, speed=query.speed or 1.0, fields=FIELDS)
        except CLIENT_MISTAKES as error:
            problem = as_protocol_error(error)
            await self._sink.send(error_message(INVALID_QUERY, problem.message, self.session_id))
            await self._sink.close(status.WS_1008_POLICY_VIOLATION, INVALID_QUERY)
            return False
        await self._sink.send({"type": "Metadata", "request_id": self.session_id, "model_name": query.model,
                               "model_version": self._settings.model_id,
                               "model_uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, self._settings.model_id))})
        return await self.handle(first)

    async def handle(self, event: dict) -> bool:
        try:
            message = Message.model_validate(event)
            if message.type == "Speak":
                if message.text is None:
                    raise ProtocolError.invalid("text: Field required (a Speak message carries its text)")
                await self._submit(self._text.feed(message.text))
            elif message.type == "Flush":
                await self._flush()
            elif message.type == "Clear":
                await self._clear()
            else:
                try:
                    await self._submit(self._text.flush())
                finally:  # a refused rest is reported; the session closes all the same
                    self.begin_close()
        except CLIENT_MISTAKES as error:
            await self.report(as_protocol_error(error))
        return True

    async def _flush(self) -> None:
        pending = PendingFlush(self._flush_count)
        self._flush_count += 1
        try:
            await self._submit(self._text.flush())
        finally:  # a refused rest still gets its Flushed: what was accepted before it is what it waits for
            pending.waiting_for = set(self._owned)
            self._flushes.append(pending)
            await self._answer_flushes()

    async def _clear(self) -> None:
        cancelled, self._owned, self._flushes = self._owned, [], []
        self._text = self._new_text()
        for response_id in cancelled:
            try:
                await self._engine.cancel(response_id)
            except ProtocolError as error:
                if error.code != ErrorCode.RESPONSE_NOT_FOUND:  # it has just ended on its own
                    raise
        await self._sink.send({"type": "Cleared", "sequence_id": self._clear_count})
        self._clear_count += 1

    async def _submit(self, text: str | None) -> None:
        if text is None:
            return
        await self._submit_owned(self._options.request(text), self._owned)

    async def _answer_flushes(self) -> None:
        while self._flushes and not self._flushes[0].waiting_for:
            await self._sink.send({"type": "Flushed", "sequence_id": self._flushes.pop(0).sequence_id})

    async def _on_session_event(self, event: SessionEvent) -> None:
        if event.response_id not in self._owned:  # cleared: nothing more of it is heard
            return
        if isinstance(event, AudioChunk):
            if event.audio:
                await self._sink.send_bytes(event.audio)
        elif isinstance(event, ResponseDone):
            self._owned.remove(event.response_id)
            if event.status == Status.FAILED:
                failure = event.error or ProtocolError(ErrorCode.INTERNAL, "synthesis failed; the session goes on")
                await self.report(failure)
            for pending in self._flushes:
                pending.waiting_for.discard(event.response_id)
            await self._answer_flushes()
