"""Serialized sends on one WebSocket: the engine and the reader both write to it.

Backpressure: uvicorn's send waits while the connection's write buffer is above its high-water
mark (64 KiB), so a send to a client that stops reading blocks here. The renderer queues the next
sentence with the scheduler, then awaits this chunk's send: a slow reader holds at most that
buffer, the chunk being sent and the one sentence synthesized ahead. A send failing because the
client is gone is expected and quiet (the reader sees the disconnect); any other exception is a
bug and propagates. Implements wire.sink.Sink.
"""

from __future__ import annotations

import asyncio
import json
import logging

from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketDisconnected, WebSocketState

log = logging.getLogger(__name__)
# What a send raises once the peer has gone or the socket is closed: uvicorn's ClientDisconnected
# is an OSError, Starlette turns it into WebSocketDisconnect, and refuses sends after a close.
GONE = (WebSocketDisconnect, WebSocketDisconnected, OSError)


class Outbox:
    def __init__(self, websocket: WebSocket):
        self._websocket = websocket
        self._lock = asyncio.Lock()
        self.closed = False

    async def send(self, event: dict, binary: bytes | None = None) -> None:
        """One JSON text frame, optionally followed at once by one binary frame."""
        text = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
        async with self._lock:
            if self.closed:
                return
            try:
                await self._websocket.send_text(text)
                if binary is not None:
                    await self._websocket.send_bytes(binary)
            except GONE:
                self._gone()

    async def send_bytes(self, data: bytes) -> None:
        async with self._lock:
            if self.closed:
                return
            try:
                await self._websocket.send_bytes(data)
            except GONE:
                self._gone()

    async def close(self, code: int, reason: str = "") -> None:
        async with self._lock:
            if not self.closed and self._websocket.application_state != WebSocketState.DISCONNECTED:
                try:
                    await self._websocket.close(code, reason)
                except GONE:
                    pass
            self.closed = True

    def _gone(self) -> None:
        log.debug("send to a departed client dropped")
        self.closed = True
