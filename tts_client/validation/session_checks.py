"""The bidirectional session contract (SPEC §2-§3): open, many messages, FIFO, cancel, close."""

from __future__ import annotations

import asyncio
import uuid

from ..events import AudioChunk, ResponseCreated, ResponseDone, ResponseQueued, SessionClosed, TransportClosed
from .runner import Check, Context, expect
from .sessions import check_chunks_framed, collect_until, error_for, opened, positions, taken
from .texts import LONG, SHORT, TWO_SENTENCES


async def open_binary_frame(context: Context) -> str:
    session = await context.target.session(binary=True)
    try:
        created = await session.open(format="pcm_16", sample_rate=16000)
    finally:
        await session.abort()
    expect(created.format == "pcm_16" and created.sample_rate == 16000,
           f"session.created echoes {created.format}@{created.sample_rate}, asked pcm_16@16000")
    expect("default" in created.speakers, f"speakers {created.speakers} lack 'default'")
    return f"session.created {created.format}@{created.sample_rate}, {len(created.speakers)} speakers"


async def open_required_first(context: Context) -> str:
    session = await context.target.session(binary=True)
    try:
        ended = session.watch(lambda e: isinstance(e, TransportClosed))
        error = await error_for(session, {"type": "response.create", "text": SHORT}, context.timeout, accepted=taken())
        closed = await asyncio.wait_for(ended, context.timeout)
    finally:
        await session.abort()
    expect(error.error.code == "session_not_open", f"error code {error.error.code!r}, expected 'session_not_open'")
    if context.target.kind == "websocket":
        expect(closed.code == 1008, f"close code {closed.code}, expected 1008")
    return f"session_not_open, then closed ({closed.code or closed.reason})"


async def several_messages(context: Context) -> str:
    async with opened(context) as session:
        durations = []
        for text in (SHORT, TWO_SENTENCES, SHORT):
            response = await session.synthesize(text, timeout=context.timeout)
            expect(response.done.status == "completed", f"status {response.done.status!r} for {text!r}")
            expect(response.audio, f"no audio for {text!r}")
            durations.append(response.done.audio_ms)
        await session.ping()
    return f"3 responses on one session ({', '.join(f'{d} ms' for d in durations)}), still open"


async def pipelining_fifo(context: Context) -> str:
    async with opened(context) as session:
        responses = [await session.create(text) for text in (TWO_SENTENCES, SHORT, SHORT)]
        ids = [r.response_id for r in responses]
        log = await collect_until(session, set(ids), context.timeout)
    queued = [r.response_id for r in responses if r.queued]
    expect(queued == ids[1:], f"expected the 2nd and 3rd to be queued, queued: {len(queued)}")
    created = [e.response_id for e in log if isinstance(e, ResponseCreated)]
    done = [e.response_id for e in log if isinstance(e, ResponseDone)]
    expect(created == ids and done == ids, "responses did not start and finish in FIFO order")
    for response_id in ids:
        check_chunks_framed(log, response_id)
    expect(all(r.done.status == "completed" and r.audio for r in responses), "not every response completed with audio")
    return "3 pipelined responses: 2 queued, FIFO, audio never interleaved"


async def cancel_active(context: Context) -> str:
    async with opened(context) as session:
        first_audio = session.watch(lambda e: isinstance(e, AudioChunk))
        active = await session.create(LONG)
        follower = await session.create(SHORT)
        await asyncio.wait_for(first_audio, context.timeout)
        await session.cancel(active.response_id)
        log = await collect_until(session, {active.response_id, follower.response_id}, context.timeout)
    expect(active.done.status == "cancelled", f"cancelled response ended {active.done.status!r}")
    done_at = positions(log, ResponseDone, active.response_id)[0]
    late = [i for i in positions(log, AudioChunk, active.response_id) if i > done_at]
    expect(not late, f"{len(late)} audio chunks after the cancelled response's done")
    expect(positions(log, ResponseCreated, follower.response_id)[0] > done_at, "the next response started too early")
    expect(follower.done.status == "completed", f"the next response ended {follower.done.status!r}")
    return f"active cancelled after {len(active.chunks)} chunk(s); the queued one then completed"


