"""The real application in this process, on a loopback port, with a test double of the engine
(robustness tests need an engine that is fast, fails or floods on demand)."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from types import SimpleNamespace

import numpy as np
from in_process_server import serving_in_thread
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.uri import parse_uri

from tts_server.app import create_app
from tts_server.settings import Settings
from tts_server.engine.output import SegmentAudio
from tts_server.engine.tokens import Job, Piece
from tts_server.engine.voices import VoiceBook
from tts_server.runtime import ModelRuntime

SMALL_SOCKET_BUFFER = 32 * 1024  # so the kernel's loopback buffers do not hide the server's own


class CountingSynthesizer:
    """`samples` of a tone per sentence, at once; counts the sentences it assembled."""

    languages = ["ja"]
    backend = SimpleNamespace(name="counting-test-engine", device="cpu", precision="fp32", max_tokens=510)
    max_batch = 1

    def __init__(self, samples: int = 2400):
        self.samples = samples
        self.sentences = 0
        self._book = VoiceBook({"jf_alpha": np.zeros((510, 256), np.float32)}, 510)
        self.runner = self

    def language(self, requested, speaker_id=None):
        return requested or "ja"

    def detect(self, text, hint=None):
        return "ja"

    def voice_book(self, language):
        return self._book

    def tokenize(self, text, start, end, language):
        return [], []

    def prepare(self, text, start, end, style, speed, language):
        return Piece(text, start, end, [], [], [Job(tuple(range(end - start)), style, speed)], 0.0)

    def windowed(self, piece, rtf, voice=None):  # its pieces are one run each, windows or not
        return piece

    def run(self, jobs, control=None):
        return list(jobs)

    def assemble(self, piece, results, engine_seconds):
        self.sentences += 1
        return self.synthesize(piece.text, piece.start, piece.end, None, 1.0, "ja")

    def synthesize(self, text, start, end, style, speed, language):  # also the runtime's warm-up
        return SegmentAudio(np.full(self.samples, 0.1, np.float32), [], 0.001)


@contextlib.contextmanager
def serving(synthesizer, **settings):
    """The app on a port whose accepted sockets have small kernel send buffers."""
    # A sentence a piece: no fast first fragment, no growing pieces; no decoder statistics to record.
    settings = Settings(host="127.0.0.1", fast_first_fragment_chars=0, piece_growth="off", voice_statistics="none",
                        **settings)
    app = create_app(settings, ModelRuntime(lambda: synthesizer, settings))
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SMALL_SOCKET_BUFFER)
    sock.bind(("127.0.0.1", 0))
    with serving_in_thread(app, sock, timeout=30) as port:
        yield SimpleNamespace(port=port, app=app)


def small_receive_socket(port: int) -> socket.socket:
    """A connected client socket with a small receive buffer (set before connecting)."""
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SMALL_SOCKET_BUFFER)
    client.connect(("127.0.0.1", port))
    client.setblocking(False)
    return client


class RawWebSocket:
    """A blocking WebSocket client on a small-buffer socket that reads only when asked (client
    libraries read ahead into their own queues, which would hide the server's backpressure)."""

    def __init__(self, port: int, path: str = "/invocations-bidirectional-stream"):
        self.sock = small_receive_socket(port)
        self.sock.setblocking(True)
        self.protocol = ClientProtocol(parse_uri(f"ws://127.0.0.1:{port}{path}"), max_size=None)
        self.protocol.send_request(self.protocol.connect())
        self._flush()
        self.pending: list = []
        while self.protocol.state is not State.OPEN:
            self._read()

    def send(self, event: dict) -> None:
        self.protocol.send_binary(json.dumps(event).encode())
        self._flush()

    def next_frame(self) -> str | bytes:
        """The next message: str for a text frame, bytes for a binary one."""
        while not self.pending:
            self._read()
        frame = self.pending.pop(0)
        return frame.data.decode() if frame.opcode is Opcode.TEXT else bytes(frame.data)

    def close(self) -> None:
        self.sock.close()

    def _read(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("closed by the server")
        self.protocol.receive_data(data)
        self.pending += [e for e in self.protocol.events_received() if isinstance(e, Frame)]
        self._flush()

    def _flush(self) -> None:
        for chunk in self.protocol.data_to_send():
            self.sock.sendall(chunk)


def wait_until_still(read, settle_s: float = 1.0, limit_s: float = 60.0) -> int:
    """`read()` once it has stopped changing for `settle_s` (the server has paused)."""
    value, since, deadline = read(), time.monotonic(), time.monotonic() + limit_s
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = read()
        if now != value:
            value, since = now, time.monotonic()
        elif time.monotonic() - since >= settle_s:
            return value
    return value
