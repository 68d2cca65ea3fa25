"""Which engine serves (SPEC §7): the embedded ONNX without weights, PyTorch from MODEL_DIR;
broken weights keep /ping at 503 with a one-line reason naming the file."""

import json
import socket
import urllib.error
import urllib.request

import pytest
import torch
from cores import ENGINE_THREADS
from running_server import start_server, stop_server

from tts_server.engine.factory import build_backend, choose_engine
from tts_server.engine.model_dir import ModelDir, ModelDirError


def ping(server) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(server.http_url + "/ping", timeout=5) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())
    except OSError:  # not listening yet
        return 0, {}


def wait_for_failure(server, timeout: float = 300) -> dict:
    """/ping's body once loading has failed (it must never turn 200)."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.process.poll() is None, server.log_tail()
        status, body = ping(server)
        assert status in (0, 503), body
        if body.get("status") == "failed":
            return body
        time.sleep(0.2)
    raise TimeoutError(server.log_tail())


def copy_layout(source, target, skip=()):
    for name in ("config.json", "kokoro-v1_0.pth", "SHA256SUMS"):
        if name not in skip:
            (target / name).symlink_to(source / name)
    (target / "voices").mkdir()
    for voice in (source / "voices").glob("*.pt"):
        (target / "voices" / voice.name).symlink_to(voice)


def test_auto_picks_torch_only_when_weights_are_there(tmp_path, model_dir):
    assert choose_engine("auto", None) == "onnx"
    assert choose_engine("auto", str(tmp_path)) == "onnx", "an empty MODEL_DIR means no weights"
    assert choose_engine("auto", str(model_dir)) == "torch"
    assert choose_engine("onnx", str(model_dir)) == "onnx"


def test_onnx_cannot_run_on_cuda():
    with pytest.raises(ModelDirError, match="DEVICE=cuda"):
        build_backend("onnx", "cuda")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without CUDA")
def test_cuda_asked_for_without_a_gpu_is_a_load_error(model_dir):
    with pytest.raises(ModelDirError, match="no CUDA device"):
        build_backend("torch", "cuda", str(model_dir))


def test_the_torch_engine_loads_with_the_network_blocked(model_dir, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError(f"network access while loading: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    backend = build_backend("torch", "cpu", str(model_dir), threads=ENGINE_THREADS)
    assert backend.device == "cpu" and "jf_alpha" in backend.voices
    assert backend.voices["jf_alpha"].shape == (510, 256)


def test_a_missing_file_is_named(tmp_path, model_dir):
    copy_layout(model_dir, tmp_path, skip=("kokoro-v1_0.pth",))
    with pytest.raises(ModelDirError, match=r"kokoro-v1_0\.pth: missing"):
        ModelDir(tmp_path).check()


def test_a_checksum_that_disagrees_is_named(tmp_path, model_dir):
    copy_layout(model_dir, tmp_path, skip=("SHA256SUMS",))
    lines = (model_dir / "SHA256SUMS").read_text().splitlines()
    tampered = ["0" * 64 + line[64:] if line.endswith("config.json") else line for line in lines]
    (tmp_path / "SHA256SUMS").write_text("\n".join(tampered) + "\n")
    with pytest.raises(ModelDirError, match=r"config\.json: SHA-256 [0-9a-f]{64} disagrees with SHA256SUMS"):
        ModelDir(tmp_path).check()


@pytest.fixture(scope="module")
def wrong_tensor_dir(tmp_path_factory, model_dir):
    """The real config and voices with a state dict whose decoder has one tensor of the wrong shape."""
    target = tmp_path_factory.mktemp("wrong-tensor")
    copy_layout(model_dir, target, skip=("kokoro-v1_0.pth", "SHA256SUMS"))
    state = torch.load(model_dir / "kokoro-v1_0.pth", map_location="cpu", weights_only=True)
    name = next(iter(state["decoder"]))
    state["decoder"][name] = torch.zeros(3, 3)
    torch.save(state, target / "kokoro-v1_0.pth")
    return target, name


def test_a_state_dict_that_does_not_load_is_named(wrong_tensor_dir):
    target, _ = wrong_tensor_dir
    with pytest.raises(ModelDirError, match=r"kokoro-v1_0\.pth: state dict does not load"):
        build_backend("torch", "cpu", str(target))


# One case per place a load fails (the directory's check, the state dict's load); which file
# each reason names is the tests' above.
@pytest.mark.parametrize("case", ["checksum", "tensor"])
def test_broken_weights_keep_ping_503_with_a_one_line_reason(case, tmp_path, model_dir, wrong_tensor_dir):
    if case == "checksum":
        copy_layout(model_dir, tmp_path, skip=("SHA256SUMS",))
        sums = (model_dir / "SHA256SUMS").read_text().replace((model_dir / "SHA256SUMS").read_text()[:8], "deadbeef", 1)
        (tmp_path / "SHA256SUMS").write_text(sums)
        target, expected = tmp_path, "disagrees with SHA256SUMS"
    else:
        target, expected = wrong_tensor_dir[0], "state dict does not load"
    server = start_server({"MODEL_DIR": str(target)}, wait=False)
    try:
        body = wait_for_failure(server)
        assert expected in body["reason"] and "\n" not in body["reason"]
        log = server.log_tail()
        (line,) = [entry for entry in log.splitlines() if "model failed to load" in entry]
        assert expected in line and "Traceback" not in log
    finally:
        stop_server(server)


def test_ping_names_engine_device_and_languages(speech_server, torch_server):
    status, body = ping(speech_server)
    assert status == 200
    assert (body["engine"], body["device"]) == ("kokoro-82m-int8-onnx", "cpu") and "ja" in body["languages"]
    status, body = ping(torch_server)
    assert status == 200
    assert (body["engine"], body["device"]) == ("kokoro-82m-torch-fp32", "cpu") and "ja" in body["languages"]
    assert "engine kokoro-82m-torch-fp32 on cpu, languages" in torch_server.log_tail(100_000)


def test_a_manifest_line_for_the_manifest_itself_is_not_a_mismatch(tmp_path, model_dir):
    """The model-cache stack's manifest may list a SHA256SUMS it was given: it cannot vouch for itself."""
    copy_layout(model_dir, tmp_path, skip=("SHA256SUMS",))
    sums = (model_dir / "SHA256SUMS").read_text() + "0" * 64 + "  SHA256SUMS\n"
    (tmp_path / "SHA256SUMS").write_text(sums)
    ModelDir(tmp_path).check()
