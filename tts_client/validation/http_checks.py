"""The HTTP contract (SPEC §5): POST /invocations whole, streamed, as SSE, and its errors.

A missing route or an unexpected status is a failure like any other: a target that has no
HTTP contract to offer is validated with `--skip 'http.*'`, which the report shows.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time

from ..audio import decoded_sample_rate, duration_ms
from ..errors import ServiceError
from ..sse import SSEReader
from .runner import Check, Context, expect
from .texts import SHORT, TWO_SENTENCES

NOT_THERE = (404, 405)
MISSING = "POST /invocations answered {status}: the route is missing (run with --skip 'http.*' if this target has no HTTP contract)"


async def _call(context: Context, body: dict, accept: str | None = None, expect_error: bool = False):
    """(reply status, chunks with their arrival times) or the ServiceError when expected."""
    expect(context.target.http is not None, "no HTTP endpoint for this target (run with --skip 'http.*')")

    def call():
        started = time.monotonic()
        reply = context.target.http.invoke(body, accept=accept)
        return reply, [(time.monotonic() - started, chunk) for chunk in reply.chunks]

    try:
        reply, chunks = await asyncio.to_thread(call)
    except ServiceError as error:
        if error.status in NOT_THERE:
            raise AssertionError(MISSING.format(status=error.status)) from None
        if expect_error:
            return error
        raise AssertionError(f"HTTP {error.status} {error.code}: {error.message}") from None
    expect(not expect_error, f"expected an error, got HTTP {reply.status}")
    return reply, chunks


async def invocations(context: Context) -> str:
    rate = 16000
    _, chunks = await _call(context, {"text": SHORT, "format": "wav", "sample_rate": rate})
    body = json.loads(b"".join(chunk for _, chunk in chunks))
    expect(str(body.get("request_id", "")).count("_") >= 1, f"request_id {body.get('request_id')!r} is not YYYYMMDD_<uuid>")
    audios = body.get("audios")
    expect(isinstance(audios, list) and len(audios) == 1, "audios must hold exactly one element")
    audio = base64.b64decode(audios[0])
    played = duration_ms("wav", rate, audio)
    declared = decoded_sample_rate("wav", audio)
    expect(declared == rate, f"asked for {rate} Hz, the wav is at {declared} Hz")
    expect(played > 200, f"the audio plays {played:.0f} ms")
    return f"one base64 wav of {played:.0f} ms at {declared} Hz"


async def invocations_stream(context: Context) -> str:
    rate = 16000
    _, chunks = await _call(context, {"text": TWO_SENTENCES, "format": "mp3", "sample_rate": rate, "stream": True})
    audio = b"".join(chunk for _, chunk in chunks)
    played = duration_ms("mp3", rate, audio)
    declared = decoded_sample_rate("mp3", audio)
    expect(declared == rate, f"asked for {rate} Hz, the streamed mp3 is at {declared} Hz")
    expect(played > 500, f"the streamed mp3 plays {played:.0f} ms")
    return f"{len(chunks)} chunks, first after {chunks[0][0]:.2f} s, {played:.0f} ms of mp3 at {declared} Hz"


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
