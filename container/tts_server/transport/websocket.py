"""The WebSocket endpoint of every family: admits the session, knows its family (its own path says,
or on the shared /invocations-bidirectional-stream the registry recognises it by the query
string, then the first message), asks for an API key where API_KEYS is set, feeds the dialect."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from starlette import status
from starlette.websockets import WebSocket

from ..admission import Admission, Slot
from ..settings import Settings
from ..wire.errors import ErrorCode, ProtocolError
from ..wire.frames import FrameLimits, decode_frame
from .dialect import Opening, SessionContext
from .keys import refusal as key_refusal
from .outbox import Outbox
from .session_loop import GOODBYE_TIMEOUT_S, SessionLoop
from .state import server_state

if TYPE_CHECKING:
    from .family import Families, Family

log = logging.getLogger(__name__)
# A refused session is told in its own dialect, so the refusal waits this long for the
# first message (clients send it at once); without one it is told in the canonical one.
REFUSAL_WAIT_S = 1.0


def socket_endpoint(family: Family | None = None):
    """The WebSocket endpoint: a family's own path (`family`), or the shared one (None: recognised)."""
    async def endpoint(websocket: WebSocket) -> None:
        await bidirectional_stream(websocket, family)

    return endpoint


async def bidirectional_stream(websocket: WebSocket, family: Family | None = None) -> None:
    state = server_state(websocket)
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
    opening = Opening(websocket.url.path, dict(websocket.path_params), dict(websocket.query_params),
                      dict(websocket.headers))
    try:
        if refusal:
            await _refuse(websocket, outbox, refusal, family, state.families, opening)
            return
        await _serve(websocket, outbox, family, opening)
    finally:
        if slot:
            slot.release()


async def _refuse(websocket: WebSocket, outbox: Outbox, refusal: ProtocolError, family: Family | None,
                  families: Families, opening: Opening) -> None:
    """Shed at once: never queued, the session never starts."""
    try:
        first = await asyncio.wait_for(_next_event(websocket), REFUSAL_WAIT_S)
    except TimeoutError:
        first = None
    family = family or families.recognise(opening.query, first if isinstance(first, dict) else {})
    await outbox.send(family.dialect.error_event(refusal))
    await outbox.close(status.WS_1013_TRY_AGAIN_LATER, str(refusal.code))


async def _serve(websocket: WebSocket, outbox: Outbox, family: Family | None, opening: Opening) -> None:
    state = server_state(websocket)
    settings, families = state.settings, state.families
    limits = settings.frame_limits
    try:  # a client that never says what it wants holds its slot no longer than an idle one
        first = await asyncio.wait_for(_next_event(websocket, limits), settings.session_idle_timeout_s)
    except TimeoutError:
        idle = ProtocolError(ErrorCode.IDLE_TIMEOUT, f"no first message within {settings.session_idle_timeout_s:g} s "
                             f"({Settings.variable('session_idle_timeout_s')}); open a new session when needed")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(GOODBYE_TIMEOUT_S):
                await outbox.send((family or families.default).dialect.error_event(idle))
                await outbox.close(status.WS_1000_NORMAL_CLOSURE, str(idle.code))
        return
    if first is None:
        return
    if isinstance(first, ProtocolError):
        first = {"type": None}  # an unreadable first frame is a missing open: fatal
    family = family or families.recognise(opening.query, first)
    context = SessionContext(outbox, state.runtime, settings, state.admission, opening, family.voices,
                             state.family_settings[family.settings])
    dialect = family.dialect(context)
    unauthorised = key_refusal(family.keys, settings.api_keys, opening.headers, opening.query, first)
    if unauthorised is not None:
        await outbox.send(dialect.error_event(unauthorised))
        await outbox.close(status.WS_1008_POLICY_VIOLATION, str(unauthorised.code))
        return
    try:
        if not await dialect.start(first):
            return
        loop = SessionLoop(dialect, lambda: _next_event(websocket, limits), state.lifecycle,
                           settings.session_idle_timeout_s, settings.session_max_lifetime_s, state.admission.retry_after_s)
        await loop.run()
    except Exception:  # a server bug: logged here, never shown to the client
        log.exception("session %s failed", dialect.session_id)
        await dialect.abort()
        await outbox.send(dialect.error_event(ProtocolError(ErrorCode.INTERNAL, "internal error; the session ends")))
        await outbox.close(status.WS_1011_INTERNAL_ERROR)


async def _next_event(websocket: WebSocket, limits: FrameLimits = FrameLimits()) -> dict | ProtocolError | None:
    """The next JSON object, a ProtocolError for a bad frame, or None once disconnected."""
    message = await websocket.receive()
    if message["type"] == "websocket.disconnect":
        return None
    try:
        return decode_frame(message, limits)
    except ProtocolError as error:
        return error
