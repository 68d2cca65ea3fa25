"""Opening sessions for checks, and reading the event log they leave behind."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

from ..events import AudioChunk, ErrorEvent, Event, ResponseCreated, ResponseDone, ResponseQueued, TransportClosed
from ..session import Session
from .runner import Context, expect


@contextlib.asynccontextmanager
async def opened(context: Context, binary: bool = True, **options) -> AsyncIterator[Session]:
    session = await context.target.session(binary=binary)
    try:
        await session.open(**options)
        yield session
    finally:
        await session.abort()


async def collect_until(session: Session, done: set[str], timeout: float) -> list[Event]:
    """Events in arrival order until every response id in `done` has its response.done."""
    log: list[Event] = []
    waiting = set(done)
    while waiting:
        event = await session.next_event(timeout)
        log.append(event)
        if isinstance(event, ResponseDone):
            waiting.discard(event.response_id)
        expect(not isinstance(event, TransportClosed), f"connection closed before every response was done: {event}")
    return log


async def error_for(session: Session, frame: dict | str | bytes, timeout: float,
                    accepted: Callable[[Event], bool] | None = None) -> ErrorEvent:
    """Sends frame (an event, or any raw frame) and returns the error event it earns.

    `accepted` recognises the events that prove the frame was taken instead of refused, so
    a server that accepts it fails at once rather than after the timeout."""
    accepted = accepted or (lambda e: False)
    answer = session.watch(lambda e: isinstance(e, ErrorEvent | TransportClosed) or accepted(e))
    await (session.send(frame) if isinstance(frame, dict) else session.send_raw(frame))
    event = await asyncio.wait_for(answer, timeout)
    expect(not accepted(event), f"accepted ({type(event).__name__}) instead of refused with an error")
    expect(isinstance(event, ErrorEvent), f"the session ended instead of answering with an error: {event}")
    return event


def taken(response_id: str | None = None) -> Callable[[Event], bool]:
    """Events that prove a response.create was accepted (for `response_id`, when given)."""
    return lambda e: isinstance(e, ResponseQueued | ResponseCreated) and response_id in (None, e.response_id)


def positions(log: list[Event], kind: type, response_id: str) -> list[int]:
    return [i for i, e in enumerate(log) if isinstance(e, kind) and getattr(e, "response_id", None) == response_id]


def check_chunks_framed(log: list[Event], response_id: str) -> None:
    """A response's chunks come after its response.created, before its done, numbered 0, 1, 2..."""
    created = positions(log, ResponseCreated, response_id)
    done = positions(log, ResponseDone, response_id)
    chunks = positions(log, AudioChunk, response_id)
    expect(len(created) == 1 and len(done) == 1, f"{response_id}: expected one response.created and one response.done")
    expect(all(created[0] < i < done[0] for i in chunks), f"{response_id}: audio outside its created..done window")
    sequences = [log[i].sequence for i in chunks]
    expect(sequences == list(range(len(sequences))), f"{response_id}: chunk sequences {sequences} are not 0, 1, 2...")

