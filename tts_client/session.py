"""The session client: open, create (pipelined), cancel, ping, close, and every event in order.

One reader task turns frames into typed events. Each event updates the `Response` it
belongs to and is queued for `events()`, so a caller can either await responses or watch
the whole stream, in true arrival order. Lifecycle: connected -> open -> closing -> closed.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from .demux import Demuxer
from .events import (
    AudioChunk, ErrorEvent, ErrorInfo, Event, Pong, ResponseCreated, ResponseDone, ResponseQueued,
    SessionClosed, SessionCreated, TransportClosed,
)
from .transports import Transport


class SessionError(Exception):
    """The session could not go on: a fatal error event, or the connection ended."""

    def __init__(self, message: str, error: ErrorInfo | None = None):
        super().__init__(message)
        self.error = error


class ResponseRejected(Exception):
    """The server refused a response.create (a duplicate id, a full queue, bad fields)."""

    def __init__(self, error: ErrorInfo):
        super().__init__(f"{error.code}: {error.message}")
        self.error = error


@dataclass
class Response:
    """What has arrived so far for one response.create."""

    response_id: str
    text: str
    queued: bool = False
    created: bool = False
    chunks: list[AudioChunk] = field(default_factory=list)
    done: ResponseDone | None = None
    rejected: ErrorInfo | None = None
    _finished: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future(), repr=False)

    @property
    def audio(self) -> bytes:
        return b"".join(chunk.audio for chunk in self.chunks)

    @property
    def alignments(self) -> list:
        return [a for chunk in self.chunks for a in (chunk.alignments or [])]

    async def wait(self, timeout: float | None = None) -> ResponseDone:
        """The response.done; raises ResponseRejected, or SessionError if the session ended first."""
        return await asyncio.wait_for(asyncio.shield(self._finished), timeout)

    def _finish(self, outcome: ResponseDone | BaseException) -> None:
        if self._finished.done():
            return
        if isinstance(outcome, BaseException):
            self._finished.set_exception(outcome)
            self._finished.exception()  # a caller that never waits must not log "never retrieved"
        else:
            self._finished.set_result(outcome)


class Session:
    def __init__(self, transport: Transport):
        self.transport = transport
        self.created: SessionCreated | None = None
        self.closed: TransportClosed | None = None
        self.responses: dict[str, Response] = {}
        self.errors: list[ErrorInfo] = []  # error events not tied to an outstanding response
        self._demuxer = Demuxer()
        self._events: asyncio.Queue[Event] = asyncio.Queue()
        self._watchers: list[tuple[Callable[[Event], bool], asyncio.Future]] = []
        self._reader = asyncio.create_task(self._read(), name="tts-session-reader")

    # -- connecting ------------------------------------------------------------------------

    @classmethod
    async def websocket(cls, url: str, *, binary: bool = False) -> Session:
        from .transports.websocket import WebSocketTransport

        return cls(await WebSocketTransport.connect(url, binary=binary))

    @classmethod
    async def sagemaker(cls, endpoint_name: str, **options) -> Session:
        """options: region, endpoint_url, ca_file, credentials (see SageMakerTransport.connect)."""
        from .transports.sagemaker import SageMakerTransport

        return cls(await SageMakerTransport.connect(endpoint_name, **options))

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.abort()

    # -- client events ---------------------------------------------------------------------

    async def open(self, timeout: float = 30, **options) -> SessionCreated:
        """Sends `open` (language, speaker_id, format, sample_rate, audio_frames, speed, ...)."""
        waiter = self.watch(lambda e: isinstance(e, SessionCreated | ErrorEvent | TransportClosed))
        await self.send({"type": "open", **{k: v for k, v in options.items() if v is not None}})
        event = await asyncio.wait_for(waiter, timeout)
        if isinstance(event, ErrorEvent):
            raise SessionError(f"open refused: {event.error.code}: {event.error.message}", event.error)
        if isinstance(event, TransportClosed):
            raise SessionError(f"connection closed during open ({event.code} {event.reason})".strip())
        return event

    async def create(self, text: str, response_id: str | None = None, **options) -> Response:
        """Sends `response.create`; options: with_timestamps, max_length, speaker_id, speed.

        Returns at once (pipelining): await `response.wait()` for its response.done.
        """
        response_id = response_id or str(uuid.uuid4())
        if response_id in self.responses and self.responses[response_id].done is None:
            # Replacing the handle would orphan the outstanding one; use send() to test the server.
            raise ValueError(f"response_id {response_id!r} is still outstanding")
        response = Response(response_id, text)
        self.responses[response_id] = response
        body = {"type": "response.create", "text": text, "response_id": response_id}
        await self.send(body | {k: v for k, v in options.items() if v is not None})
        return response

    async def synthesize(self, text: str, timeout: float | None = None, **options) -> Response:
        """create() and wait for its response.done."""
        response = await self.create(text, **options)
        await response.wait(timeout)
        return response

    async def cancel(self, response_id: str | None = None) -> None:
        await self.send({"type": "response.cancel"} | ({"response_id": response_id} if response_id else {}))

    async def ping(self, timeout: float = 10) -> None:
        waiter = self.watch(lambda e: isinstance(e, Pong | TransportClosed))
        await self.send({"type": "ping"})
        if isinstance(await asyncio.wait_for(waiter, timeout), TransportClosed):
            raise SessionError("connection closed before pong")

    async def close(self, timeout: float = 120) -> TransportClosed:
        """Graceful: queued responses finish, then session.closed and the connection's end."""
        over = self.watch(lambda e: isinstance(e, SessionClosed | TransportClosed))
        await self.send({"type": "close"})
        # The input ends only once the server has ended the session: SageMaker tears the
        # container's socket down as soon as a client ends its input, queued audio and all.
        await asyncio.wait_for(over, timeout)
        await self.transport.finish_sending()
        await asyncio.wait_for(asyncio.shield(self._reader), timeout)
        await self.transport.close()  # releases the SDK's HTTP/2 stream; a no-op on a closed WebSocket
        return self.closed

    async def abort(self) -> None:
        """Drops the connection without draining."""
        await self.transport.close()  # once the server has ended it too: the SDK's stream is released then
        if not self._reader.done():
            await asyncio.wait_for(asyncio.shield(self._reader), 10)

    async def send(self, event: dict) -> None:
        await self.transport.send(json.dumps(event, ensure_ascii=False))

    async def send_raw(self, frame: str | bytes) -> None:
        """Any frame at all, e.g. to check that a malformed one is answered, not fatal."""
        await self.transport.send(frame)

    # -- server events ---------------------------------------------------------------------

    async def events(self) -> AsyncIterator[Event]:
        """Every event in arrival order, ending with TransportClosed."""
        while True:
            event = await self._events.get()
            yield event
            if isinstance(event, TransportClosed):
                return

    async def next_event(self, timeout: float | None = None) -> Event:
        return await asyncio.wait_for(self._events.get(), timeout)

    async def wait_for(self, predicate: Callable[[Event], bool], timeout: float | None = None) -> Event:
        """The next event (from now on) that satisfies predicate."""
        return await asyncio.wait_for(self.watch(predicate), timeout)

    def watch(self, predicate: Callable[[Event], bool]) -> asyncio.Future:
        """A future for the next event satisfying predicate; register it before the action."""
        future = asyncio.get_running_loop().create_future()
        self._watchers.append((predicate, future))
        return future

    async def _read(self) -> None:
        try:
            while (frame := await self.transport.receive()) is not None:
                for event in self._demuxer.feed(frame):
                    self._dispatch(event)
        finally:
            self.closed = TransportClosed(self.transport.close_code, self.transport.close_reason)
            self._dispatch(self.closed)

    def _dispatch(self, event: Event) -> None:
        self._track(event)
        self._events.put_nowait(event)
        for watcher in list(self._watchers):
            predicate, future = watcher
            if future.done():
                self._watchers.remove(watcher)
            elif predicate(event):
                future.set_result(event)
                self._watchers.remove(watcher)

    def _track(self, event: Event) -> None:
        response = self.responses.get(getattr(event, "response_id", None) or "")
        match event:
            case SessionCreated():
                self.created = event
            case ResponseQueued() if response:
                response.queued = True
            case ResponseCreated() if response:
                response.created = True
            case AudioChunk() if response:
                response.chunks.append(event)
            case ResponseDone() if response:
                response.done = event
                response._finish(event)
            case ErrorEvent():
                self._track_error(event.error)
            case TransportClosed():
                for pending in self.responses.values():
                    pending._finish(SessionError(f"connection closed ({event.code} {event.reason}) before response.done"))
            case SessionClosed():
                pass

    def _track_error(self, error: ErrorInfo) -> None:
        response = self.responses.get(error.response_id or "")
        # An error naming a response that has no response.done yet and was never accepted
        # (queued/created) is a rejection of that response.create.
        if response and not (response.queued or response.created or response.done):
            response.rejected = error
            response._finish(ResponseRejected(error))
        else:
            self.errors.append(error)
