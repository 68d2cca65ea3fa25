"""The application served by uvicorn on a thread of this process, for the tests and benchmarks
that need its objects at hand (a test double of the engine, the runtime's model thread), where
`running_server` runs the image's entrypoint in a subprocess.

Import it as `from in_process_server import serving_in_thread` (scripts put tests/ on their path)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

import uvicorn
from waiting import until_sync

from tts_server.transport.state import app_state


@contextlib.contextmanager
def serving_in_thread(app, sock: socket.socket | None = None, log_level: str = "critical",
                      timeout: float = 600) -> Iterator[int]:
    """Serve `app` on `sock` (default: a free loopback port) until the block ends; yields the
    port once uvicorn listens and the model is ready (a real model may take minutes to load)."""
    if sock is None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, ws="websockets-sansio", log_level=log_level))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    runtime = app_state(app).runtime
    try:
        until_sync(lambda: server.started and runtime.ready, "the server to start", timeout)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
