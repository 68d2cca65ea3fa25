"""What the WebSocket transport needs from a dialect."""

from __future__ import annotations

from typing import Protocol

from ..protocol.errors import ProtocolError


class Dialect(Protocol):
    async def start(self, first: dict) -> bool:
        """Handle the first message; False ends the session (the dialect has closed it)."""

    async def handle(self, event: dict) -> bool:
        """Handle one later message; False once the session is over."""

    async def report(self, error: ProtocolError) -> None:
        """Tell the client about a bad frame; the session goes on."""

    async def abort(self) -> None:
        """The client disconnected."""
