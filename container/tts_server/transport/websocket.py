"""WebSocket /invocations-bidirectional-stream: reads frames, picks the dialect, feeds it."""

from __future__ import annotations

from starlette.websockets import WebSocket

from ..dialects.canonical import CanonicalDialect, error_event
from ..protocol.errors import ErrorCode, ProtocolError
from ..protocol.frames import decode_frame
from .outbox import Outbox

TRY_AGAIN_LATER = 1013
MODEL_LOADING_RETRY_AFTER_S = 5


async def bidirectional_stream(websocket: WebSocket) -> None:
    runtime = websocket.app.state.runtime
    settings = websocket.app.state.settings
    await websocket.accept()
    outbox = Outbox(websocket)
    if not runtime.ready:
        error = ProtocolError(ErrorCode.MODEL_LOADING, "the model is still loading; retry shortly",
                              retry_after=MODEL_LOADING_RETRY_AFTER_S)
        await outbox.send(error_event(error))
        await outbox.close(TRY_AGAIN_LATER, "model loading")
        return
    dialect = CanonicalDialect(outbox, runtime, settings.max_pending_responses)
    first = await _next_event(websocket)
    if first is None:
        return
    if isinstance(first, ProtocolError):
        first = {"type": None}  # an unreadable first frame is a missing open: fatal
    if not await dialect.start(first):
        return
    while True:
        event = await _next_event(websocket)
        if event is None:
            await dialect.abort()
            return
        if isinstance(event, ProtocolError):
            await dialect.report(event)
        elif not await dialect.handle(event):
            return


async def _next_event(websocket: WebSocket) -> dict | ProtocolError | None:
    """The next JSON object, a ProtocolError for a bad frame, or None once disconnected."""
    message = await websocket.receive()
    if message["type"] == "websocket.disconnect":
        return None
    try:
        return decode_frame(message)
    except ProtocolError as error:
        return error
