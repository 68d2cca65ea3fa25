"""What serves, said and enforced: a GPU deploy's container (ENGINE=torch DEVICE=cuda, from
stacks/config.py) on a host without a usable GPU fails /ping with the reason instead of
serving from the CPU; and a ready server says what it runs on, in /ping and in the canonical
`session.created`, the one a client of the deployed endpoint can read."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

from running_server import REPO, start_server, stop_server
from websockets.asyncio.client import connect

from stacks.config import DeploymentConfig


def gpu_deploy_environment() -> dict[str, str]:
    """ENGINE and DEVICE as cdk.json's default deploy (a GPU instance type) sets them."""
    config = DeploymentConfig.from_context(json.loads((REPO / "cdk.json").read_text())["context"].get)
    assert config.is_gpu
    return {"ENGINE": config.engine, "DEVICE": config.device}


def ping(server) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(server.http_url + "/ping", timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())
    except OSError:
        return 0, {}


def test_a_gpu_deploy_without_a_usable_gpu_fails_ping_with_the_reason(model_dir):
    """This machine has no GPU (CUDA_VISIBLE_DEVICES="" hides one where there is): the deploy's
    environment, not DEVICE=auto, must make that a 503 that says why, never a CPU fallback."""
    environment = gpu_deploy_environment() | {"MODEL_DIR": str(model_dir), "CUDA_VISIBLE_DEVICES": ""}
    assert (environment["ENGINE"], environment["DEVICE"]) == ("torch", "cuda")
    server = start_server(environment, wait=False)
    try:
        deadline = time.monotonic() + 300
        while (answer := ping(server))[1].get("status") != "failed":
            assert answer[0] != 200, f"served without a GPU: {answer[1]}"
            assert time.monotonic() < deadline, f"no load failure within 300 s: {server.log_tail()}"
            time.sleep(0.2)
        status, body = answer
        assert status == 503
        assert body["reason"].startswith("DEVICE=cuda: no CUDA device is available (torch ")
        assert "check that the instance type has a GPU" in body["reason"] and "\n" not in body["reason"]
        assert "model failed to load: DEVICE=cuda" in server.log_tail()  # what CloudWatch shows
        assert ping(server)[0] == 503  # and it stays so: SageMaker fails the deploy at its health check
    finally:
        stop_server(server)


async def test_ping_and_session_created_say_what_serves(speech_server):
    status, body = ping(speech_server)
    assert status == 200
    runs_on = {key: body[key] for key in ("engine", "device", "precision", "max_batch", "batch_limit", "uid")}
    assert runs_on["engine"] == "kokoro-82m-int8-onnx" and (runs_on["device"], runs_on["precision"]) == ("cpu", "int8")
    assert runs_on["max_batch"] == runs_on["batch_limit"] == 1  # the embedded engine runs pieces one by one
    assert isinstance(runs_on["uid"], int)
    async with connect(speech_server.ws_url) as ws:
        await ws.send(json.dumps({"type": "open"}))
        created = json.loads(await ws.recv())
    assert created["type"] == "session.created" and created["server"] == runs_on


def test_the_torch_engine_says_its_own(torch_server):
    status, body = ping(torch_server)
    assert status == 200
    assert (body["engine"], body["device"], body["precision"]) == ("kokoro-82m-torch-fp32", "cpu", "fp32")
