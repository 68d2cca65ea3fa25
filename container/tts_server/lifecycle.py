"""The server's life: serving, then stopping (SIGTERM) until the work in progress is done.

On SIGTERM (main.py) `begin_stop()`: /ping answers 503, new sessions and requests get the
overload answer, every open session lets its active response finish until `deadline`
(SHUTDOWN_DEADLINE_S after the signal) and then closes with 1001 after a final event.
`wait_drained()` returns once no session or request holds a slot (or the deadline plus a
grace for those goodbyes has passed): then uvicorn may stop. SageMaker sends SIGKILL 30 s
after SIGTERM, so the default deadline (20 s) leaves room for the goodbyes and the exit.
"""

from __future__ import annotations

import asyncio
import logging
import time

from .admission import Admission

log = logging.getLogger(__name__)
GOODBYE_GRACE_S = 5.0  # after the deadline: final events, close handshakes
POLL_S = 0.05


class Lifecycle:
    def __init__(self, deadline_s: float):
        self.deadline_s = deadline_s
        self.stopping = asyncio.Event()
        self.deadline: float | None = None  # time.monotonic() when responses still running are cut

    def begin_stop(self) -> None:
        if self.stopping.is_set():
            return
        self.deadline = time.monotonic() + self.deadline_s
        self.stopping.set()
        log.info("SIGTERM: refusing new work, letting responses finish for up to %.0f s", self.deadline_s)

    async def wait_drained(self, admission: Admission) -> None:
        give_up = self.deadline + GOODBYE_GRACE_S
        while admission.sessions.in_use or admission.syntheses.in_use:
            if time.monotonic() >= give_up:
                log.warning("stopping with %s still open", admission.snapshot())
                return
            await asyncio.sleep(POLL_S)
        log.info("all sessions and requests have ended; stopping")
