"""One HTTP/2 connection (h2): requests become BidiBridges; DATA flows under flow control."""

from __future__ import annotations

import asyncio
import contextlib

import h2.config
import h2.connection
import h2.events
import h2.exceptions

from .bidi import BidiBridge, BidiSettings

_READ_BYTES = 65536


class H2Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, settings: BidiSettings):
        self._reader = reader
        self._writer = writer
        self._settings = settings
        self._h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self._bridges: dict[int, BidiBridge] = {}
        self._window_changed = asyncio.Event()
        self._write_lock = asyncio.Lock()

    async def serve(self) -> None:
        self._h2.initiate_connection()
        await self._flush()
        try:
            while data := await self._reader.read(_READ_BYTES):
                for event in self._h2.receive_data(data):
                    self._on_event(event)
                await self._flush()
        except (ConnectionError, h2.exceptions.ProtocolError):
            pass
        finally:
            for bridge in self._bridges.values():
                bridge.abort()
            self._window_changed.set()

    def _on_event(self, event: h2.events.Event) -> None:
        match event:
            case h2.events.RequestReceived():
                self._bridges[event.stream_id] = BidiBridge(event.stream_id, dict(event.headers), self, self._settings)
            case h2.events.DataReceived():
                self._h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                if bridge := self._bridges.get(event.stream_id):
                    bridge.receive_data(event.data)
            case h2.events.StreamEnded():
                if bridge := self._bridges.get(event.stream_id):
                    bridge.input_ended()
            case h2.events.StreamReset():
                if bridge := self._bridges.pop(event.stream_id, None):
                    bridge.abort()
            case h2.events.WindowUpdated() | h2.events.RemoteSettingsChanged():
                self._window_changed.set()

    # -- the StreamSender interface used by bridges ----------------------------------------

    async def send_headers(self, stream_id: int, headers: list[tuple[str, str]], end: bool) -> None:
        with contextlib.suppress(h2.exceptions.StreamClosedError):
            self._h2.send_headers(stream_id, headers, end_stream=end)
        await self._flush()

    async def send_data(self, stream_id: int, data: bytes, end: bool) -> None:
        view = memoryview(data)
        try:
            while view:
                window = min(self._h2.local_flow_control_window(stream_id), self._h2.max_outbound_frame_size)
                if window <= 0:
                    self._window_changed.clear()
                    await self._window_changed.wait()
                    if self._writer.is_closing():
                        return
                    continue
                self._h2.send_data(stream_id, bytes(view[:window]))
                view = view[window:]
                await self._flush()
            if end:
                self._h2.end_stream(stream_id)
                self._bridges.pop(stream_id, None)
                await self._flush()
        except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
            self._bridges.pop(stream_id, None)

    async def _flush(self) -> None:
        async with self._write_lock:
            if data := self._h2.data_to_send():
                self._writer.write(data)
                with contextlib.suppress(ConnectionError):
                    await self._writer.drain()
