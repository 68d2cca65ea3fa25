"""The server needs to write nowhere but its home and /tmp, and no root is required of
the files it reads: run the real server with the image's environment on a filesystem
that is read-only everywhere else (code, venv, interpreter, model directory), the way
the image's user 10001 sees it, and have it load, warm up and speak."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import pytest
from dockerfile_reader import env as image_env
from running_server import SERVE, RunningServer, free_port, stop_server, wait_until_ready

# In a private mount namespace: the checkout at /srv/checkout (it may live under /tmp, which
# is replaced next), a fresh /tmp and /home/tts (the image's writable places), an empty
# read-only model directory, then everything else remounted read-only. What the interpreter
# needs from under /tmp or /home (a venv there: `make setup` in a clone under /tmp) is
# parked under /srv first and bound back, read-only, at its own path inside the fresh mounts.
CHECKOUT_MOUNT = "/srv/checkout"
NAMESPACE_SETUP = """
set -e
IFS='
'
mount -t tmpfs -o size=1m tmpfs /srv && mkdir -p "$MODEL_DIR" /srv/checkout
mount --bind "$CHECKOUT" /srv/checkout
n=0
for path in $KEEP; do n=$((n + 1)); mkdir /srv/keep$n; mount --bind "$path" /srv/keep$n; done
mount --bind "$WRITABLE/tmp" /tmp
mount -t tmpfs -o size=64m tmpfs /home && mkdir -p "$HOME"
n=0
for path in $KEEP; do
  n=$((n + 1)); mkdir -p "$path"; mount --bind /srv/keep$n "$path"; mount -o remount,bind,ro "$path"
done
mount -o remount,ro /srv && mount -o remount,bind,ro /srv/checkout
mount -o remount,bind,ro /
exec "$@"
"""
HIDDEN = (Path("/tmp"), Path("/home"))  # replaced by fresh mounts above


def interpreter_paths_to_keep() -> list[str]:
    """The venv and interpreter trees that live under /tmp or /home (outermost ones only)."""
    trees = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, Path(sys.executable).resolve().parents[1])}
    hidden = [t for t in trees if any(t.is_relative_to(h.resolve()) for h in HIDDEN)]
    return sorted(str(t) for t in hidden if not any(t != o and t.is_relative_to(o) for o in hidden))


def private_mounts_allowed() -> bool:
    unshare = shutil.which("unshare")
    probe = [unshare, "--mount", "--propagation", "private", "sh", "-c", "mount -t tmpfs tmpfs /mnt"] if unshare else []
    return bool(unshare) and subprocess.run(probe, capture_output=True).returncode == 0


@pytest.fixture
def read_only_server(tmp_path):
    if not private_mounts_allowed():
        pytest.skip("needs `unshare --mount` (root or CAP_SYS_ADMIN) to remount the filesystem read-only")
    (tmp_path / "tmp").mkdir()
    port = free_port()
    environment = {**image_env(), "WRITABLE": str(tmp_path), "MODEL_DIR": "/srv/ml/model",
                   # Where this checkout and venv keep what the image has in /opt/program, /opt/venv.
                   "PATH": "/usr/bin:/bin", "PYTHONPATH": f"{CHECKOUT_MOUNT}:{CHECKOUT_MOUNT}/container",
                   "CHECKOUT": str(SERVE.parents[1]), "KEEP": "\n".join(interpreter_paths_to_keep()),
                   "HOST": "127.0.0.1", "PORT": str(port)}
    environment.pop("VIRTUAL_ENV", None)
    command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", NAMESPACE_SETUP, "sh",
               sys.executable, f"{CHECKOUT_MOUNT}/{SERVE.relative_to(SERVE.parents[1])}"]
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(command, env=environment, stdout=log, stderr=subprocess.STDOUT)
    server = RunningServer(port, process, log)
    try:
        wait_until_ready(server, timeout=180)
        yield server
    finally:
        stop_server(server)


def test_server_loads_and_speaks_writing_only_to_home_and_tmp(read_only_server):
    request = urllib.request.Request(
        read_only_server.http_url + "/invocations",
        data=json.dumps({"text": "こんにちは。", "format": "wav"}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as reply:
        body = json.loads(reply.read())
    assert reply.status == 200 and len(body["audios"]) == 1 and len(body["audios"][0]) > 1000
    log = read_only_server.log_tail(1 << 20)
    assert "Read-only file system" not in log, log  # no write was tried and swallowed
    assert "Traceback" not in log, log
