"""A session endpoint over a plain WebSocket (a local server, or anything WebSocket-shaped)."""

from __future__ import annotations

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

MAX_FRAME_BYTES = 64 * 1024 * 1024  # a long pcm_f32 sentence is several MB


class WebSocketTransport:
    def __init__(self, connection: ClientConnection, binary: bool = False):
        self._connection = connection
        self._binary = binary
        self.close_code: int | None = None
        self.close_reason = ""

    @classmethod
    async def connect(cls, url: str, *, binary: bool = False, open_timeout: float = 10) -> WebSocketTransport:
        """binary: send every text frame as a binary frame, as SageMaker delivers them."""
        connection = await connect(url, max_size=MAX_FRAME_BYTES, open_timeout=open_timeout)
        return cls(connection, binary)

    async def send(self, frame: str | bytes) -> None:
        if self._binary and isinstance(frame, str):
            frame = frame.encode("utf-8")
        try:
            await self._connection.send(frame)
        except ConnectionClosed:
            self._record_close()
            raise

    async def receive(self) -> str | bytes | None:
        try:
            return await self._connection.recv()
        except ConnectionClosed:
            self._record_close()
            return None

    async def finish_sending(self) -> None:
        """Nothing to do: after `close` the server closes the socket."""

    async def close(self) -> None:
        await self._connection.close()
        self._record_close()

    def _record_close(self) -> None:
        self.close_code = self._connection.close_code
        self.close_reason = self._connection.close_reason or ""
