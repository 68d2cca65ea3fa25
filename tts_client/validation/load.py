"""The load stage: many concurrent sessions for a bounded time, against a budget (SPEC §8).

For each level of N sessions, N sessions open over the level's first tenth (agents do not all
arrive in the same millisecond) and each speaks turn after turn until the level's time is up:
`response.create`, its audio as binary `pcm_16` frames, its `response.done`, then a pause
for the other party's turn (uniform, `think_s` on average). Measured per level:
- TTFA: from sending `response.create` to its first audio chunk, for every admitted turn;
- audio seconds delivered per second of the level;
- sheds: an `open` refused with `service_overloaded` (the server keeps its first-audio promise
  by refusing new sessions, never by queueing them); the session retries after `retry_after`,
  as a client should, and each refusal counts;
- errors: any other refusal, a failed response, a session that ended before its turn was
  done (dropped), a turn with no outcome within the timeout.
A level misses its budget on any error, a TTFA p95/p99 above the budget's, a shed at a level
of no more than `shed_free_sessions` sessions, or no admitted turn at all.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field

from ..events import AudioChunk, ResponseDone, TransportClosed
from ..session import ResponseRejected, Session, SessionError
from .target import Target

OVERLOADED = "service_overloaded"
RAMP_SHARE = 0.1  # sessions open over this share of the level's time


@dataclass(frozen=True)
class Budget:
    ttfa_p95_ms: float
    ttfa_p99_ms: float
    shed_free_sessions: int


@dataclass
class LevelResult:
    sessions: int
    seconds: float = 0.0  # the level's wall time, ramp and last turns included
    ttfa_ms: list[float] = field(default_factory=list)
    audio_ms: int = 0
    sheds: int = 0
    errors: Counter = field(default_factory=Counter)  # kind -> count
    first_error: str = ""

    def error(self, kind: str, detail: str) -> None:
        self.errors[kind] += 1
        self.first_error = self.first_error or f"{kind}: {detail}"

    @property
    def responses(self) -> int:
        return len(self.ttfa_ms)

    def percentile_ms(self, q: float) -> float | None:
        """Nearest rank, so a p99 of few turns is their worst, never an interpolation below it."""
        if not self.ttfa_ms:
            return None
        ordered = sorted(self.ttfa_ms)
        return ordered[max(0, math.ceil(q * len(ordered)) - 1)]

    def misses(self, budget: Budget) -> list[str]:
        found = []
        if self.errors:
            found.append(f"{sum(self.errors.values())} errors ({', '.join(f'{k} {n}' for k, n in self.errors.items())};"
                         f" first: {self.first_error})")
        if not self.ttfa_ms:
            found.append("no turn was admitted and answered")
        for q, limit in ((0.95, budget.ttfa_p95_ms), (0.99, budget.ttfa_p99_ms)):
            value = self.percentile_ms(q)
            if value is not None and value > limit:
                found.append(f"TTFA p{round(q * 100)} {value:.0f} ms > {limit:.0f} ms")
        if self.sheds and self.sessions <= budget.shed_free_sessions:
            found.append(f"{self.sheds} sessions shed at {self.sessions} sessions "
                         f"(none may be up to {budget.shed_free_sessions})")
        return found

    def summary(self, budget: Budget) -> dict:
        return {
            "sessions": self.sessions, "seconds": round(self.seconds, 3), "responses": self.responses,
            **{f"ttfa_p{q}_ms": _rounded(self.percentile_ms(q / 100)) for q in (50, 95, 99)},
            "audio_s_per_s": round(self.audio_ms / 1000 / self.seconds, 3) if self.seconds else 0.0,
            "sheds": self.sheds, "errors": sum(self.errors.values()), "error_kinds": dict(self.errors),
            "first_error": self.first_error, "misses": self.misses(budget),
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


@dataclass(frozen=True)
class Plan:
    seconds: float  # each level's speaking time
    text: str
    think_s: float = 1.0
    timeout: float = 60.0  # the longest one open, one turn or one close may take
    seed: int = 0


async def run_level(target: Target, sessions: int, plan: Plan) -> LevelResult:
    result = LevelResult(sessions)
    began = time.monotonic()
    until = began + plan.seconds
    rng = random.Random(plan.seed + sessions)
    ramp = plan.seconds * RAMP_SHARE
    starts = [ramp * i / sessions for i in range(sessions)]
    await asyncio.gather(*(_speaker(target, began + start, until, plan, rng, result) for start in starts))
    result.seconds = time.monotonic() - began
    return result


async def _speaker(target: Target, start: float, until: float, plan: Plan, rng: random.Random,
                   result: LevelResult) -> None:
    """One session slot: open (again after a shed or a drop) and speak until the level ends."""
    await asyncio.sleep(max(0.0, start - time.monotonic()))
    while time.monotonic() < until:
        session = await _open(target, plan, result)
        if session is None:
            continue
        try:
            while time.monotonic() < until:
                if not await _turn(session, plan, result):
                    break  # the session is gone: open another
                await asyncio.sleep(rng.uniform(0, 2 * plan.think_s))
            else:
                await _close(session, plan, result)
        finally:
            await session.abort()


async def _open(target: Target, plan: Plan, result: LevelResult) -> Session | None:
    try:
        session = await asyncio.wait_for(target.session(binary=True), plan.timeout)
    except Exception as error:  # noqa: BLE001 - any failure to connect is this level's error
        result.error("connect", f"{type(error).__name__}: {error}")
        await asyncio.sleep(1.0)
        return None
    try:
        await session.open(timeout=plan.timeout, format="pcm_16", audio_frames="binary")
        return session
    except SessionError as refused:
        await session.abort()
        if refused.error is not None and refused.error.code == OVERLOADED:
            result.sheds += 1
            await asyncio.sleep(refused.error.retry_after or 1.0)
        else:
            result.error("open refused", str(refused))
            await asyncio.sleep(1.0)
    except TimeoutError:
        await session.abort()
        result.error("open timed out", f"no session.created within {plan.timeout:g} s")
    return None


async def _turn(session: Session, plan: Plan, result: LevelResult) -> bool:
    """One response; False when the session ended under it (dropped)."""
    response_id = f"load-{uuid.uuid4().hex[:12]}"
    first = session.watch(lambda e: (isinstance(e, AudioChunk | ResponseDone) and e.response_id == response_id)
                          or isinstance(e, TransportClosed))
    sent = time.monotonic()
    try:
        response = await session.create(plan.text, response_id=response_id)
        event = await asyncio.wait_for(first, plan.timeout)
        arrived = time.monotonic()
        done = await response.wait(plan.timeout)
    except TimeoutError:
        result.error("turn timed out", f"{response_id}: no outcome within {plan.timeout:g} s")
        return False
    except ResponseRejected as refused:
        result.error("response refused", f"{response_id}: {refused}")
        return True
    except Exception as dropped:  # noqa: BLE001 - SessionError, or the send itself on a closed stream
        result.error("session dropped", f"{response_id}: {type(dropped).__name__}: {dropped}")
        return False
    if not isinstance(event, AudioChunk) or done.status != "completed":
        reason = done.error.message if done.error else f"status {done.status}"
        result.error("response failed", f"{response_id}: {reason}")
        return True
    result.ttfa_ms.append((arrived - sent) * 1000)
    result.audio_ms += done.audio_ms
    return True


async def _close(session: Session, plan: Plan, result: LevelResult) -> None:
    try:
        await session.close(timeout=plan.timeout)
    except (SessionError, TimeoutError) as error:
        result.error("close failed", f"{type(error).__name__}: {error}")