async def cancel_queued(context: Context) -> str:
    async with opened(context) as session:
        was_queued = session.watch(lambda e: isinstance(e, ResponseQueued))
        active = await session.create(TWO_SENTENCES)
        queued = await session.create(SHORT)
        await asyncio.wait_for(was_queued, context.timeout)
        await session.cancel(queued.response_id)
        await collect_until(session, {active.response_id, queued.response_id}, context.timeout)
    expect(queued.done.status == "cancelled", f"cancelled queued response ended {queued.done.status!r}")
    expect(not queued.created and not queued.chunks, "the cancelled queued response started anyway")
    expect(active.done.status == "completed", f"the active response ended {active.done.status!r}")
    return "queued response cancelled before it started; the active one completed"


async def queue_bound(context: Context) -> str:
    async with opened(context) as session:
        active = await session.create(LONG)
        waiting = [await session.create(SHORT) for _ in range(context.max_pending)]
        extra_id = f"over-the-bound-{uuid.uuid4().hex[:8]}"
        try:
            error = await error_for(session, {"type": "response.create", "text": SHORT, "response_id": extra_id},
                                    context.timeout, accepted=taken(extra_id))
        except AssertionError as refused_not:
            raise AssertionError(f"response {context.max_pending + 1} in the queue: {refused_not} "
                                 f"(is WS_MAX_PENDING_RESPONSES {context.max_pending}?)") from None
        for response in reversed(waiting):
            await session.cancel(response.response_id)
        await session.cancel(active.response_id)
        await collect_until(session, {r.response_id for r in [active, *waiting]}, context.timeout)
        await session.ping()
    expect(error.error.code == "too_many_queued_responses",
           f"error {error.error.code!r} for response {context.max_pending + 1} in the queue (is WS_MAX_PENDING_RESPONSES {context.max_pending}?)")
    expect(all(r.queued for r in waiting), "not every response within the bound was queued")
    return f"{context.max_pending} queued, the next refused with too_many_queued_responses; session lives on"


async def close_drains(context: Context) -> str:
    async with opened(context) as session:
        first, second = await session.create(SHORT), await session.create(SHORT)
        closed = await session.close(timeout=context.timeout)
        log = [event async for event in session.events()]
    expect(first.done and second.done, "close cut off responses that were already accepted")
    expect(first.done.status == second.done.status == "completed", "queued responses did not complete before the close")
    kinds = [type(e) for e in log]
    expect(SessionClosed in kinds, "no session.closed event")
    expect(kinds.index(SessionClosed) > max(positions(log, ResponseDone, second.response_id)), "session.closed came before the last response.done")
    clean = closed.code == 1000 if context.target.kind == "websocket" else not closed.reason
    expect(clean, f"the connection did not end cleanly: code {closed.code} {closed.reason}")
    return f"2 responses drained, session.closed, connection ended ({closed.code})"


CHECKS = [
    Check("open.binary_frame", open_binary_frame, "open sent as a binary frame gets session.created"),
    Check("open.required_first", open_required_first, "anything before open is a fatal session_not_open"),
    Check("session.several_messages", several_messages, "one session carries several responses and stays open"),
    Check("session.pipelining_fifo", pipelining_fifo, "pipelined responses queue and run in FIFO order"),
    Check("cancel.active", cancel_active, "cancel stops the active response; the next starts"),
    Check("cancel.queued", cancel_queued, "a cancelled queued response never starts"),
    Check("queue.bound", queue_bound, "the pending queue is bounded with a non-fatal error"),
    Check("close.drains", close_drains, "close finishes accepted responses, then session.closed"),
]
