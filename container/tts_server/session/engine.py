"""The session engine: a FIFO of responses per session, one synthesized at a time.

States of a response: queued -> active -> done (completed | truncated | cancelled | failed).
Every accepted response gets exactly one ResponseDone, whatever happens to it, unless the
client has gone away (abort): a server fault inside a response makes it `failed` (logged
with the session and response ids) and the next one starts. A done that cannot be delivered
leaves the session unable to keep that promise: the engine is then `broken`, and the
transport closes the session (1011).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable

from ..admission import Slot
from ..protocol.errors import ErrorCode, ProtocolError
from ..runtime import ModelRuntime
from .events import ResponseCreated, ResponseDone, ResponseQueued, SessionEvent, Status
from .renderer import ResponseRenderer
from .request import ResponseRequest

log = logging.getLogger(__name__)


class SessionEngine:
    """`hold`, when given, is called as each response becomes active: the slot it returns
    (admission control's count of synthesis work) is released when that response ends."""

    def __init__(self, runtime: ModelRuntime, emit: Callable[[SessionEvent], Awaitable[None]], max_pending: int,
                 hold: Callable[[], Slot] | None = None, session_id: str = "-"):
        self.runtime = runtime
        self.session_id = session_id
        self._emit = emit
        self._max_pending = max_pending
        self._hold = hold
        self._held: Slot | None = None
        self._queue: deque[ResponseRequest] = deque()
        self._active: ResponseRequest | None = None
        self._active_task: asyncio.Future | None = None
        self._finisher: asyncio.Task | None = None
        self._cancel_before_start = False
        self._refusal: ProtocolError | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self.idle_since = time.monotonic()  # when the last response ended (or the session began)
        self.broken = asyncio.Event()  # set when the session can no longer keep its promises

    @property
    def outstanding(self) -> list[str]:
        active = [self._active.response_id] if self._active else []
        return active + [r.response_id for r in self._queue]

    @property
    def busy(self) -> bool:
        return not self._idle.is_set()

    def refuse_new(self, error: ProtocolError) -> None:
        """From now on every submit is refused with `error` (the session is closing or the server stopping)."""
        self._refusal = error

    async def submit(self, request: ResponseRequest) -> None:
        """Accept a response or raise ProtocolError (nothing is queued then)."""
        if self._refusal is not None:
            refusal = self._refusal
            raise ProtocolError(refusal.code, refusal.message, request.response_id, refusal.retry_after)
        if request.response_id in self.outstanding:
            raise ProtocolError(
                ErrorCode.DUPLICATE_RESPONSE_ID,
                f"Validation Error(s):\n- response_id: {request.response_id!r} is already outstanding; "
                "use an id that is not active or queued (ids are reusable after their response.done)",
                request.response_id,
            )
        if self._active is None:
            await self._begin(request)
            return
        if len(self._queue) >= self._max_pending:
            raise ProtocolError(
                ErrorCode.TOO_MANY_QUEUED,
                f"too many queued responses: at most {self._max_pending} may wait behind the active one "
                "(WS_MAX_PENDING_RESPONSES); wait for a response.done and retry",
                request.response_id,
            )
        self._queue.append(request)
        await self._emit(ResponseQueued(request.response_id))

    async def cancel(self, response_id: str | None) -> None:
        if response_id is None or (self._active and self._active.response_id == response_id):
            if self._active is None:
                raise ProtocolError(ErrorCode.RESPONSE_NOT_FOUND, "response_id: there is no active response to cancel")
            self._cancel_active()
            return
        for request in self._queue:
            if request.response_id == response_id:
                self._queue.remove(request)
                await self._emit(ResponseDone(response_id, Status.CANCELLED, len(request.text), 0))
                return
        raise ProtocolError(
            ErrorCode.RESPONSE_NOT_FOUND,
            f"response_id: {response_id!r} is not outstanding; outstanding ids: {self.outstanding}",
            response_id,
        )

    async def cancel_queued(self) -> None:
        """Every queued response ends `cancelled` without starting; the active one goes on."""
        while self._queue:
            request = self._queue.popleft()
            await self._emit(ResponseDone(request.response_id, Status.CANCELLED, len(request.text), 0))

    async def cancel_all(self) -> None:
        await self.cancel_queued()
        if self._active is not None:
            self._cancel_active()

    async def drain(self) -> None:
        """Wait until every accepted response is done."""
        await self._idle.wait()

    async def abort(self) -> None:
        """The client is gone: stop everything, report nothing, and wait for the tasks to end."""
        self._queue.clear()
        self._release_work()
        tasks = [task for task in (self._active_task, self._finisher) if task]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    def _cancel_active(self) -> None:
        if self._active_task is None:  # still announcing response.created
            self._cancel_before_start = True
        else:
            self._active_task.cancel()

    async def _begin(self, request: ResponseRequest) -> None:
        self._active = request
        self._idle.clear()
        self._held = self._hold() if self._hold else None
        self._cancel_before_start = False
        renderer = None
        try:
            await self._emit(ResponseCreated(request.response_id))
            renderer = ResponseRenderer(self.runtime, request, self._emit)
            task = asyncio.create_task(renderer.run(), name=f"response-{request.response_id}")
        except Exception as error:  # the response fails before it starts: still exactly one done
            task = asyncio.get_running_loop().create_future()
            task.set_exception(error)
        self._active_task = task
        if self._cancel_before_start:
            task.cancel()
        self._finisher = asyncio.create_task(self._finish(request, renderer, task), name=f"finish-{request.response_id}")

    async def _finish(self, request: ResponseRequest, renderer: ResponseRenderer | None, task: asyncio.Future) -> None:
        """Report the outcome of the active response, then start the next one in FIFO order."""
        await asyncio.wait({task})
        self._release_work()
        try:
            done = self._outcome(request, renderer, task)
        except Exception as error:  # a server fault while judging the outcome: the response still ends once
            done = self._failed(request, renderer, error)
        try:
            await self._emit(done)
        except Exception:
            log.exception("session %s: the response.done of %s could not be sent; the session ends",
                          self.session_id, request.response_id)
            self.broken.set()
            return
        self._active = self._active_task = self._finisher = None
        if self._queue:
            await self._begin(self._queue.popleft())
        else:
            self.idle_since = time.monotonic()
            self._idle.set()

    def _release_work(self) -> None:
        if self._held:
            self._held.release()
            self._held = None

    def _outcome(self, request: ResponseRequest, renderer: ResponseRenderer | None, task: asyncio.Future) -> ResponseDone:
        if task.cancelled():
            return ResponseDone(request.response_id, Status.CANCELLED, len(request.text), _audio_ms(renderer))
        error = task.exception()
        if error is None:
            return task.result()
        return self._failed(request, renderer, error)

    def _failed(self, request: ResponseRequest, renderer: ResponseRenderer | None, error: BaseException) -> ResponseDone:
        log.error("session %s: response %s failed", self.session_id, request.response_id, exc_info=error)
        failure = (
            error
            if isinstance(error, ProtocolError)
            else ProtocolError(ErrorCode.INTERNAL, "synthesis failed; the session goes on", request.response_id)
        )
        return ResponseDone(request.response_id, Status.FAILED, len(request.text), _audio_ms(renderer), failure)


def _audio_ms(renderer: ResponseRenderer | None) -> int:
    return renderer.audio_ms if renderer else 0
