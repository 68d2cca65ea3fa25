"""Where a session's events go: the WebSocket outbox implements it, test doubles too."""

from __future__ import annotations

from typing import Protocol


class Sink(Protocol):
    closed: bool

    async def send(self, event: dict, binary: bytes | None = None) -> None:
        """One JSON event, optionally followed at once by one binary frame."""

    async def send_bytes(self, data: bytes) -> None:
        """One binary frame."""

    async def close(self, code: int, reason: str = "") -> None:
        """Close the session with this code (idempotent)."""
