"""One HTTP request's synthesis: a session engine holding a single response, read as events,
and the ways an HTTP reply reads them (whole, or as they happen)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from ..admission import Slot
from ..audio.encoders import WavEncoder
from ..wire.errors import ErrorCode, ProtocolError
from ..runtime import ModelRuntime
from ..session.engine import SessionEngine
from ..session.events import AudioChunk, ResponseDone, SessionEvent, Status
from ..session.request import ResponseRequest
from .audio_buffer import AudioBuffer
from .state import ServerState


class Synthesis:
    """The response's audio chunks, then its ResponseDone, as they happen.

    At most `buffer_bytes` of audio wait for the reader (backpressure: synthesis pauses).
    The admission slot is released as the response ends, or when the reader gives up (the
    client went away): the engine is aborted then, so nothing is synthesized for nobody.
    """

    def __init__(self, runtime: ModelRuntime, request: ResponseRequest, slot: Slot, buffer_bytes: int):
        self.request = request
        self._slot = slot
        self.buffer = AudioBuffer(buffer_bytes)
        self._engine = SessionEngine(runtime, self._emit, max_pending=0, session_id=f"http:{request.response_id}")

    async def start(self) -> None:
        try:
            await self._engine.submit(self.request)
        except BaseException:
            await self.close()
            raise

    async def _emit(self, event: SessionEvent) -> None:
        if isinstance(event, ResponseDone):
            self._slot.release()
        if isinstance(event, AudioChunk | ResponseDone):
            await self.buffer.put(event)

    async def events(self) -> AsyncIterator[AudioChunk | ResponseDone]:
        try:
            while True:
                event = await self.buffer.get()
                yield event
                if isinstance(event, ResponseDone):
                    return
        finally:
            await self.close()

    async def close(self) -> None:
        """Free everything at once (idempotent); then wait for the engine's tasks to end."""
        self._slot.release()
        self.buffer.close()
        await self._engine.abort()


def refuse_unless_accepting(state: ServerState) -> None:
    """New work waits for nothing: refused while the model loads or the server stops (SIGTERM)."""
    if not state.runtime.ready:
        raise state.admission.model_loading()
    if state.lifecycle.stopping.is_set():  # new work gets the overload answer
        raise state.admission.overloaded()


async def admit(state: ServerState, speech: ResponseRequest) -> Synthesis:
    """A synthesis slot or the overload answer at once; then the synthesis, started."""
    slot = state.admission.syntheses.try_take()
    if slot is None:
        raise state.admission.overloaded()
    synthesis = Synthesis(state.runtime, speech, slot, state.settings.stream_buffer_bytes)
    await synthesis.start()  # on failure it has released the slot
    return synthesis


class ResponseFailed(Exception):
    """Synthesis failed after audio had left: the stream is cut, never ended as if complete."""


async def started(synthesis: Synthesis) -> AsyncIterator[AudioChunk | ResponseDone]:
    """The events, once the first is in: a failure before any audio is still an error reply."""
    events = synthesis.events()
    first = await anext(events)
    if isinstance(first, ResponseDone):
        await events.aclose()
        raise_if_failed(first)

    async def replay():
        yield first
        async for event in events:
            yield event

    return replay()


async def audio_bytes(events: AsyncIterator[AudioChunk | ResponseDone]) -> AsyncIterator[bytes]:
    """The encoded audio as it exists; a failure mid-stream cuts the byte stream."""
    async for event in events:
        if isinstance(event, AudioChunk):
            yield event.audio
        elif event.status == Status.FAILED:
            raise ResponseFailed(f"response {event.response_id} failed mid-stream")


async def collect(synthesis: Synthesis) -> tuple[bytes, list, ResponseDone]:
    """The whole response: its audio (a whole file: WAV sizes filled in), alignments and done."""
    audio, alignments, done = bytearray(), [], None
    async with contextlib.aclosing(synthesis.events()) as events:
        async for event in events:
            if isinstance(event, AudioChunk):
                audio += event.audio
                alignments += event.alignments or []
            else:
                done = event
    raise_if_failed(done)
    if synthesis.request.output.format == "wav":
        return WavEncoder.with_sizes(bytes(audio)), alignments, done  # whole now: no streaming support needed
    return bytes(audio), alignments, done


def raise_if_failed(done: ResponseDone | None) -> None:
    """A failed response as an error reply: the client's mistake as it is (a text that yields no
    speech is a 400), anything else as an internal error."""
    if done is not None and done.error is not None and done.error.http_status < 500:
        raise done.error
    if done is None or done.status == Status.FAILED:
        rid = done.response_id if done else "?"
        raise ProtocolError(ErrorCode.INTERNAL, failure_message(rid))


def failure_message(rid: str) -> str:
    return f"internal error: synthesis failed; the request was not completed ({rid})"
