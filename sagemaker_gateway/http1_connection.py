"""One HTTP/1.1 connection (h11): InvokeEndpoint and InvokeEndpointWithResponseStream.

boto3 speaks HTTP/1.1 with keep-alive. The body goes to the container's POST /invocations
as is; a 2xx reply comes back as is (or as PayloadPart events for the streaming call), any
other reply as SageMaker's 424 ModelError around the container's status and body.
"""

from __future__ import annotations

import asyncio
import contextlib

import h11
import httpx

from . import routes
from .eventstream import model_stream_error, response_payload

_READ_BYTES = 65536


class Http1Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, upstream: httpx.AsyncClient):
        self._reader = reader
        self._writer = writer
        self._upstream = upstream
        self._h11 = h11.Connection(h11.SERVER)

    async def serve(self) -> None:
        with contextlib.suppress(ConnectionError, h11.RemoteProtocolError):
            while (request := await self._next_request()) is not None:
                body = await self._read_body()
                await self._handle(request, body)
                if self._h11.our_state is not h11.DONE or self._h11.their_state is not h11.DONE:
                    return
                self._h11.start_next_cycle()

    async def _next_event(self):
        while True:
            event = self._h11.next_event()
            if event is not h11.NEED_DATA:
                return event
            self._h11.receive_data(await self._reader.read(_READ_BYTES))

    async def _next_request(self) -> h11.Request | None:
        event = await self._next_event()
        return event if isinstance(event, h11.Request) else None

    async def _read_body(self) -> bytes:
        chunks = []
        while isinstance(event := await self._next_event(), h11.Data):
            chunks.append(event.data)
        return b"".join(chunks)

    async def _handle(self, request: h11.Request, body: bytes) -> None:
        headers = {name.decode().lower(): value.decode() for name, value in request.headers}
        match = routes.INVOKE.match(request.target.decode())
        if match is None or request.method != b"POST":
            await self._reply(*routes.service_error(404, "UnknownOperationException", "unknown operation"))
            return
        if not routes.is_signed(headers):
            await self._reply(*routes.service_error(403, "MissingAuthenticationTokenException", "request is not SigV4-signed"))
            return
        forward = {k: v for k, v in headers.items() if k in ("content-type", "accept")}
        if "x-amzn-sagemaker-accept" in headers:  # how InvokeEndpointWithResponseStream sends Accept
            forward["accept"] = headers["x-amzn-sagemaker-accept"]
        upstream = self._upstream.build_request("POST", "/invocations", content=body, headers=forward)
        try:
            reply = await self._upstream.send(upstream, stream=True)
        except httpx.HTTPError as error:
            await self._reply(*routes.model_error(502, str(error).encode(), match["name"]))
            return
        try:
            if reply.status_code >= 300:
                await self._reply(*routes.model_error(reply.status_code, await reply.aread(), match["name"]))
            elif match["stream"]:
                await self._relay_stream(reply)
            else:
                content_type = reply.headers.get("content-type", "application/octet-stream")
                await self._reply(200, [("content-type", content_type), ("x-amzn-invoked-production-variant", "AllTraffic")],
                                  await reply.aread())
        finally:
            await reply.aclose()

    async def _relay_stream(self, reply: httpx.Response) -> None:
        content_type = reply.headers.get("content-type", "application/octet-stream")
        await self._send(h11.Response(status_code=200, headers=[
            ("content-type", routes.EVENT_STREAM), ("transfer-encoding", "chunked"),
            ("x-amzn-sagemaker-content-type", content_type), ("x-amzn-invoked-production-variant", "AllTraffic"),
        ]))
        try:
            async for chunk in reply.aiter_raw():
                await self._send(h11.Data(data=response_payload(chunk)))
        except httpx.HTTPError as error:
            await self._send(h11.Data(data=model_stream_error(f"the model container's stream broke: {error}")))
        await self._send(h11.EndOfMessage())

    async def _reply(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        await self._send(h11.Response(status_code=status, headers=[*headers, ("content-length", str(len(body)))]))
        await self._send(h11.Data(data=body))
        await self._send(h11.EndOfMessage())

    async def _send(self, event) -> None:
        if data := self._h11.send(event):
            self._writer.write(data)
            await self._writer.drain()
