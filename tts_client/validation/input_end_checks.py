"""A client that ends its input right after its last request (issue 13).

SageMaker keeps a bidirectional stream "until either the client closes it or the model indicates
completion", and tears the container's socket down when the client ends its input: what the
container had not sent by then is lost. Over a plain WebSocket nothing is lost (ending the input
is not a WebSocket event). Either way the stream must end promptly and cleanly, what did arrive
must be intact, and the container must have freed the session (a new one opens at once).
"""

from __future__ import annotations

import asyncio

from ..events import AudioChunk, ErrorEvent, ResponseDone, SessionClosed
from .runner import Check, Context, expect
from .texts import SHORT


async def input_ends_after_last_request(context: Context) -> str:
    session = await context.target.session(binary=True)
    try:
        await session.open(format="pcm_16")
        await session.send({"type": "response.create", "text": SHORT, "response_id": "last"})
        await session.send({"type": "close"})
        await session.transport.finish_sending()
        log = await asyncio.wait_for(_all_events(session), context.timeout)
    finally:
        await session.abort()
    end = log[-1]
    expect(not [e for e in log if isinstance(e, ErrorEvent)], f"errors: {[e for e in log if isinstance(e, ErrorEvent)]}")
    expect(not end.reason or end.code == 1000, f"the stream ended abnormally: {end.code} {end.reason}")
    sequences = [e.sequence for e in log if isinstance(e, AudioChunk)]
    expect(sequences == list(range(len(sequences))), f"audio chunks out of order or missing: {sequences}")
    done = [e for e in log if isinstance(e, ResponseDone)]
    if done:
        expect(done[0].status == "completed", f"status {done[0].status!r}")
        expect(any(isinstance(e, SessionClosed) for e in log), "response.done but no session.closed")
    async with asyncio.timeout(context.timeout):  # the old session was freed: a new one opens
        fresh = await context.target.session(binary=True)
        try:
            await fresh.open()
        finally:
            await fresh.abort()
    delivered = "everything, then session.closed" if done else f"{len(sequences)} chunks, then the stream was torn down"
    return f"input ended after the last request: {delivered}; clean end ({end.code}); a new session opens"


async def _all_events(session) -> list:
    return [event async for event in session.events()]


CHECKS = [
    Check("close.input_ended", input_ends_after_last_request,
          "a client ending its input after its last request gets a clean end, intact audio, a freed session"),
]
