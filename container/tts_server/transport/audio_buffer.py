"""A bounded hand-off from the session engine to a slow HTTP reader.

The engine's emit awaits `put` while the audio held is over the budget, so the renderer, which has
already queued its next sentence with the scheduler, queues no further one until the client has
read enough: a slow reader holds at most the budget (or one chunk, when a single chunk is
larger) plus the one sentence synthesized ahead. `close` (the client
went away) frees what is held and releases a blocked `put` at once.
"""

from __future__ import annotations

import asyncio
from collections import deque

from ..session.events import AudioChunk, ResponseDone


class AudioBuffer:
    def __init__(self, budget_bytes: int):
        self.budget_bytes = budget_bytes
        self.held_bytes = 0
        self._items: deque[AudioChunk | ResponseDone] = deque()
        self._readable = asyncio.Event()
        self._writable = asyncio.Event()
        self._writable.set()
        self._closed = False

    async def put(self, event: AudioChunk | ResponseDone) -> None:
        size = _size(event)
        while not self._closed and size and self._items and self.held_bytes + size > self.budget_bytes:
            self._writable.clear()
            await self._writable.wait()
        if self._closed:
            return
        self._items.append(event)
        self.held_bytes += size
        self._readable.set()

    async def get(self) -> AudioChunk | ResponseDone:
        while not self._items:
            self._readable.clear()
            await self._readable.wait()
        event = self._items.popleft()
        self.held_bytes -= _size(event)
        self._writable.set()
        return event

    def close(self) -> None:
        self._closed = True
        self._items.clear()
        self.held_bytes = 0
        self._writable.set()


def _size(event: AudioChunk | ResponseDone) -> int:
    return len(event.audio) if isinstance(event, AudioChunk) else 0
