"""A voice agent's two ways to speak an LLM's token stream (the blog's Step 5).

`run_bidi`: sentences go into the open session as soon as the chunker completes them,
while the LLM is still generating; a second task drains the session. Both push into one
queue, so events come out in true arrival order (audio for sentence one can come out
before the LLM has written sentence three).
`run_batch`: the fair baseline: collect the whole answer, then one response.create.

Both yield the same events with `at` = seconds since the call started, so the only
difference a caller can measure is when synthesis starts.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

from tts_text.chunker import SentenceChunker
from .events import AudioChunk, ResponseDone, TransportClosed
from .session import Session, SessionError


@dataclass(frozen=True)
class SentenceSent:
    at: float
    text: str
    response_id: str


@dataclass(frozen=True)
class AudioOut:
    at: float
    chunk: AudioChunk


@dataclass(frozen=True)
class SentenceDone:
    at: float
    done: ResponseDone


@dataclass(frozen=True)
class AgentFinished:
    at: float


AgentEvent = SentenceSent | AudioOut | SentenceDone | AgentFinished
_TEXT_FINISHED = object()


async def run_bidi(text_stream: AsyncIterable[str], session: Session,
                   chunker: SentenceChunker | None = None, **create_options) -> AsyncIterator[AgentEvent]:
    """Feed sentences into `session` (already open) while the stream is still generating."""
    started = time.monotonic()
    chunker = chunker or SentenceChunker()
    queue: asyncio.Queue = asyncio.Queue()

    ours: set[str] = set()

    async def speak(sentences: list[str]) -> None:
        for sentence in sentences:
            await _send(session, sentence, queue, started, ours, create_options)

    async def feed_text() -> None:
        async for fragment in text_stream:
            await speak(chunker.feed(fragment))
        await speak(chunker.flush())
        queue.put_nowait(_TEXT_FINISHED)

    async for item in _merge(queue, started, feed_text(), _drain(session, queue, started, ours)):
        yield item


async def run_batch(text_stream: AsyncIterable[str], session: Session, **create_options) -> AsyncIterator[AgentEvent]:
    """Collect the whole answer first, then synthesize it with one response.create."""
    started = time.monotonic()
    queue: asyncio.Queue = asyncio.Queue()
    ours: set[str] = set()

    async def feed_text() -> None:
        text = "".join([fragment async for fragment in text_stream]).strip()
        if text:
            await _send(session, text, queue, started, ours, create_options)
        queue.put_nowait(_TEXT_FINISHED)

    async for item in _merge(queue, started, feed_text(), _drain(session, queue, started, ours)):
        yield item


async def _send(session: Session, text: str, queue: asyncio.Queue, started: float, ours: set[str], options: dict) -> None:
    response_id = str(uuid.uuid4())
    ours.add(response_id)
    # Announced before it is sent, so its response.done can never overtake it in the queue.
    queue.put_nowait(SentenceSent(time.monotonic() - started, text, response_id))
    await session.create(text, response_id=response_id, **options)


async def _drain(session: Session, queue: asyncio.Queue, started: float, ours: set[str]) -> None:
    async for event in session.events():
        now = time.monotonic() - started
        if isinstance(event, AudioChunk | ResponseDone) and event.response_id not in ours:
            continue  # not this turn's
        if isinstance(event, AudioChunk):
            queue.put_nowait(AudioOut(now, event))
        elif isinstance(event, ResponseDone):
            queue.put_nowait(SentenceDone(now, event))
        elif isinstance(event, TransportClosed):
            queue.put_nowait(SessionError(f"session closed ({event.code} {event.reason}) while speaking"))


async def _merge(queue: asyncio.Queue, started: float, *workers) -> AsyncIterator[AgentEvent]:
    """Yield queued events until the text is finished and every sentence sent is done."""
    tasks = [asyncio.create_task(worker) for worker in workers]
    for task in tasks:
        task.add_done_callback(lambda t: t.cancelled() or t.exception() is None or queue.put_nowait(t.exception()))
    outstanding: set[str] = set()
    text_finished = False
    try:
        while not (text_finished and not outstanding):
            item = await queue.get()
            if isinstance(item, BaseException):
                raise item
            if item is _TEXT_FINISHED:
                text_finished = True
                continue
            if isinstance(item, SentenceSent):
                outstanding.add(item.response_id)
            elif isinstance(item, SentenceDone):
                outstanding.discard(item.done.response_id)
            yield item
        yield AgentFinished(time.monotonic() - started)
    finally:
        for task in tasks:
            task.cancel()
