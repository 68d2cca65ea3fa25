#!/usr/bin/env python3
"""A stand-in for the `docker` CLI, installed on PATH by tests/container/test_image_scripts.py.

FAKE_DOCKER_MODE=no-engine: `docker info` fails as the CLI does without an engine.
FAKE_DOCKER_MODE=engine: every call succeeds; `docker run --detach ... IMAGE serve` starts
the real server (container/serve) on the published port with the mounted model directory and
the `--env NAME=VALUE` settings, as the image would, and `docker rm --force` stops it. Every
call is appended to $FAKE_DOCKER_STATE/calls.jsonl.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

STATE = Path(os.environ["FAKE_DOCKER_STATE"])
SERVE = Path(__file__).resolve().parents[2] / "container" / "serve"


def option(argv: list[str], name: str) -> list[str]:
    return [argv[i + 1] for i, word in enumerate(argv[:-1]) if word == name]


def run(argv: list[str]) -> int:
    name = option(argv, "--name")[0]
    [publish] = option(argv, "--publish")
    host, port, _ = publish.split(":")
    [volume] = [v for v in option(argv, "--volume") if v.endswith(":/opt/ml/model:ro")]
    settings = dict(pair.split("=", 1) for pair in option(argv, "--env"))
    environment = os.environ | settings | {"HOST": host, "PORT": port, "MODEL_DIR": volume.split(":")[0]}
    log = open(STATE / f"{name}.log", "wb")
    server = subprocess.Popen([sys.executable, str(SERVE)], env=environment, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    (STATE / f"{name}.pid").write_text(str(server.pid))
    with open(STATE / "started.pids", "a") as started:
        started.write(f"{server.pid}\n")
    print(f"{name}-id")
    return 0


def running(name: str) -> bool:
    pid_file = STATE / f"{name}.pid"
    try:
        status = Path(f"/proc/{pid_file.read_text()}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


def main(argv: list[str]) -> int:
    with open(STATE / "calls.jsonl", "a") as calls:
        calls.write(json.dumps(argv) + "\n")
    if os.environ.get("FAKE_DOCKER_MODE") == "no-engine":
        if argv[:1] == ["info"]:
            print("Cannot connect to the Docker daemon at unix:///var/run/docker.sock.", file=sys.stderr)
            return 1
        return 0
    if argv[:1] == ["run"]:
        return run(argv)
    if argv[:1] == ["inspect"]:
        print("true" if running(argv[-1]) else "false")
    elif argv[:1] == ["logs"]:
        log = STATE / f"{argv[-1]}.log"
        sys.stdout.write(log.read_text() if log.exists() else "")
    elif argv[:2] == ["rm", "--force"]:
        pid_file = STATE / f"{argv[-1]}.pid"
        if pid_file.exists():
            try:
                os.killpg(int(pid_file.read_text()), signal.SIGTERM)
            except ProcessLookupError:
                pass
            pid_file.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
