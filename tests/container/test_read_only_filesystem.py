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

import pytest
from dockerfile_reader import env as image_env
from running_server import SERVE, RunningServer, free_port, stop_server, wait_until_ready

# In a private mount namespace: the checkout at /srv/checkout (it may live under /tmp, which
# is replaced next), a fresh /tmp and /home/tts (the image's writable places), an empty
# read-only model directory, then everything else remounted read-only.
CHECKOUT_MOUNT = "/srv/checkout"
NAMESPACE_SETUP = """
set -e
mount -t tmpfs -o size=1m tmpfs /srv && mkdir -p "$MODEL_DIR" /srv/checkout
mount --bind "$CHECKOUT" /srv/checkout
mount --bind "$WRITABLE/tmp" /tmp
mount -t tmpfs -o size=64m tmpfs /home && mkdir -p "$HOME"
mount -o remount,ro /srv && mount -o remount,bind,ro /srv/checkout
mount -o remount,bind,ro /
exec "$@"
"""


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
                   "CHECKOUT": str(SERVE.parents[1]),
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
