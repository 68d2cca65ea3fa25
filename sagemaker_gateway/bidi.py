"""One InvokeEndpointWithBidirectionalStream call relayed to the container's WebSocket.

States: connecting -> relaying -> ending. The client's payloads reach the container as
binary frames (SageMaker's behaviour unless DataType is UTF8, and the case a container
most often gets wrong); `utf8_as_text` forwards UTF8 parts as text frames instead.
Container frames come back as PayloadPart events; a frame longer than `max_part_bytes`,
or sent in WebSocket fragments, comes back as PARTIAL parts ending with a COMPLETE one.
When the client ends its input stream, the container's socket is torn down at once, as
SageMaker does ("the connection is maintained until the client closes it or the model
indicates completion"): what the container had not sent by then is lost, so clients end
their input only after the session is over. `drain_seconds` > 0 lets the container finish
for that long instead (a gentler front door, for experiments).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Protocol

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException

from . import routes
from .eventstream import EnvelopeDecoder, EnvelopeError, PayloadPart, model_stream_error, payload_part

log = logging.getLogger(__name__)

_INPUT_ENDED = object()
_CLEAN_CLOSE_CODES = (1000, 1001)


@dataclass(frozen=True)
class BidiSettings:
    upstream: str  # http://host:port of the container
    max_part_bytes: int = 256 * 1024
    utf8_as_text: bool = False
    drain_seconds: float = 0  # after the client's input ends, how long the container may finish (0: SageMaker's teardown)


class StreamSender(Protocol):
    """What a bridge needs from the HTTP/2 connection it lives on."""

    async def send_headers(self, stream_id: int, headers: list[tuple[str, str]], end: bool) -> None: ...

    async def send_data(self, stream_id: int, data: bytes, end: bool) -> None: ...


class BidiBridge:
    def __init__(self, stream_id: int, headers: dict[str, str], sender: StreamSender, settings: BidiSettings):
        self.stream_id = stream_id
        self.headers = headers
        self._sender = sender
        self._settings = settings
        self._decoder = EnvelopeDecoder()
        self._inbox: asyncio.Queue = asyncio.Queue()
        self._task = asyncio.create_task(self._run(), name=f"bidi-{stream_id}")

    # -- fed by the HTTP/2 connection ------------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        try:
            for part in self._decoder.feed(data):
                self._inbox.put_nowait(part)
        except EnvelopeError as error:
            self._inbox.put_nowait(error)
        if self._decoder.ended:
            self._inbox.put_nowait(_INPUT_ENDED)

    def input_ended(self) -> None:
        self._inbox.put_nowait(_INPUT_ENDED)

    def abort(self) -> None:
        self._task.cancel()

    # -- the relay -------------------------------------------------------------------------

    async def _run(self) -> None:
        match = routes.BIDI.match(self.headers.get(":path", ""))
        if match is None or self.headers.get(":method") != "POST":
            await self._reply(*routes.service_error(404, "UnknownOperationException", "unknown operation"))
            return
        if not routes.is_signed(self.headers):
            await self._reply(*routes.service_error(403, "MissingAuthenticationTokenException", "request is not SigV4-signed"))
            return
        url = routes.websocket_url(self._settings.upstream, self.headers)
        try:
            websocket = await connect(url, max_size=None, open_timeout=10)
        except (OSError, TimeoutError, WebSocketException) as error:  # the container refused or is not there
            log.warning("container WebSocket %s failed: %s", url, error)
            await self._reply(*routes.model_error(502, str(error).encode(), match["name"]))
            return
        async with websocket:
            await self._sender.send_headers(self.stream_id, [
                (":status", "200"), ("content-type", routes.EVENT_STREAM),
                ("x-amzn-invoked-production-variant", "AllTraffic"),
            ], False)
            to_container = asyncio.create_task(self._to_container(websocket))
            try:
                await self._to_client(websocket)
            finally:
                to_container.cancel()

    async def _reply(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        await self._sender.send_headers(self.stream_id, [(":status", str(status)), *headers], False)
        await self._sender.send_data(self.stream_id, body, True)

    async def _to_container(self, websocket: ClientConnection) -> None:
        pieces: list[bytes] = []
        while True:
            item = await self._inbox.get()
            if item is _INPUT_ENDED:
                break
            if isinstance(item, EnvelopeError):
                await self._sender.send_data(self.stream_id, model_stream_error(str(item), "InvalidEventStream"), False)
                await websocket.close(1008, "invalid event stream")
                return
            part: PayloadPart = item
            pieces.append(part.data)
            if part.completion_state == "PARTIAL":
                continue
            message, pieces = b"".join(pieces), []
            text = self._settings.utf8_as_text and part.data_type == "UTF8"
            try:
                await websocket.send(message.decode("utf-8") if text else message)
            except ConnectionClosed:
                return
        # The client will send nothing more: SageMaker ends the container's socket now.
        if self._settings.drain_seconds > 0:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(websocket.wait_closed(), self._settings.drain_seconds)
        await websocket.close(1000, "the client ended its input stream")

    async def _to_client(self, websocket: ClientConnection) -> None:
        limit = self._settings.max_part_bytes
        try:
            while True:
                held, data_type = None, "BINARY"
                async for fragment in websocket.recv_streaming():
                    data_type = "UTF8" if isinstance(fragment, str) else "BINARY"
                    data = fragment.encode("utf-8") if isinstance(fragment, str) else fragment
                    for start in range(0, len(data), limit):
                        if held is not None:
                            await self._send(payload_part(held, data_type, "PARTIAL"))
                        held = data[start:start + limit]
                await self._send(payload_part(held or b"", data_type, "COMPLETE"))
        except ConnectionClosed:
            pass
        code, reason = websocket.close_code, websocket.close_reason
        if code not in _CLEAN_CLOSE_CODES:
            message = f"the model container closed the stream with WebSocket code {code}" + (f": {reason}" if reason else "")
            await self._send(model_stream_error(message))
        await self._sender.send_data(self.stream_id, b"", True)

    async def _send(self, event: bytes) -> None:
        await self._sender.send_data(self.stream_id, event, False)
