"""The speech server for the soak and the fuzzer: started on a free loopback port (its log in
a file, so the scripts can count the errors it logged), or one given by URL."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Target:
    url: str
    process: subprocess.Popen | None = None
    pid: int | None = None
    log: object = None

    @property
    def ws_url(self) -> str:
        return self.url.replace("http", "ws", 1) + "/invocations-bidirectional-stream"

    def rss_mb(self) -> float | None:
        """The server's resident memory, from /proc (None when it is not on this machine)."""
        try:
            status = Path(f"/proc/{self.pid}/status").read_text()
        except (OSError, TypeError):
            return None
        kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
        return kb / 1024

    def logged_errors(self) -> list[str]:
        if self.log is None:
            return []
        self.log.seek(0)
        lines = self.log.read().decode(errors="replace").splitlines()
        return [line for line in lines if " ERROR " in line or line.startswith("Traceback")]

    def stop(self) -> int | None:
        if self.process is None:
            return None
        self.process.terminate()
        try:
            return self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def start(url: str | None, pid: int | None, env: dict[str, str]) -> Target:
    if url:
        return Target(url.rstrip("/"), pid=pid)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tempfile.TemporaryFile()
    environment = os.environ | {"HOST": "127.0.0.1", "PORT": str(port)} | env
    process = subprocess.Popen([sys.executable, str(REPO / "container" / "serve")], env=environment,
                               stdout=log, stderr=subprocess.STDOUT)
    return Target(f"http://127.0.0.1:{port}", process, process.pid, log)


async def load(target: Target, ready_within: float = 180) -> dict:
    """/ping's load figures, once the server answers 200."""
    deadline = time.monotonic() + ready_within
    async with httpx.AsyncClient(base_url=target.url, timeout=10) as http:
        while time.monotonic() < deadline:
            if target.process is not None and target.process.poll() is not None:
                raise RuntimeError("the server exited")
            try:
                reply = await http.get("/ping")
                if reply.status_code == 200:
                    return reply.json()["load"]
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.2)
    raise TimeoutError("the server did not answer /ping with 200")


async def wait_for_free_slots(target: Target, within: float = 10) -> dict:
    """/ping's load once no session or synthesis slot is held (or as it is after `within` s)."""
    deadline = time.monotonic() + within
    while True:
        now = await load(target)
        if (now["sessions"] == 0 and now["syntheses"] == 0) or time.monotonic() > deadline:
            return now
        await asyncio.sleep(0.05)


def report(title: str, figures: dict, problems: list[str], kind: str, json_path: Path | None) -> int:
    """Print the figures and the first problems, write the JSON report; the exit status.
    `kind` names a problem in the output ("violation" for the soak, "problem" for the fuzzer)."""
    print(f"\n{title}")
    for key, value in figures.items():
        print(f"  {key}: {value}")
    for problem in problems[:20]:
        print(f"{kind.upper()} {problem}")
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(figures | {f"{kind}_list": problems}, indent=2))
    print("clean" if not problems else f"{len(problems)} {kind}s")
    return 1 if problems else 0
