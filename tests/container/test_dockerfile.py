"""container/Dockerfile can't be built here (no Docker engine): check what it promises."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "container" / "Dockerfile"
REQUIREMENTS = REPO / "container" / "requirements.txt"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    logical, pending = [], ""
    for line in DOCKERFILE.read_text().splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    return [(text.split(None, 1)[0].upper(), text.split(None, 1)[1].strip()) for text in logical]


def args(name: str) -> list[str]:
    return [a for i, a in instructions() if i == name]


def env() -> dict[str, str]:
    values = {}
    for arg in args("ENV"):
        for pair in shlex.split(arg):
            key, _, value = pair.partition("=")
            values[key] = value
    return values


def test_cuda_runtime_base_with_python_312():
    [base] = args("FROM")
    assert re.fullmatch(r"nvidia/cuda:13\.\d+\.\d+-runtime-ubuntu24\.04", base)  # 24.04 ships 3.12
    assert any("apt-get install" in a and "python3" in a.split() for a in args("RUN"))


def test_torch_is_pinned_past_the_advisory():
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)$", REQUIREMENTS.read_text(), re.M))
    major, minor = map(int, pins["torch"].split(".")[:2])
    assert (major, minor) >= (2, 10)  # PYSEC-2026-2286 affects older releases


def test_requirements_file_is_the_single_source_for_image_and_venv():
    assert "container/requirements.txt /tmp/requirements.txt" in args("COPY")
    installs = [cmd for run in args("RUN") for cmd in run.split("&&") if "pip install" in cmd]
    assert any(cmd.split()[-2:] == ["-r", "/tmp/requirements.txt"] for cmd in installs)
    for cmd in installs:  # nothing installed beside the file, except pip itself
        assert "-r /tmp/requirements.txt" in cmd or cmd.split()[-2:] == ["--upgrade", "pip"], cmd
    assert "-r container/requirements.txt" in (REPO / "requirements.txt").read_text().splitlines()


def test_sagemaker_bidirectional_streaming_label():
    assert "com.amazonaws.sagemaker.capabilities.bidirectional-streaming=true" in args("LABEL")


def test_runs_as_a_non_root_user():
    users = args("USER")
    assert users and users[-1] not in ("root", "0")
    assert any("useradd" in a and users[-1] in a.split() for a in args("RUN"))


def test_serves_on_8080_with_serve_as_entrypoint():
    assert args("EXPOSE") == ["8080"]
    [entrypoint] = args("ENTRYPOINT")
    assert json.loads(entrypoint) == ["serve"]
    assert "/opt/program" in env()["PATH"].split(":")
    assert "container/serve /opt/program/serve" in args("COPY")
    assert env()["PORT"] == "8080"


def test_offline_model_from_opt_ml_model():
    assert env()["HF_HUB_OFFLINE"] == "1"
    assert env()["MODEL_DIR"] == "/opt/ml/model"


def test_server_and_client_package_are_copied_side_by_side():
    copies = args("COPY")
    assert "container/tts_server /opt/program/tts_server" in copies
    assert "tts_client /opt/program/tts_client" in copies
    for source in (c.split()[0] for c in copies):
        assert (REPO / source).exists(), source


def test_build_context_is_container_and_client_only():
    from stacks.endpoint.image import BUILD_CONTEXT_EXCLUDE

    dockerignore = [line for line in (REPO / ".dockerignore").read_text().splitlines()
                    if line and not line.startswith("#")]
    assert dockerignore == BUILD_CONTEXT_EXCLUDE
    sent = {c.split()[0].split("/")[0] for c in args("COPY")}
    assert sent == {"container", "tts_client"}


@pytest.mark.parametrize("name", ["ENTRYPOINT", "CMD"])
def test_exec_form_only(name):
    for value in args(name):
        assert value.startswith("["), f"{name} {value}: shell form would not forward signals"
