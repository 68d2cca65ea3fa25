"""A server with the bug the blog warns about: it closes the session after the first response.

It is the real server behind a WebSocket relay that hangs up once it has relayed the first
response.done, the way a handler that treats the socket like one HTTP cycle would.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

from websockets.asyncio.client import connect
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed


@contextlib.asynccontextmanager
async def closes_after_first_response(upstream_ws_url: str):
    """Yields the broken server's WebSocket URL."""

    async def relay(client):
        async with connect(upstream_ws_url, max_size=None) as upstream:
            async def to_upstream():
                async for frame in client:
                    await upstream.send(frame)

            async def to_client():
                async for frame in upstream:
                    await client.send(frame)
                    if isinstance(frame, str) and json.loads(frame).get("type") == "response.done":
                        return  # "the response is done, so is the connection"

            tasks = [asyncio.create_task(to_upstream()), asyncio.create_task(to_client())]
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in tasks:
                task.cancel()
            with contextlib.suppress(ConnectionClosed, asyncio.CancelledError):
                await asyncio.gather(*tasks)
        await client.close(1000)

    async with serve(relay, "127.0.0.1", 0, max_size=None) as server:
        port = server.sockets[0].getsockname()[1]
        yield f"ws://127.0.0.1:{port}/invocations-bidirectional-stream"
