"""WebSocket /invocations-bidirectional-stream: admits the session, picks the dialect (the first
message decides, asking the registered families), feeds it."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from starlette import status
from starlette.websockets import WebSocket

from ..admission import Admission, Slot
from ..settings import Settings
from ..wire.errors import ErrorCode, ProtocolError
from ..wire.frames import FrameLimits, decode_frame
from .dialect import SessionContext
from .family import Families
from .outbox import Outbox
from .session_loop import GOODBYE_TIMEOUT_S, SessionLoop

log = logging.getLogger(__name__)
# A refused session is told in its own dialect, so the refusal waits this long for the
# first message (clients send it at once); without one it is told in the canonical one.
REFUSAL_WAIT_S = 1.0


async def bidirectional_stream(websocket: WebSocket) -> None:
    state = websocket.app.state
    runtime = state.runtime
    admission: Admission = state.admission
    await websocket.accept()
    outbox = Outbox(websocket)
    slot: Slot | None = None
    if not runtime.ready:
        refusal = admission.model_loading()
    elif state.lifecycle.stopping.is_set():
        refusal = admission.overloaded()
    else:
        slot = admission.sessions.try_take()
        refusal = None if slot else admission.overloaded()
    try:
        if refusal:
            await _refuse(websocket, outbox, refusal, state.families)
            return
        context = SessionContext(outbox, runtime, state.settings, admission, websocket.query_params)
        await _serve(websocket, context, state.families)
    finally:
        if slot:
            slot.release()


async def _refuse(websocket: WebSocket, outbox: Outbox, refusal: ProtocolError, families: Families) -> None:
    """Shed at once: never queued, the session never starts."""
    try:
        first = await asyncio.wait_for(_next_event(websocket), REFUSAL_WAIT_S)
    except TimeoutError:
        first = None
    dialect = families.dialect_for(first if isinstance(first, dict) else {})
    await outbox.send(dialect.error_event(refusal))
    await outbox.close(status.WS_1013_TRY_AGAIN_LATER, str(refusal.code))


async def _serve(websocket: WebSocket, context: SessionContext, families: Families) -> None:
    settings = context.settings
    limits = settings.frame_limits
    try:  # a client that never says what it wants holds its slot no longer than an idle one
        first = await asyncio.wait_for(_next_event(websocket, limits), settings.session_idle_timeout_s)
    except TimeoutError:
        idle = ProtocolError(ErrorCode.IDLE_TIMEOUT, f"no first message within {settings.session_idle_timeout_s:g} s "
                             f"({Settings.variable('session_idle_timeout_s')}); open a new session when needed")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(GOODBYE_TIMEOUT_S):
                await context.sink.send(families.default.dialect.error_event(idle))
                await context.sink.close(status.WS_1000_NORMAL_CLOSURE, str(idle.code))
        return
    if first is None:
        return
    if isinstance(first, ProtocolError):
        first = {"type": None}  # an unreadable first frame is a missing open: fatal
    dialect = families.dialect_for(first)(context)
    try:
        if not await dialect.start(first):
            return
        loop = SessionLoop(dialect, lambda: _next_event(websocket, limits), websocket.app.state.lifecycle,
                           settings.session_idle_timeout_s, settings.session_max_lifetime_s, context.admission.retry_after_s)
        await loop.run()
    except Exception:  # a server bug: logged here, never shown to the client
        log.exception("session %s failed", dialect.session_id)
        await dialect.abort()
        await context.sink.send(dialect.error_event(ProtocolError(ErrorCode.INTERNAL, "internal error; the session ends")))
        await context.sink.close(status.WS_1011_INTERNAL_ERROR)


async def _next_event(websocket: WebSocket, limits: FrameLimits = FrameLimits()) -> dict | ProtocolError | None:
    """The next JSON object, a ProtocolError for a bad frame, or None once disconnected."""
    message = await websocket.receive()
    if message["type"] == "websocket.disconnect":
        return None
    try:
        return decode_frame(message, limits)
    except ProtocolError as error:
        return error
