"""The canonical session protocol on the WebSocket (SPEC §3): open, response.create/cancel, close, ping."""

from __future__ import annotations

import base64
from dataclasses import asdict

from starlette import status

from ...session.events import AudioChunk, ResponseCreated, ResponseDone, ResponseQueued, SessionEvent
from ...session.options import SessionOptions
from ...transport.dialect import Dialect, SessionContext
from ...wire.errors import CLIENT_MISTAKES, ErrorCode, ProtocolError, as_protocol_error, one_of
from ...wire.fields import echoed_id
from .events import SESSION_EVENTS, OpenEvent, ResponseCancelEvent, ResponseCreateEvent


def error_event(error: ProtocolError) -> dict:
    body: dict = {"code": str(error.code), "message": error.message}
    if error.response_id is not None:
        body["response_id"] = error.response_id
    if error.retry_after is not None:
        body["retry_after"] = error.retry_after
    return {"type": "error", "error": body}


class CanonicalDialect(Dialect):
    error_event = staticmethod(error_event)

    def __init__(self, context: SessionContext):
        super().__init__(context)
        self._options: SessionOptions | None = None
        self._binary = False

    async def start(self, first: dict) -> bool:
        try:
            if first.get("type") != "open":
                raise ProtocolError(
                    ErrorCode.SESSION_NOT_OPEN,
                    f"type: the first event must be 'open', got {first.get('type')!r}",
                )
            event = OpenEvent.model_validate(first)
            self._options = self.negotiate(
                language=event.language,
                speaker_id=event.speaker_id,
                format=event.format,
                sample_rate=event.sample_rate,
                speed=event.speed,
                custom_style=event.spk_ref_audio_tokens,
            )
        except CLIENT_MISTAKES as error:
            await self._sink.send(error_event(as_protocol_error(error)))
            await self._sink.close(status.WS_1008_POLICY_VIOLATION, "a valid open event must come first")
            return False
        self._binary = event.audio_frames == "binary"
        options = self._options
        likely = options.likely_language  # without `language`, each response's text decides its own
        await self._sink.send({
            "type": "session.created",
            "session_id": self.session_id,
            "language": options.language,  # null: each response's language is its text's
            "speaker_id": options.speaker_id,
            # The Kokoro voice that speaks (the closest one, for a voice the engine lacks) in the
            # session's language, or in the one its texts most likely have.
            "voice": options.voice_for(likely).voice,
            "format": options.output.format,
            "sample_rate": options.output.sample_rate,
            "audio_frames": event.audio_frames,
            "speed": options.speed,
            "speakers": self._runtime.synthesizer.voice_book(likely).speakers,
            # What serves (engine, device, precision, batch limits, uid): behind SageMaker only the
            # session and /invocations reach the container, so a client learns it here (/ping: the same).
            "server": self._runtime.runs_on(),
        })
        return True

    async def handle(self, event: dict) -> bool:
        kind = event.get("type")
        response_id = echoed_id(event.get("response_id"))
        try:
            if kind == "open":
                raise ProtocolError.invalid("type: the session is already open; send 'response.create'")
            if not isinstance(kind, str) or kind not in SESSION_EVENTS:
                raise ProtocolError(ErrorCode.UNKNOWN_EVENT_TYPE, f"type: {one_of(['open', *SESSION_EVENTS])}")
            parsed = SESSION_EVENTS[kind].model_validate(event)
            if isinstance(parsed, ResponseCreateEvent):
                await self._engine.submit(self._request(parsed))
            elif isinstance(parsed, ResponseCancelEvent):
                await self._engine.cancel(parsed.response_id)
            elif kind == "ping":
                await self._sink.send({"type": "pong"})
            elif kind == "close":
                self.begin_close()
        except CLIENT_MISTAKES as error:
            await self.report(as_protocol_error(error, response_id))
        return True

    async def finish_close(self) -> None:
        await self._sink.send({"type": "session.closed"})
        await super().finish_close()

    def _request(self, event: ResponseCreateEvent):
        return self._options.request(
            event.text,
            response_id=event.response_id,
            speaker_id=event.speaker_id,
            speed=event.speed,
            with_timestamps=event.with_timestamps,
            max_length_ms=event.max_length,
        )

    async def _on_session_event(self, event: SessionEvent) -> None:
        if isinstance(event, ResponseQueued):
            await self._sink.send({"type": "response.queued", "response_id": event.response_id})
        elif isinstance(event, ResponseCreated):
            await self._sink.send({"type": "response.created", "response_id": event.response_id})
        elif isinstance(event, AudioChunk):
            await self._send_chunk(event)
        elif isinstance(event, ResponseDone):
            done = {
                "type": "response.done",
                "response_id": event.response_id,
                "status": str(event.status),
                "usage": {"characters": event.characters, "audio_ms": event.audio_ms},
            }
            if event.error:
                done["error"] = error_event(event.error)["error"]
            await self._sink.send(done)

    async def _send_chunk(self, chunk: AudioChunk) -> None:
        event: dict = {"type": "audio.chunk", "response_id": chunk.response_id, "sequence": chunk.sequence}
        if not self._binary:
            event["audio"] = base64.b64encode(chunk.audio).decode("ascii")
        if chunk.alignments is not None:
            event["alignments"] = [asdict(a) for a in chunk.alignments]
        await self._sink.send(event, chunk.audio if self._binary else None)

