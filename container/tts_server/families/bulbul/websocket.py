"""Bulbul v3's bidirectional contract (SPEC §4): a thin adapter onto the session engine.

Client: `config` first (`model`, in it or in the URL's query as SageMaker's ModelQueryString puts
it, must be the served model id or an alias when present), then `text` ... `flush` per turn,
`ping` to keep alive (no reply: Bulbul documents it as a keep-alive and its SDK has no reply type);
`config` again at any time (the text before it is flushed with the old settings, as Bulbul does);
`close` (ours) flushes, drains and closes with 1000.
Server: `audio` events (base64), `event`/`final` after the audio of everything flushed (unless
the URL says `send_completion_event=false`), and `error` events whose `code` is an HTTP status.

Text is cut into sentences as it arrives (transport/incremental.py); the sentences a message
completes go to the engine at once, as one response that streams them sentence by sentence.
"""

from __future__ import annotations

import base64
from collections import deque
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field
from starlette import status

from ...session.events import AudioChunk, ResponseDone, SessionEvent, Status
from ...session.options import SessionOptions
from ...transport.dialect import Dialect, SessionContext
from ...transport.incremental import IncrementalText
from ...transport.request_fields import MODEL_ID
from ...wire.errors import CLIENT_MISTAKES, ErrorCode, ProtocolError, as_protocol_error, one_of
from ...wire.fields import MAX_TEXT_CHARS
from .fields import BulbulVoiceFields, Codec, voices

MESSAGE_TYPES = ("config", "text", "flush", "ping", "close")
FINAL = {"type": "event", "data": {"event_type": "final"}}


class BulbulConfig(BulbulVoiceFields):
    format: Codec = "mp3"


class ConfigMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: Literal["config"]
    data: BulbulConfig


class TextData(BaseModel):
    model_config = ConfigDict(extra="ignore")
    # Empty is refused as REST refuses it; whitespace is kept: an LLM's token may be " ".
    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)]


class TextMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: Literal["text"]
    data: TextData


class BulbulDialect(Dialect):
    def __init__(self, context: SessionContext):
        super().__init__(context)
        self._text = IncrementalText(context.runtime.fast_first_fragment, "data.text", "send 'flush'")
        self._options: SessionOptions | None = None
        self._finals: deque[str] = deque()  # per flush still waiting: the response whose done ends it
        self._media_types: dict[str, str] = {}  # response id -> its audio's content type
        self._send_finals = context.opening.query.get("send_completion_event", "true").lower() != "false"

    @staticmethod
    def error_event(error: ProtocolError) -> dict:
        data: dict = {"message": error.message, "code": error.http_status}
        if error.retry_after is not None:
            data["retry_after"] = error.retry_after
        return {"type": "error", "data": data}

    async def start(self, first: dict) -> bool:
        try:
            accepted = self._settings.accepted_models
            if self._opening.query.get("model", accepted[0]) not in accepted:
                raise ProtocolError.invalid(f"model: {one_of(accepted)} (the ModelQueryString's model)")
            self._options = self._configure(first)
        except CLIENT_MISTAKES as error:
            await self._sink.send(self.error_event(as_protocol_error(error)))
            await self._sink.close(status.WS_1008_POLICY_VIOLATION, "a valid config message must come first")
            return False
        return True

    async def handle(self, event: dict) -> bool:
        kind = event.get("type")
        try:
            if kind == "text":
                await self._feed(TextMessage.model_validate(event).data.text)
            elif kind == "flush":
                await self._flush()
            elif kind == "close":
                await self._flush()
                self.begin_close()
            elif kind == "config":
                options = self._configure(event)  # a bad one is refused and the old settings stay
                await self._submit(self._text.flush())  # text before it speaks as configured then
                self._options = options
            elif kind != "ping":
                raise ProtocolError(ErrorCode.UNKNOWN_EVENT_TYPE, f"type: {one_of(MESSAGE_TYPES)}")
        except CLIENT_MISTAKES as error:
            await self.report(as_protocol_error(error))
        return True

    def _configure(self, message: dict) -> SessionOptions:
        config = ConfigMessage.model_validate(message, context={MODEL_ID: self._settings.accepted_models}).data
        return config.session_options(self._runtime, message["data"], config.format, "data.",
                                      names=voices(self._config))

    async def _feed(self, text: str) -> None:
        await self._submit(self._text.feed(text))

    async def _flush(self) -> None:
        """Submit the rest; `final` follows once everything outstanding now is done."""
        try:
            await self._submit(self._text.flush())
        except ProtocolError as error:  # e.g. too many queued: reported, and the turn still ends
            await self.report(error)
        outstanding = self._engine.outstanding
        if not self._send_finals:
            return
        if outstanding:
            self._finals.append(outstanding[-1])
        else:
            await self._sink.send(FINAL)

    async def _submit(self, text: str | None) -> None:
        if text is None:
            return
        request = self._options.request(text)  # one response per message
        self._media_types[request.response_id] = request.output.media_type  # a later config may change it
        await self._engine.submit(request)

    async def _on_session_event(self, event: SessionEvent) -> None:
        if isinstance(event, AudioChunk) and event.audio:
            audio = base64.b64encode(event.audio).decode("ascii")
            media_type = self._media_types.get(event.response_id, self._options.output.media_type)
            await self._sink.send({"type": "audio", "data": {"audio": audio, "content_type": media_type}})
        elif isinstance(event, ResponseDone):
            self._media_types.pop(event.response_id, None)
            if event.status == Status.FAILED:
                await self.report(event.error or ProtocolError(ErrorCode.INTERNAL, "synthesis failed"))
            while self._finals and self._finals[0] == event.response_id:
                self._finals.popleft()
                await self._sink.send(FINAL)
