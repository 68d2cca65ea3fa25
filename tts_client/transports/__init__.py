"""Two ways to reach a session endpoint behind one interface.

A transport moves whole frames: `send(str)` is a text (UTF8) frame, `send(bytes)` a binary
one; `receive()` returns the next whole frame, or None once the connection has ended, after
which `close_code`/`close_reason` say how. Transports import their dependencies lazily so
the WebSocket path works without the AWS SDK installed.
"""

from __future__ import annotations

from typing import Protocol


class Transport(Protocol):
    close_code: int | None
    close_reason: str

    async def send(self, frame: str | bytes) -> None: ...

    async def receive(self) -> str | bytes | None: ...

    async def finish_sending(self) -> None:
        """No more frames will be sent; frames may still arrive."""

    async def close(self) -> None: ...
