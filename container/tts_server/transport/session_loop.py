"""One WebSocket session after its first message: the reader that never stops reading.

The loop waits on whichever comes first: the client's next frame, the engine draining (after
the client's `close`, or while the server stops), the engine breaking, SIGTERM, or a timer
(idle timeout, maximum lifetime, the shutdown deadline). Reading goes on throughout, so a
disconnect at any moment aborts the session's work at once.

How a session ends, and its close code (RFC 6455 §7.4.1):
- the client's `close`: queued responses finish, the dialect's goodbye, 1000;
- idle (no client message and nothing being spoken for SESSION_IDLE_TIMEOUT_S) or its
  maximum lifetime (SESSION_MAX_LIFETIME_S): an `error` event, then 1000. Not 1008 (nothing
  the client sent broke a rule), not 1001 (the server is not going away), not 1013 (the
  client may reconnect at once): the session simply reached the end of its term;
- SIGTERM: queued responses are cancelled, the active one finishes until the deadline,
  an `error` event `server_shutting_down`, then 1001 (going away);
- a server fault that leaves the session unusable: an `internal_error` event, then 1011.
Which of these is under way is the dialect's `closing` state (closing.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from starlette import status

from .dialect import Dialect
from ..lifecycle import Lifecycle
from ..settings import Settings
from ..wire.errors import ErrorCode, ProtocolError
from .closing import Phase

log = logging.getLogger(__name__)
GOODBYE_TIMEOUT_S = 5.0  # a final event to a client that does not read is given up after this


class SessionLoop:
    def __init__(self, dialect: Dialect, receive: Callable[[], Awaitable[dict | ProtocolError | None]],
                 lifecycle: Lifecycle, idle_timeout_s: float, max_session_s: float, retry_after_s: int):
        self._dialect = dialect
        self._engine = dialect.engine
        self._receive = receive
        self._lifecycle = lifecycle
        self._idle_timeout_s = idle_timeout_s
        self._retry_after_s = retry_after_s
        now = time.monotonic()
        self._last_message = now
        self._max_session_s = max_session_s
        self._expires = now + max_session_s
        self._closing = dialect.closing

    async def run(self) -> None:
        tasks = {
            "stop": asyncio.create_task(self._lifecycle.stopping.wait()),
            "broken": asyncio.create_task(self._engine.broken.wait()),
        }
        try:
            await self._loop(tasks)
        finally:
            for task in tasks.values():
                task.cancel()
            await asyncio.gather(*tasks.values(), return_exceptions=True)

    async def _loop(self, tasks: dict[str, asyncio.Task]) -> None:
        while True:
            if "receive" not in tasks:
                tasks["receive"] = asyncio.create_task(self._receive())
            if not self._closing.is_open and "drain" not in tasks:
                tasks["drain"] = asyncio.create_task(self._engine.drain())
            done, _ = await asyncio.wait(tasks.values(), timeout=self._until_next_timer(),
                                         return_when=asyncio.FIRST_COMPLETED)
            if tasks["broken"] in done:
                await self._broken()
                return
            if tasks["receive"] in done:
                event = tasks.pop("receive").result()
                if event is None:  # the client has gone: stop its work now
                    await self._dialect.abort()
                    return
                self._last_message = time.monotonic()
                if isinstance(event, ProtocolError):
                    await self._dialect.report(event)
                elif not await self._dialect.handle(event):
                    return
                continue
            if "drain" in tasks and tasks["drain"] in done:
                await self._goodbye()
                return
            if tasks.get("stop") in done:
                tasks.pop("stop")
                await self._stop()
                continue
            await self._on_timer()

    def _until_next_timer(self) -> float | None:
        now = time.monotonic()
        if self._closing.phase is Phase.ENDING:  # only a shutdown deadline is left, if any
            deadline = self._closing.deadline
            return None if deadline is None else max(0.0, deadline - now)
        if not self._closing.is_open:
            return None
        idle_from = max(self._last_message, self._engine.idle_since)
        # While a response is being spoken the session is not idle: look again one timeout later.
        idle_at = now + self._idle_timeout_s if self._engine.busy else idle_from + self._idle_timeout_s
        return max(0.0, min(idle_at, self._expires) - now)

    async def _on_timer(self) -> None:
        now = time.monotonic()
        if self._closing.phase is Phase.ENDING:  # the shutdown deadline: cut what is still running
            self._closing.to(Phase.CUTTING)
            await self._engine.cancel_all()
        elif now >= self._expires:
            self._end(Phase.CUTTING, ErrorCode.SESSION_EXPIRED,
                      f"the session reached its maximum lifetime of {self._max_session_s:g} s "
                      f"({Settings.variable('session_max_lifetime_s')}); open a new one", status.WS_1000_NORMAL_CLOSURE)
            await self._engine.cancel_all()
        elif not self._engine.busy and now >= max(self._last_message, self._engine.idle_since) + self._idle_timeout_s:
            self._end(Phase.ENDING, ErrorCode.IDLE_TIMEOUT, f"the session was idle for {self._idle_timeout_s:g} s "
                      f"({Settings.variable('session_idle_timeout_s')}); open a new one when needed",
                      status.WS_1000_NORMAL_CLOSURE)

    async def _stop(self) -> None:
        """SIGTERM: nothing new, nothing queued; the active response finishes until the deadline."""
        refusal = ProtocolError(ErrorCode.SERVICE_OVERLOADED, "the server is shutting down; retry on a new session",
                                retry_after=self._retry_after_s)
        self._engine.refuse_new(refusal)
        if self._closing.can(Phase.ENDING):  # a session already ending keeps its own ending
            self._end(Phase.ENDING, ErrorCode.SHUTTING_DOWN, "the server is shutting down; open a new session to continue",
                      status.WS_1001_GOING_AWAY, deadline=self._lifecycle.deadline)
        await self._engine.cancel_queued()

    def _end(self, phase: Phase, code: ErrorCode, message: str, close_code: int, deadline: float | None = None) -> None:
        self._closing.to(phase, ProtocolError(code, message, retry_after=self._retry_after_s), close_code, deadline)

    async def _goodbye(self) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(GOODBYE_TIMEOUT_S):
                error = self._closing.error
                if error is None:  # the client's own close
                    await self._dialect.finish_close()
                    return
                await self._dialect.report(error)
                await self._dialect.close(self._closing.close_code, str(error.code))

    async def _broken(self) -> None:
        await self._dialect.abort()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(GOODBYE_TIMEOUT_S):
                await self._dialect.report(ProtocolError(ErrorCode.INTERNAL, "internal error; the session ends"))
                await self._dialect.close(status.WS_1011_INTERNAL_ERROR, "internal error")
