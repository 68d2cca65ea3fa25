"""The HTTP contract (SPEC §5): POST /invocations whole, streamed, as SSE, and its errors.

A route the server does not have (404/405, directly or inside SageMaker's 424) makes the
check a skip, not a failure: the session contract is what a bidirectional endpoint must
have, and these checks become real the moment the route answers.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time

from ..audio import duration_ms
from ..errors import ServiceError
from ..sse import SSEReader
from .runner import Check, Context, Skipped, expect
from .texts import SHORT, TWO_SENTENCES

NOT_THERE = (404, 405)


async def _call(context: Context, body: dict, accept: str | None = None, expect_error: bool = False):
    """(reply status, chunks with their arrival times) or the ServiceError when expected."""
    if context.target.http is None:
        raise Skipped("no HTTP endpoint for this target")

    def call():
        started = time.monotonic()
        reply = context.target.http.invoke(body, accept=accept)
        return reply, [(time.monotonic() - started, chunk) for chunk in reply.chunks]

    try:
        reply, chunks = await asyncio.to_thread(call)
    except ServiceError as error:
        if error.status in NOT_THERE:
            raise Skipped(f"not reachable: {error.status}") from None
        if expect_error:
            return error
        raise AssertionError(f"HTTP {error.status} {error.code}: {error.message}") from None
    expect(not expect_error, f"expected an error, got HTTP {reply.status}")
    return reply, chunks


async def invocations(context: Context) -> str:
    _, chunks = await _call(context, {"text": SHORT, "format": "wav"})
    body = json.loads(b"".join(chunk for _, chunk in chunks))
    expect(str(body.get("request_id", "")).count("_") >= 1, f"request_id {body.get('request_id')!r} is not YYYYMMDD_<uuid>")
    audios = body.get("audios")
    expect(isinstance(audios, list) and len(audios) == 1, "audios must hold exactly one element")
    played = duration_ms("wav", 24000, base64.b64decode(audios[0]))
    expect(played > 200, f"the audio plays {played:.0f} ms")
    return f"one base64 wav of {played:.0f} ms"


async def invocations_stream(context: Context) -> str:
    _, chunks = await _call(context, {"text": TWO_SENTENCES, "format": "mp3", "stream": True})
    audio = b"".join(chunk for _, chunk in chunks)
    played = duration_ms("mp3", 24000, audio)
    expect(played > 500, f"the streamed mp3 plays {played:.0f} ms")
    return f"{len(chunks)} chunks, first after {chunks[0][0]:.2f} s, {played:.0f} ms of mp3"


async def invocations_sse(context: Context) -> str:
    _, chunks = await _call(context, {"text": TWO_SENTENCES, "format": "pcm_16", "stream": True}, accept="text/event-stream")
    reader = SSEReader()
    events = [event for _, chunk in chunks for event in reader.feed(chunk)]
    expect(events, "no SSE events")
    payloads = [event.json() for event in events]
    audio = b"".join(base64.b64decode(p["audio"]) for p in payloads if p.get("audio"))
    expect(audio, "no SSE event carried audio")
    last = payloads[-1]
    expect("done" in str(last.get("type", last.get("event", ""))), f"the last event is not a done event: {sorted(last)}")
    return f"{len(events)} events in {len(chunks)} delivery chunks, {duration_ms('pcm_16', 24000, audio):.0f} ms of audio"


async def invocations_error(context: Context) -> str:
    error = await _call(context, {"text": SHORT, "sample_rate": 12345}, expect_error=True)
    expect(error.status == 400, f"HTTP {error.status}, expected 400")
    expect(error.code == "invalid_request_error", f"code {error.code!r}, expected 'invalid_request_error'")
    expect("sample_rate" in error.message, f"message {error.message!r} does not name sample_rate")
    via = " (unwrapped from SageMaker's 424 ModelError)" if error.via_model_error else ""
    return f"400 invalid_request_error naming sample_rate{via}"


CHECKS = [
    Check("http.invocations", invocations, "POST /invocations returns one base64 audio"),
    Check("http.stream", invocations_stream, "stream=true returns playable audio bytes"),
    Check("http.sse", invocations_sse, "Accept: text/event-stream returns SSE audio events and a done"),
    Check("http.error", invocations_error, "a bad request is a 400 with the error envelope"),
]
