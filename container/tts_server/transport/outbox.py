"""Serialized sends on one WebSocket: the engine and the reader both write to it."""

from __future__ import annotations

import asyncio
import json

from starlette.websockets import WebSocket, WebSocketState


class Outbox:
    def __init__(self, websocket: WebSocket):
        self._websocket = websocket
        self._lock = asyncio.Lock()
        self.closed = False

    async def send(self, event: dict, binary: bytes | None = None) -> None:
        """One JSON text frame, optionally followed at once by one binary frame."""
        async with self._lock:
            if self.closed:
                return
            try:
                await self._websocket.send_text(json.dumps(event, ensure_ascii=False, separators=(",", ":")))
                if binary is not None:
                    await self._websocket.send_bytes(binary)
            except Exception:  # the peer went away; the reader will see the disconnect
                self.closed = True

    async def send_bytes(self, data: bytes) -> None:
        async with self._lock:
            if self.closed:
                return
            try:
                await self._websocket.send_bytes(data)
            except Exception:
                self.closed = True

    async def close(self, code: int, reason: str = "") -> None:
        async with self._lock:
            if not self.closed and self._websocket.application_state != WebSocketState.DISCONNECTED:
                try:
                    await self._websocket.close(code, reason)
                except Exception:
                    pass
            self.closed = True
