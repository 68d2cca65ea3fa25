"""The blog family's text-message socket (SPEC §4, kokoro-sagemaker-blog Steps 1-2).

`{"text": ..., "voice"?, "speed"?, "sample_rate"?, "request_id"?}` -> `{"type": "synthesis_start",
"request_id"}`, raw PCM16 binary frames, then `{"type": "synthesis_complete", "request_id",
"total_duration_s", "elapsed_s"}`, as the blog's container sends them. The voice defaults to the
blog's `af_heart` (for English where the engine has it, else the language's own); the text
decides its language. Messages are answered one after another in order; errors are `{"type": "error",
"request_id", "message"}` (overload and a full queue carry the blog's `queue_saturated` /
`queue_full` tokens, which its client types) and the session goes on; `{"type": "close"}`
finishes what is pending and closes with 1000. Each message is one response of the session engine.
"""

from __future__ import annotations

import time

from ...session.events import AudioChunk, ResponseCreated, ResponseDone, SessionEvent, Status
from ...transport.dialect import Dialect, SessionContext
from ...transport.request_fields import MODEL_ID, VoiceFields
from ...wire.errors import CLIENT_MISTAKES, ErrorCode, ProtocolError, as_protocol_error
from ...wire.fields import ResponseId, Text, echoed_id
from . import tokens

AUDIO_FORMAT = "pcm_16"


class BlogMessage(VoiceFields):
    text: Text
    request_id: ResponseId | None = None
    request_timestamp: float | None = None  # epoch seconds when the client sent it (the blog's client does)


# Every field a message of this shape may carry (each name of each field); `format` is accepted
# and ignored, as their container does (the socket's audio is always PCM16).
MESSAGE_FIELDS = frozenset(name for field, names in BlogMessage.FIELD_NAMES.items() for name in names) | {
    "text", "request_id", "request_timestamp", "model", "spk_ref_audio_tokens", "format"}


def opens_with(first: dict) -> bool:
    """A message to speak in this shape: a `text`, no `type`, nothing but its fields. Another
    protocol's first message that happens to carry a `text` (ElevenLabs' `{"text": " ",
    "voice_settings": ...}`) is not this family's."""
    return "type" not in first and isinstance(first.get("text"), str) and first.keys() <= MESSAGE_FIELDS


class BlogDialect(Dialect):
    def __init__(self, context: SessionContext):
        super().__init__(context)
        self._received_at: dict[str, float] = {}  # request_id -> when its message arrived
        self._substitutes: dict[str, str] = {}  # request_id -> the voice that speaks it instead of the one named
        self._max_age_s = context.config.max_request_age_s

    @staticmethod
    def error_event(error: ProtocolError) -> dict:
        event = {"type": "error", "request_id": error.response_id, "message": tokens.message(error), "code": str(error.code)}
        if error.retry_after is not None:
            event["retry_after"] = error.retry_after
        return event

    async def start(self, first: dict) -> bool:
        return await self.handle(first)

    async def handle(self, event: dict) -> bool:
        request_id = echoed_id(event.get("request_id"))
        try:
            if "type" not in event:
                await self._synthesize(event)
            elif event["type"] == "close":
                self.begin_close()
            elif event["type"] == "ping":
                await self._sink.send({"type": "pong"})
            else:
                raise ProtocolError(ErrorCode.UNKNOWN_EVENT_TYPE,
                                    "type: Input should be 'close' or 'ping' (a message to speak has 'text' and no 'type')")
        except CLIENT_MISTAKES as error:
            await self.report(as_protocol_error(error, request_id))
        return True

    async def _synthesize(self, event: dict) -> None:
        received = time.perf_counter()
        message = BlogMessage.model_validate(event, context={MODEL_ID: self._settings.accepted_models})
        tokens.refuse_if_stale(message.request_timestamp, self._max_age_s)
        options = message.session_options(self._runtime, event, AUDIO_FORMAT, names=self._voices)
        request = options.request(message.text, response_id=message.request_id)
        # Which voice speaks, where it is not the one the client named (their synthesis_start has no such field).
        ours = request.response_id not in self._substitutes  # a duplicate id keeps the outstanding one's
        if ours and message.speaker_id is not None and request.voice.name != message.speaker_id:
            self._substitutes[request.response_id] = request.voice.name
        try:
            await self._engine.submit(request)  # synthesis_start may leave during submit
        except ProtocolError:
            if ours:
                self._substitutes.pop(request.response_id, None)
            raise
        self._received_at[request.response_id] = received  # its done comes from a task, never before this

    async def _on_session_event(self, event: SessionEvent) -> None:
        if isinstance(event, ResponseCreated):
            start = {"type": "synthesis_start", "request_id": event.response_id}
            voice = self._substitutes.pop(event.response_id, None)
            await self._sink.send(start | ({"voice": voice} if voice else {}))
        elif isinstance(event, AudioChunk) and event.audio:
            await self._sink.send_bytes(event.audio)
        elif isinstance(event, ResponseDone):
            self._substitutes.pop(event.response_id, None)
            received = self._received_at.pop(event.response_id, time.perf_counter())
            if event.status == Status.FAILED:
                await self.report(event.error or ProtocolError(ErrorCode.INTERNAL, "synthesis failed", event.response_id))
                return
            await self._sink.send({
                "type": "synthesis_complete",
                "request_id": event.response_id,
                "total_duration_s": round(event.audio_ms / 1000, 3),
                "elapsed_s": round(time.perf_counter() - received, 3),
            })
