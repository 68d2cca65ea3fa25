"""Cartesia's TTS socket (`/tts/websocket`), on the one session engine: contexts by `context_id`.

A generation request `{"model_id", "transcript", "voice": {"mode": "id", "id"}, "output_format":
{"container": "raw", "encoding", "sample_rate"}, "context_id", "continue", "add_timestamps",
"language"?, "max_buffer_delay_ms"?, "flush"?, "generation_config"?}` opens a context or adds to
it. A context's voice, language and format are its first request's (Cartesia locks them too).
Its transcripts are one text: each sentence leaves as it completes (transport/incremental.py);
with `max_buffer_delay_ms: 0` (Pipecat and LiveKit send whole sentences so) each transcript is
spoken as it comes; `flush: true` speaks the rest, then `flush_done` once that audio is out;
`continue: false` (the default) speaks the rest and ends the context: `done` after its last
audio. `{"context_id", "cancel": true}` stops a context at once: nothing more is sent for it.
Replies: `chunk` (base64 `data`), `timestamps` (`word_timestamps`, seconds from the context's
start: timestamps.py), `flush_done`, `done`, `error` (`error_code`, `title`, `message`,
`status_code`, `done`). A bad request is reported and ends only its context; the socket lives on.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from ...session.events import AudioChunk, ResponseDone, SessionEvent, Status
from ...session.options import SessionOptions
from ...transport.dialect import Dialect, SessionContext
from ...transport.incremental import IncrementalText
from ...wire.errors import CLIENT_MISTAKES, ErrorCode, ProtocolError, as_protocol_error
from ...wire.fields import echoed_id
from .fields import FIELDS, SOCKET_CONTAINERS, ContextId, Generation, check_model, error_body
from .timestamps import WordTimes


class Cancel(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    context_id: ContextId
    cancel: bool


@dataclass
class Context:
    """One context: its negotiated options, its text so far, its responses still outstanding."""

    id: str
    options: SessionOptions
    text: IncrementalText
    timestamps: bool
    immediate: bool  # max_buffer_delay_ms 0: each transcript is spoken as it comes
    speed: float | None = None
    outstanding: list[str] = field(default_factory=list)
    offset_ms: int = 0  # its audio so far (its word times run on from here)
    flushes: int = 0  # flush ids handed out
    flush_marks: dict[str, int] = field(default_factory=dict)  # response id -> the flush id done with it
    ending: bool = False  # `continue: false` came: `done` once nothing is outstanding


@dataclass
class Owned:
    """A response of a context: its word times and the flush it belongs to."""

    context: Context
    words: WordTimes
    flush_id: int


class CartesiaDialect(Dialect):
    def __init__(self, context: SessionContext):
        super().__init__(context)
        self._contexts: dict[str, Context] = {}
        self._owners: dict[str, Owned] = {}  # response id -> its context

    @staticmethod
    def error_event(error: ProtocolError, context_id: str | None = None, done: bool = True) -> dict:
        """`done`: the error ends its context (its clients stop reading it at an error)."""
        body = error_body(error.code, error.message, error.http_status)
        return {"type": "error", "context_id": context_id, "done": done, **body}

    async def report(self, error: ProtocolError, context_id: str | None = None, done: bool = True) -> None:
        await self._sink.send(self.error_event(error, context_id, done) | {"request_id": self.session_id})

    async def start(self, first: dict) -> bool:
        return await self.handle(first)  # every message stands alone: a bad first one ends nothing

    async def handle(self, event: dict) -> bool:
        context_id = echoed_id(event.get("context_id"))
        try:
            if event.get("cancel"):
                await self._cancel(Cancel.model_validate(event).context_id)
            else:
                await self._generate(Generation.model_validate(event))
        except CLIENT_MISTAKES as error:
            await self._fail(as_protocol_error(error), self._contexts.get(context_id), context_id)
        return True

    async def _generate(self, message: Generation) -> None:
        context_id = message.context_id or str(uuid.uuid4())  # without one: a context of its own
        context = self._contexts.get(context_id)
        if context is None:
            context = self._open(context_id, message)
        elif context.ending:  # told, and the context still finishes
            await self.report(ProtocolError.invalid(f"context_id: context {context_id!r} is ending (a request had "
                                                    "continue false); use a new context_id"), context_id, done=False)
            return
        if message.speed_factor is not None:
            context.speed = message.speed_factor
        if message.transcript:
            await self._submit(context, context.text.feed(message.transcript))
        if message.flush or not message.continue_ or context.immediate:
            await self._submit(context, context.text.flush())
        if message.flush:
            await self._mark_flush(context)
        if not message.continue_:
            context.ending = True
            await self._maybe_done(context)

    def _open(self, context_id: str, message: Generation) -> Context:
        check_model(message.model_id, self._settings.accepted_models)
        spec = message.output_format.spec(SOCKET_CONTAINERS)
        options = self.negotiate(language=message.language, speaker_id=message.voice.id, format=spec.format,
                                 sample_rate=spec.sample_rate, fields=FIELDS)
        text = IncrementalText(self._runtime.fast_first_fragment, "transcript", "send flush: true or continue: false")
        context = Context(context_id, options, text, message.add_timestamps, message.max_buffer_delay_ms == 0)
        self._contexts[context_id] = context
        return context

    async def _submit(self, context: Context, text: str | None) -> None:
        if text is None:
            return
        request = context.options.request(text, speed=context.speed, with_timestamps=context.timestamps)
        await self._submit_owned(request, context.outstanding, self._owners,
                                 Owned(context, WordTimes(request.text), context.flushes + 1))

    async def _mark_flush(self, context: Context) -> None:
        context.flushes += 1
        if context.outstanding:
            context.flush_marks[context.outstanding[-1]] = context.flushes
        else:
            await self._flush_done(context, context.flushes)

    async def _flush_done(self, context: Context, flush_id: int) -> None:
        await self._sink.send({"type": "flush_done", "context_id": context.id, "flush_done": True,
                               "flush_id": flush_id, "done": False, "status_code": 200})

    async def _maybe_done(self, context: Context) -> None:
        if context.ending and not context.outstanding and self._contexts.get(context.id) is context:
            del self._contexts[context.id]
            await self._sink.send({"type": "done", "context_id": context.id, "done": True, "status_code": 200})

    async def _cancel(self, context_id: str, context: Context | None = None) -> None:
        """Stop the context's work; nothing more is sent for it (an unknown id is already stopped)."""
        context = context or self._contexts.get(context_id)
        if context is None or self._contexts.get(context_id) is not context:
            return
        del self._contexts[context_id]
        for response_id in context.outstanding:
            self._owners.pop(response_id, None)
            try:
                await self._engine.cancel(response_id)
            except ProtocolError as error:
                if error.code != ErrorCode.RESPONSE_NOT_FOUND:  # it has just ended on its own
                    raise
        context.outstanding.clear()

    async def _fail(self, error: ProtocolError, context: Context | None, context_id: str | None) -> None:
        """A request of the context failed: it is reported, and the context ends."""
        if context is not None:
            await self._cancel(context.id, context)
        await self.report(error, context_id)

    async def _on_session_event(self, event: SessionEvent) -> None:
        owned = self._owners.get(event.response_id)
        if owned is None:
            return  # its context was cancelled
        context = owned.context
        if isinstance(event, AudioChunk):
            await self._sink.send({"type": "chunk", "context_id": context.id, "data": base64.b64encode(
                event.audio).decode("ascii"), "done": False, "status_code": 200, "flush_id": owned.flush_id})
            # Its earlier responses are done (one response speaks at a time): their audio is the offset.
            words = owned.words.chunk(event.alignments or [], context.offset_ms) if context.timestamps else None
            if words:
                await self._sink.send({"type": "timestamps", "context_id": context.id, "word_timestamps": words,
                                       "done": False, "status_code": 200, "flush_id": owned.flush_id})
        elif isinstance(event, ResponseDone):
            del self._owners[event.response_id]
            context.outstanding.remove(event.response_id)
            context.offset_ms += event.audio_ms
            if event.status == Status.FAILED:
                failure = event.error or ProtocolError(ErrorCode.INTERNAL, "synthesis failed; the socket goes on")
                await self._fail(failure, context, context.id)
                return
            if event.response_id in context.flush_marks:
                await self._flush_done(context, context.flush_marks.pop(event.response_id))
            await self._maybe_done(context)
