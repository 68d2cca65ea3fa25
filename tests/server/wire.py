"""A raw WebSocket peer for protocol tests: sends binary frames as SageMaker does and
sorts what comes back into control events and audio, by the blog's rule."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import websockets


def is_control(frame: str | bytes) -> dict | None:
    """A frame is control only if the whole frame parses as a JSON object."""
    try:
        value = json.loads(frame)
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


@dataclass
class Received:
    events: list[dict] = field(default_factory=list)
    audio: dict[str, bytearray] = field(default_factory=dict)  # binary-mode audio per response

    def of(self, kind: str) -> list[dict]:
        return [e for e in self.events if e["type"] == kind]

    def done(self, response_id: str) -> dict:
        (event,) = [e for e in self.of("response.done") if e["response_id"] == response_id]
        return event


class Peer:
    def __init__(self, connection):
        self.connection = connection
        self.received = Received()
        self._last_chunk: dict | None = None

    @classmethod
    async def connect(cls, url: str) -> Peer:
        return cls(await websockets.connect(url, max_size=None))

    async def send(self, event: dict | bytes | str) -> None:
        """Events go out as binary UTF-8 JSON frames (what SageMaker delivers)."""
        if isinstance(event, dict):
            event = json.dumps(event).encode()
        await self.connection.send(event)

    async def open(self, **fields) -> dict:
        await self.send({"type": "open", **fields})
        return await self.next_event()

    async def next_event(self) -> dict:
        """The next control event; binary frames in between are filed under their chunk."""
        while True:
            frame = await self.connection.recv()
            event = is_control(frame)
            if event is None:
                assert self._last_chunk is not None, "binary frame without a preceding audio.chunk"
                self.received.audio.setdefault(self._last_chunk["response_id"], bytearray()).extend(frame)
                self._last_chunk = None
                continue
            assert self._last_chunk is None, "audio.chunk in binary mode was not followed by its binary frame"
            self.received.events.append(event)
            if event["type"] == "audio.chunk" and "audio" not in event:
                self._last_chunk = event
            return event

    async def until(self, predicate) -> dict:
        while True:
            event = await self.next_event()
            if predicate(event):
                return event

    async def until_done(self, *response_ids: str) -> list[dict]:
        waiting, done = set(response_ids), []
        while waiting:
            event = await self.until(lambda e: e["type"] == "response.done" and e["response_id"] in waiting)
            waiting.discard(event["response_id"])
            done.append(event)
        return done

    def audio_of(self, response_id: str) -> bytes:
        """All audio of a response, from JSON (base64) or binary chunks, in sequence order."""
        import base64

        chunks = [e for e in self.received.of("audio.chunk") if e["response_id"] == response_id]
        assert [c["sequence"] for c in chunks] == list(range(len(chunks))), "sequence numbers must be 0,1,2..."
        if chunks and "audio" in chunks[0]:
            return b"".join(base64.b64decode(c["audio"]) for c in chunks)
        return bytes(self.received.audio.get(response_id, b""))

    async def close(self) -> None:
        await self.connection.close()
