"""`make image`, `make smoke-image` / scripts/smoke_image.sh and the CDK deploy's build
settings, driven through a stand-in `docker` (fake_docker.py) on PATH: there is no Docker
engine here. With engine, the smoke test runs the real server where the image would run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from running_server import free_port

REPO = Path(__file__).resolve().parents[2]
FAKE = Path(__file__).with_name("fake_docker.py")
VENV = Path(sys.executable).parent.parent


@pytest.fixture
def docker(tmp_path):
    """PATH with a fake `docker`; returns (environment, calls) where calls() lists the argv of each call."""
    bin_dir, state = tmp_path / "bin", tmp_path / "state"
    bin_dir.mkdir()
    state.mkdir()
    (bin_dir / "docker").write_text(f"#!/bin/sh\nexec {sys.executable} {FAKE} \"$@\"\n")
    (bin_dir / "docker").chmod(0o755)
    environment = os.environ | {"PATH": f"{bin_dir}:/usr/bin:/bin", "FAKE_DOCKER_STATE": str(state)}

    def calls() -> list[list[str]]:
        log = state / "calls.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    return environment, calls, state


def run(command: list[str], environment: dict, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=timeout)


MAKE = ["make", f"VENV={VENV}"]


@pytest.mark.parametrize("command", [[*MAKE, "image"], [*MAKE, "smoke-image"], ["scripts/smoke_image.sh"]])
def test_without_a_docker_engine_both_say_skipped_and_succeed(docker, command):
    environment, calls, _ = docker
    result = run(command, environment | {"FAKE_DOCKER_MODE": "no-engine"})

    assert result.returncode == 0, result.stdout + result.stderr
    assert "skipped: no Docker engine here" in result.stdout
    assert [c for c in calls() if c[:1] != ["info"]] == []  # nothing built, nothing run


def test_without_docker_at_all_the_smoke_test_is_skipped(tmp_path):
    bin_dir = tmp_path / "bin"  # only what the script needs before it looks for docker
    bin_dir.mkdir()
    for tool in ("bash", "dirname"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    result = run([str(bin_dir / "bash"), "scripts/smoke_image.sh"], os.environ | {"PATH": str(bin_dir)})
    assert (result.returncode, "skipped" in result.stdout) == (0, True), result.stdout + result.stderr


def test_make_image_builds_one_platform_without_attestations_with_docker_media_types(docker):
    environment, calls, _ = docker
    result = run([*MAKE, "image", "IMAGE=tts:test"], environment | {"FAKE_DOCKER_MODE": "engine"})

    assert result.returncode == 0, result.stdout + result.stderr
    [build] = [c for c in calls() if c[:2] == ["buildx", "build"]]
    flags = " ".join(build)
    for flag in ("--platform linux/amd64", "--provenance=false", "--sbom=false",
                 "--output type=docker,oci-mediatypes=false", "--tag tts:test", "-f container/Dockerfile"):
        assert flag in flags, (flag, build)
    assert build[-1] == "."


def test_cdk_deploy_builds_without_default_attestations():
    result = run([*MAKE, "-n", "deploy"], os.environ)
    [cdk] = [line for line in result.stdout.splitlines() if "cdk --app" in line]
    assert "BUILDX_NO_DEFAULT_ATTESTATIONS=1" in cdk.split()


def wait_until_gone(pids: list[int], timeout: float = 30) -> list[int]:
    deadline = time.monotonic() + timeout
    while (alive := [p for p in pids if Path(f"/proc/{p}").exists()
                     and "State:\tZ" not in Path(f"/proc/{p}/status").read_text()]) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


def test_smoke_test_runs_the_image_as_sagemaker_does_and_validates_it(docker, tmp_path):
    environment, calls, state = docker
    model = tmp_path / "model"
    model.mkdir()
    result = run(["scripts/smoke_image.sh"], environment | {
        "FAKE_DOCKER_MODE": "engine", "IMAGE": "tts:test", "MODEL_DIR": str(model), "PORT": str(free_port()),
        "PYTHON": sys.executable, "VALIDATE_ARGS": "--checks http.invocations,session.several_messages",
        # The checks speak Japanese: the other languages' G2P would double the server's start-up.
        "DOCKER_RUN_ARGS": "--env LANGUAGES=ja",
    }, timeout=300)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "/ping answered 200" in result.stdout
    assert "validator exit status 0" in result.stdout
    [container] = [c for c in calls() if c[:1] == ["run"]]
    assert container[-2:] == ["tts:test", "serve"]  # SageMaker's `docker run <image> serve`
    assert container[-4:-2] == ["--env", "LANGUAGES=ja"]  # DOCKER_RUN_ARGS, before the image
    assert f"{model}:/opt/ml/model:ro" in container  # the weights, read-only
    words = " ".join(container)
    assert "--read-only" in words and "--tmpfs /tmp" in words and "--tmpfs /home/tts:uid=10001" in words
    assert ["rm", "--force", container[container.index("--name") + 1]] in calls()  # cleaned up
    started = [int(p) for p in (state / "started.pids").read_text().split()]
    assert wait_until_gone(started) == []


def test_smoke_test_fails_when_the_image_is_missing(docker):
    environment, calls, _ = docker
    fake_inspect_fails = environment | {"FAKE_DOCKER_MODE": "engine", "IMAGE": "absent:tag"}
    # The fake answers every `image inspect`; make this one fail as Docker would.
    bin_dir = Path(environment["PATH"].split(":")[0])
    (bin_dir / "docker").write_text(
        f"#!/bin/sh\n[ \"$1 $2\" = 'image inspect' ] && exit 1\nexec {sys.executable} {FAKE} \"$@\"\n")
    result = run(["scripts/smoke_image.sh"], fake_inspect_fails)

    assert result.returncode == 2
    assert "image absent:tag not found; build it with make image" in result.stderr
