"""Waiting for a condition, never for a fixed time: a loaded machine only makes it take longer.

`until` (asyncio) and `until_sync` poll a predicate until it holds, failing with a message
that says what was awaited once a generous overall timeout has passed.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable

GENEROUS_S = 60.0  # an overall limit far above any normal wait: only a hang reaches it
POLL_S = 0.01


async def until(predicate: Callable[[], object], what: str, timeout: float = GENEROUS_S, poll: float = POLL_S):
    """The predicate's first truthy value (it may be a coroutine function); AssertionError naming
    `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f} s waiting for {what}"
        await asyncio.sleep(poll)


def until_sync(predicate: Callable[[], object], what: str, timeout: float = GENEROUS_S, poll: float = POLL_S):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f} s waiting for {what}"
        time.sleep(poll)
    return value
