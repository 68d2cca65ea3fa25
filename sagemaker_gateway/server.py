"""The gateway: one TLS listener on 127.0.0.1; ALPN picks HTTP/2 (bidirectional) or HTTP/1.1."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from .bidi import BidiSettings
from .certs import issue
from .h2_connection import H2Connection
from .http1_connection import Http1Connection


@dataclass
class RunningGateway:
    endpoint_url: str
    ca_file: Path
    server: asyncio.Server
    connections: set[asyncio.StreamWriter] = field(default_factory=set)

    async def close(self) -> None:
        self.server.close()
        # Dropped, not closed: a keep-alive client would hold wait_closed() forever, and a TLS
        # close waits up to asyncio's 30 s ssl_shutdown_timeout for a peer that never answers it.
        for writer in list(self.connections):
            writer.transport.abort()
        await self.server.wait_closed()


async def start_gateway(upstream: str, certs: Path, port: int = 8443, host: str = "127.0.0.1",
                        max_part_bytes: int = 256 * 1024, utf8_as_text: bool = False,
                        drain_seconds: float = 0) -> RunningGateway:
    tls = issue(certs)
    settings = BidiSettings(upstream.rstrip("/"), max_part_bytes=max_part_bytes, utf8_as_text=utf8_as_text,
                            drain_seconds=drain_seconds)
    http = httpx.AsyncClient(base_url=settings.upstream, timeout=httpx.Timeout(300, connect=10))

    async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        protocol = writer.get_extra_info("ssl_object").selected_alpn_protocol()
        connection = H2Connection(reader, writer, settings) if protocol == "h2" else Http1Connection(reader, writer, http)
        gateway.connections.add(writer)
        try:
            await connection.serve()
        finally:
            gateway.connections.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    server = await asyncio.start_server(on_connection, host, port, ssl=tls.context)
    bound = server.sockets[0].getsockname()[1]
    gateway = RunningGateway(f"https://{host}:{bound}", tls.ca_file, server)
    return gateway
