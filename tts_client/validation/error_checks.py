"""Bad input is answered with a clear, non-fatal error and the session goes on (SPEC §3)."""

from __future__ import annotations

from ..events import ResponseQueued
from .runner import Check, Context, expect
from .sessions import error_for, opened
from .texts import SHORT, TOO_LONG

# (what is sent, the error code expected, a word the message must contain)
BAD_FRAMES: list[tuple[str, dict | str | bytes, str, str]] = [
    ("text frame that is not JSON", "not json {", "invalid_request_error", "JSON"),
    ("binary frame that is not UTF-8", b"\xff\xfe\x7b\x00", "invalid_request_error", "UTF-8"),
    ("JSON that is not an object", "[1, 2, 3]", "invalid_request_error", "object"),
    ("unknown event type", {"type": "response.bogus"}, "unknown_event_type", "response.create"),
    ("response.create without text", {"type": "response.create"}, "invalid_request_error", "text"),
    ("text over 3500 characters", {"type": "response.create", "text": TOO_LONG}, "invalid_request_error", "text"),
    ("cancel of an unknown id", {"type": "response.cancel", "response_id": "no-such-response"}, "response_not_found", "no-such-response"),
]


async def bad_frames_non_fatal(context: Context) -> str:
    problems = []
    async with opened(context) as session:
        for label, frame, code, word in BAD_FRAMES:
            error = (await error_for(session, frame, context.timeout)).error
            if error.code != code:
                problems.append(f"{label}: code {error.code!r}, expected {code!r}")
            elif word.lower() not in error.message.lower():
                problems.append(f"{label}: message {error.message!r} does not mention {word!r}")
        await session.ping()
        response = await session.synthesize(SHORT, timeout=context.timeout)
    expect(not problems, "; ".join(problems))
    expect(response.done.status == "completed" and response.audio, "the session did not synthesize after the bad frames")
    return f"{len(BAD_FRAMES)} bad frames answered with errors; ping and synthesis still work"


async def duplicate_response_id(context: Context) -> str:
    async with opened(context) as session:
        first = await session.create(SHORT, response_id="same-id")
        # The first is active (response.created), never queued: a queued same-id is the duplicate taken.
        duplicate = {"type": "response.create", "text": SHORT, "response_id": "same-id"}
        error = (await error_for(session, duplicate, context.timeout,
                                 accepted=lambda e: isinstance(e, ResponseQueued) and e.response_id == "same-id")).error
        await first.wait(context.timeout)
        again = await session.synthesize(SHORT, response_id="same-id", timeout=context.timeout)
    expect(error.code == "duplicate_response_id", f"error code {error.code!r}, expected 'duplicate_response_id'")
    expect(again.done.status == "completed", "the id was not reusable after its response.done")
    return "a duplicate outstanding id is refused; the id is reusable after its done"


CHECKS = [
    Check("errors.bad_frames", bad_frames_non_fatal, "malformed frames get clear errors, the session lives on"),
    Check("errors.duplicate_response_id", duplicate_response_id, "outstanding ids are unique, reusable after done"),
]
