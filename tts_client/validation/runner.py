"""Runs named checks one by one, each under a time limit, and records what happened."""

from __future__ import annotations

import asyncio
import fnmatch
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from .target import Target

PASS, FAIL, SKIP = "pass", "fail", "skip"


class CheckFailed(AssertionError):
    pass


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


@dataclass
class Context:
    target: Target
    max_pending: int = 15
    timeout: float = 90
    overload_burst: int = 16  # requests sent at once by overload.shed
    shed_within: float = 2.0  # seconds a 503 may take to come back
    expect_device: str | None = None  # what the deploy asked for (server.runs_on); None: not checked
    expect_uid: int | None = None
    cache: dict = field(default_factory=dict)  # results shared between checks (a reference duration)


CheckFunction = Callable[[Context], Awaitable[str | None]]


@dataclass(frozen=True)
class Check:
    name: str
    run: CheckFunction
    description: str


@dataclass
class CheckResult:
    name: str
    status: str
    seconds: float
    detail: str = ""
    description: str = ""


def select(checks: list[Check], patterns: list[str] | None) -> list[Check]:
    if not patterns:
        return checks
    return [c for c in checks if any(fnmatch.fnmatchcase(c.name, p) for p in patterns)]


async def run_check(check: Check, context: Context) -> CheckResult:
    started = time.monotonic()
    try:
        detail = await asyncio.wait_for(check.run(context), context.timeout)
        status = PASS
    except TimeoutError:
        status, detail = FAIL, f"no outcome within {context.timeout:.0f} s"
    except (CheckFailed, AssertionError) as failure:
        status, detail = FAIL, str(failure) or "assertion failed"
    except Exception as error:  # noqa: BLE001 - the check's own trouble: report it, go on with the next
        status, detail = FAIL, f"{type(error).__name__}: {error}"
        last = traceback.extract_tb(error.__traceback__)[-1:]
        if last:
            detail += f" (at {last[0].name}:{last[0].lineno})"
    return CheckResult(check.name, status, time.monotonic() - started, detail or "", check.description)


def skip_reasons(checks: list[Check], patterns: list[str] | None) -> dict[str, str]:
    """Check name -> why it is skipped, for the checks that --skip patterns name."""
    reasons = {}
    for check in checks:
        matched = [p for p in patterns or [] if fnmatch.fnmatchcase(check.name, p)]
        if matched:
            reasons[check.name] = f"skipped on request (--skip {matched[0]})"
    return reasons


async def run_checks(checks: list[Check], context: Context, on_result=None, skip: dict[str, str] | None = None,
                     on_start=None) -> list[CheckResult]:
    """Every check in order; one named in `skip` is reported as skipped with its reason, not run."""
    results = []
    for check in checks:
        if on_start:
            on_start(check)
        if skip and check.name in skip:
            result = CheckResult(check.name, SKIP, 0.0, skip[check.name], check.description)
        else:
            result = await run_check(check, context)
        results.append(result)
        if on_result:
            on_result(result)
    return results
