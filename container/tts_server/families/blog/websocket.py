"""The blog's minimal text-message socket (SPEC §4, kokoro-sagemaker-blog Steps 1-2).

`{"text": ..., "voice"?, "speed"?, "sample_rate"?, "request_id"?}` -> `{"type": "synthesis_start",
"request_id"}`, raw PCM16 binary frames, then `{"type": "synthesis_complete", "request_id",
"total_duration_s", "elapsed_s"}`, as the blog's container sends them. The voice defaults to the
blog's `af_heart` where the engine has it (else the language default); a voice implies its
language. Messages are answered one after another in order; errors are `{"type": "error",
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


class SimpleMessage(VoiceFields):
    text: Text
    request_id: ResponseId | None = None
    request_timestamp: float | None = None  # epoch seconds when the client sent it (the blog's client does)


class SimpleDialect(Dialect):
    def __init__(self, context: SessionContext):
        super().__init__(context)
        self._received_at: dict[str, float] = {}  # request_id -> when its message arrived
        self._voices: dict[str, str] = {}  # request_id -> the voice that speaks it instead of the one named

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
        message = SimpleMessage.model_validate(event, context={MODEL_ID: self._settings.accepted_models})
        tokens.refuse_if_stale(message.request_timestamp, self._settings.max_request_age_s)
        options = message.session_options(self._runtime, event, AUDIO_FORMAT, default_voice=tokens.DEFAULT_VOICE)
        request = options.request(message.text, response_id=message.request_id)
        # Which voice speaks, where it is not the one the client named (their synthesis_start has no such field).
        ours = request.response_id not in self._voices  # a duplicate id keeps the outstanding one's
        if ours and message.speaker_id is not None and options.voice != message.speaker_id:
            self._voices[request.response_id] = options.voice
        try:
            await self._engine.submit(request)  # synthesis_start may leave during submit
        except ProtocolError:
            if ours:
                self._voices.pop(request.response_id, None)
            raise
        self._received_at[request.response_id] = received  # its done comes from a task, never before this

    async def _on_session_event(self, event: SessionEvent) -> None:
        if isinstance(event, ResponseCreated):
            start = {"type": "synthesis_start", "request_id": event.response_id}
            voice = self._voices.pop(event.response_id, None)
            await self._sink.send(start | ({"voice": voice} if voice else {}))
        elif isinstance(event, AudioChunk) and event.audio:
            await self._sink.send_bytes(event.audio)
        elif isinstance(event, ResponseDone):
            self._voices.pop(event.response_id, None)
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
