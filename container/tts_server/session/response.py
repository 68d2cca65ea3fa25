"""One accepted response in a session: its named state and what it holds while active.

    QUEUED ──start──> ACTIVE ──finish──> DONE
       └────────────── cancel ─────────────┘   (a queued response cancelled before it starts)

An ACTIVE response holds an admission slot, its renderer and the renderer's task; a cancel
asked for before the task exists is kept and applied the moment it does.
"""

from __future__ import annotations

import asyncio
from enum import StrEnum

from ..admission import Slot
from .events import ResponseDone
from .renderer import ResponseRenderer
from .request import ResponseRequest


class ResponseState(StrEnum):
    QUEUED = "queued"
    ACTIVE = "active"
    DONE = "done"


TRANSITIONS: dict[ResponseState, frozenset[ResponseState]] = {
    ResponseState.QUEUED: frozenset({ResponseState.ACTIVE, ResponseState.DONE}),
    ResponseState.ACTIVE: frozenset({ResponseState.DONE}),
    ResponseState.DONE: frozenset(),
}


class Response:
    def __init__(self, request: ResponseRequest):
        self.request = request
        self.state = ResponseState.QUEUED
        self.renderer: ResponseRenderer | None = None
        self.task: asyncio.Future | None = None  # the renderer's run (or a failure before it started)
        self.finisher: asyncio.Task | None = None  # reports the outcome, then starts the next response
        self._slot: Slot | None = None
        self._cancel_asked = False

    @property
    def response_id(self) -> str:
        return self.request.response_id

    @property
    def characters(self) -> int:
        return len(self.request.text)

    @property
    def audio_ms(self) -> int:
        return self.renderer.audio_ms if self.renderer else 0

    def _to(self, state: ResponseState) -> None:
        if state not in TRANSITIONS[self.state]:
            raise RuntimeError(f"response {self.response_id}: {self.state} -> {state} is not a transition")
        self.state = state

    def activate(self, slot: Slot | None) -> None:
        self._to(ResponseState.ACTIVE)
        self._slot = slot

    def start(self, renderer: ResponseRenderer, task: asyncio.Task) -> None:
        self.renderer, self.task = renderer, task
        if self._cancel_asked:
            task.cancel()

    def fail_to_start(self, error: Exception) -> None:
        self.task = asyncio.get_running_loop().create_future()
        self.task.set_exception(error)

    def cancel(self) -> None:
        """Stop synthesis at once (the outcome becomes `cancelled`), or as soon as it starts."""
        self._cancel_asked = True
        if self.task is not None:
            self.task.cancel()

    def release(self) -> None:
        """Give the admission slot back (idempotent)."""
        if self._slot is not None:
            self._slot.release()
            self._slot = None

    def tasks(self) -> list[asyncio.Future]:
        return [task for task in (self.task, self.finisher) if task is not None]

    def finish(self, done: ResponseDone) -> ResponseDone:
        self._to(ResponseState.DONE)
        return done
