"""The real speech server as a subprocess: started through the same `container/serve`
entrypoint the image runs, on a free loopback port, with the real embedded model.

Import it as `from running_server import start_server` (not from conftest: several
conftest modules exist under tests/ and only one can own that name)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from waiting import until_sync


REPO = Path(__file__).resolve().parent.parent
SERVE = REPO / "container" / "serve"


@dataclass(frozen=True)
class RunningServer:
    port: int
    process: subprocess.Popen
    log: object  # the server's stdout and stderr
    load_gate: Path | None = None  # with gated=True: the model loads only once this file exists
    scratch: Path | None = None  # its TMPDIR (start_server), removed when it stops

    def open_load_gate(self) -> None:
        self.load_gate.touch()

    def log_tail(self, size: int = 4000) -> str:
        self.log.seek(0, 2)
        self.log.seek(max(0, self.log.tell() - size))
        return self.log.read().decode(errors="replace")

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/invocations-bidirectional-stream"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(env: dict[str, str] | None = None, wait: bool = True, timeout: float = 300,
                 gated: bool = False, languages: str | None = None) -> RunningServer:
    """`gated`: the model does not start loading before `open_load_gate()` (TTS_LOAD_GATE).
    `languages`: the LANGUAGES whose G2P it loads (None: all). A test's own server that needs
    no other language passes "ja": the other eight languages' G2P (English's spaCy above all)
    would double its start-up."""
    port = free_port()
    # A TMPDIR of its own: phonemizer copies libespeak-ng into a temporary directory that only a
    # clean exit removes, and stop_server kills (650 KB a copy, several a server, left in /tmp otherwise).
    scratch = Path(tempfile.mkdtemp(prefix="server-"))
    gate = scratch / "open" if gated else None
    # The engine is the test's choice: a MODEL_DIR, ENGINE or LANGUAGES in the developer's shell is not inherited.
    inherited = {k: v for k, v in os.environ.items() if k not in ("MODEL_DIR", "ENGINE", "DEVICE", "LANGUAGES")}
    chosen = {"LANGUAGES": languages} if languages else {}
    environment = inherited | {"HOST": "127.0.0.1", "PORT": str(port), "TMPDIR": str(scratch)} | chosen | (env or {})
    environment |= {"TTS_LOAD_GATE": str(gate)} if gate else {}
    # The log goes to a file: an unread pipe would fill up and stall the server mid-run.
    log = tempfile.TemporaryFile()
    process = subprocess.Popen([sys.executable, str(SERVE)], env=environment, stdout=log, stderr=subprocess.STDOUT)
    server = RunningServer(port, process, log, gate, scratch)
    if wait:
        wait_until_ready(server, timeout)
    return server


def ping_status(server: RunningServer) -> int | None:
    """/ping's status, or None while nothing listens yet."""
    if server.process.poll() is not None:
        raise RuntimeError(f"server exited: {server.log_tail()}")
    try:
        with urllib.request.urlopen(server.http_url + "/ping", timeout=10) as reply:
            return reply.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return None


def wait_until_listening(server: RunningServer, timeout: float = 300) -> int:
    """/ping's first answer (503 while loading, 200 once ready)."""
    return until_sync(lambda: ping_status(server), "the server to listen", timeout, poll=0.1)


def wait_until_ready(server: RunningServer, timeout: float = 300) -> None:
    until_sync(lambda: ping_status(server) == 200, "the model to load (/ping 200)", timeout, poll=0.1)


def stop_server(server: RunningServer) -> None:
    """At once: a graceful stop (SIGTERM) waits for sessions still open, up to SHUTDOWN_DEADLINE_S,
    which the tests that mean it (robustness/test_graceful_shutdown.py) send themselves."""
    server.process.kill()
    server.process.wait()
    server.log.close()
    if server.scratch is not None:
        shutil.rmtree(server.scratch, ignore_errors=True)
