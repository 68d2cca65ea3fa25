"""One HTTP request's synthesis: a session engine holding a single response, read as events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from ..admission import Slot
from ..runtime import EngineRuntime
from ..session.engine import SessionEngine
from ..session.events import AudioChunk, EngineEvent, ResponseDone
from ..session.request import ResponseRequest


class Synthesis:
    """The response's audio chunks, then its ResponseDone, as they happen.

    The admission slot is released as the response ends, or when the reader gives up (the
    client went away): the engine is aborted then, so nothing is synthesized for nobody.
    """

    def __init__(self, runtime: EngineRuntime, request: ResponseRequest, slot: Slot):
        self.request = request
        self._slot = slot
        self._events: asyncio.Queue[AudioChunk | ResponseDone] = asyncio.Queue()
        self._engine = SessionEngine(runtime, self._emit, max_pending=0)

    async def start(self) -> None:
        await self._engine.submit(self.request)

    async def _emit(self, event: EngineEvent) -> None:
        if isinstance(event, ResponseDone):
            self._slot.release()
        if isinstance(event, AudioChunk | ResponseDone):
            self._events.put_nowait(event)

    async def events(self) -> AsyncIterator[AudioChunk | ResponseDone]:
        try:
            while True:
                event = await self._events.get()
                yield event
                if isinstance(event, ResponseDone):
                    return
        finally:
            self._slot.release()
            await self._engine.abort()
