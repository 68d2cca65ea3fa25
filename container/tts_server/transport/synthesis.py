"""One HTTP request's synthesis: a session engine holding a single response, read as events."""

from __future__ import annotations

from collections.abc import AsyncIterator

from ..admission import Slot
from ..runtime import EngineRuntime
from ..session.engine import SessionEngine
from ..session.events import AudioChunk, EngineEvent, ResponseDone
from ..session.request import ResponseRequest
from .audio_buffer import AudioBuffer


class Synthesis:
    """The response's audio chunks, then its ResponseDone, as they happen.

    At most `buffer_bytes` of audio wait for the reader (backpressure: synthesis pauses).
    The admission slot is released as the response ends, or when the reader gives up (the
    client went away): the engine is aborted then, so nothing is synthesized for nobody.
    """

    def __init__(self, runtime: EngineRuntime, request: ResponseRequest, slot: Slot, buffer_bytes: int):
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

    async def _emit(self, event: EngineEvent) -> None:
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
