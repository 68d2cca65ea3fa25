"""The session engine: a FIFO of responses per session, one synthesized at a time.

A response's life is one named state (`ResponseState`, explicit transitions):
queued -> active -> done, or queued -> done (cancelled before it started). Its outcome is the
status of its one ResponseDone (completed | truncated | cancelled | failed). Every accepted
response gets exactly one ResponseDone, whatever happens to it, unless the client has gone
away (abort): a server fault inside a response makes it `failed` (logged with the session and
response ids) and the next one starts. A done that cannot be delivered leaves the session
unable to keep that promise: the engine is then `broken`, and the transport closes the
session (1011).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable

from ..admission import Slot
from ..runtime import ModelRuntime
from ..settings import Settings
from ..wire.errors import ErrorCode, ProtocolError
from .events import ResponseCreated, ResponseDone, ResponseQueued, SessionEvent, Status
from .renderer import ResponseRenderer
from .request import ResponseRequest
from .response import Response

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
        self._queue: deque[Response] = deque()
        self._active: Response | None = None
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
        response = Response(request)
        if self._active is None:
            await self._begin(response)
            return
        if len(self._queue) >= self._max_pending:
            raise ProtocolError(
                ErrorCode.TOO_MANY_QUEUED,
                f"too many queued responses: at most {self._max_pending} may wait behind the active one "
                f"({Settings.variable('ws_max_pending_responses')}); wait for a response.done and retry",
                request.response_id,
            )
        self._queue.append(response)
        await self._emit(ResponseQueued(request.response_id))

    async def cancel(self, response_id: str | None) -> None:
        active = self._active
        if response_id is None or (active and active.response_id == response_id):
            if active is None:
                raise ProtocolError(ErrorCode.RESPONSE_NOT_FOUND, "response_id: there is no active response to cancel")
            active.cancel()
            return
        for response in self._queue:
            if response.response_id == response_id:
                self._queue.remove(response)
                await self._emit(response.finish(ResponseDone(response_id, Status.CANCELLED, response.characters, 0)))
                return
        raise ProtocolError(
            ErrorCode.RESPONSE_NOT_FOUND,
            f"response_id: {response_id!r} is not outstanding; outstanding ids: {self.outstanding}",
            response_id,
        )

    async def cancel_queued(self) -> None:
        """Every queued response ends `cancelled` without starting; the active one goes on."""
        while self._queue:
            response = self._queue.popleft()
            await self._emit(response.finish(ResponseDone(response.response_id, Status.CANCELLED,
                                                          response.characters, 0)))

    async def cancel_all(self) -> None:
        await self.cancel_queued()
        if self._active is not None:
            self._active.cancel()

    async def drain(self) -> None:
        """Wait until every accepted response is done."""
        await self._idle.wait()

    async def abort(self) -> None:
        """The client is gone: the one path that frees everything the session holds, reporting
        nothing. The queue empties, the admission slot goes back, and the active response's task
        is cancelled: its renderer's exit frees its stream in the scheduler (queued pieces
        dropped, a run nobody else shares stopped) and its audio output."""
        self._queue.clear()
        active = self._active
        if active is None:
            return
        active.release()
        tasks = active.tasks()
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    async def _begin(self, response: Response) -> None:
        self._active = response
        self._idle.clear()
        response.activate(self._hold() if self._hold else None)
        try:
            await self._emit(ResponseCreated(response.response_id))
            renderer = ResponseRenderer(self.runtime, response.request, self._emit)
            response.start(renderer, asyncio.create_task(renderer.run(), name=f"response-{response.response_id}"))
        except Exception as error:  # noqa: BLE001 - the response fails before it starts: still exactly one done
            response.fail_to_start(error)
        response.finisher = asyncio.create_task(self._finish(response), name=f"finish-{response.response_id}")

    async def _finish(self, response: Response) -> None:
        """Report the outcome of the active response, then start the next one in FIFO order."""
        await asyncio.wait({response.task})
        response.release()
        try:
            done = self._outcome(response)
        except Exception as error:  # noqa: BLE001 - a server fault while judging the outcome: the response still ends once
            done = self._failed(response, error)
        try:
            await self._emit(response.finish(done))
        except Exception:
            log.exception("session %s: the response.done of %s could not be sent; the session ends",
                          self.session_id, response.response_id)
            self.broken.set()
            return
        self._active = None
        if self._queue:
            await self._begin(self._queue.popleft())
        else:
            self.idle_since = time.monotonic()
            self._idle.set()

    def _outcome(self, response: Response) -> ResponseDone:
        task = response.task
        if task.cancelled():
            return ResponseDone(response.response_id, Status.CANCELLED, response.characters, response.audio_ms)
        error = task.exception()
        if error is None:
            return task.result()
        return self._failed(response, error)

    def _failed(self, response: Response, error: BaseException) -> ResponseDone:
        if isinstance(error, ProtocolError) and error.http_status < 500:  # the client's mistake, told to it
            log.info("session %s: response %s refused: %s", self.session_id, response.response_id, error.message)
        else:
            log.error("session %s: response %s failed", self.session_id, response.response_id, exc_info=error)
        failure = (
            error
            if isinstance(error, ProtocolError)
            else ProtocolError(ErrorCode.INTERNAL, "synthesis failed; the session goes on", response.response_id)
        )
        return ResponseDone(response.response_id, Status.FAILED, response.characters, response.audio_ms, failure)
