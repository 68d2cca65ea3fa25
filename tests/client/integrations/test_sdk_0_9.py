"""The SageMaker transport on the SDK line that `pipecat-ai[sagemaker]` allows (0.9: another
config API, no client close), through the local gateway to the real server, from a venv
that has only that SDK."""

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from package_index import run_pip

REPO = Path(__file__).resolve().parents[3]
SDK = "aws-sdk-sagemaker-runtime-http2==0.9.0"
SPEAK = """
import asyncio, sys
from importlib.metadata import version
from tts_client.session import Session

async def main(url, ca_file):
    session = await Session.sagemaker("local-kokoro", region="us-east-1", endpoint_url=url, ca_file=ca_file)
    await session.open(format="pcm_16", sample_rate=16000, audio_frames="binary")
    response = await session.synthesize("こんにちは。", timeout=120)
    closed = await session.close()
    print(version("aws-sdk-sagemaker-runtime-http2"), response.done.status, response.done.audio_ms,
          len(response.audio) // 32, closed.code)

asyncio.run(main(*sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def sdk_0_9_python(tmp_path_factory) -> Path:
    venv = tmp_path_factory.mktemp("sdk-0.9") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    run_pip("install", "--quiet", SDK, "websockets==17.4", python=python)
    return python


async def test_the_transport_speaks_through_sdk_0_9(sdk_0_9_python, agents_gateway):
    # A subprocess of its own (asyncio's, so the gateway in this event loop keeps serving).
    process = await asyncio.create_subprocess_exec(
        str(sdk_0_9_python), "-c", SPEAK, agents_gateway.endpoint_url, str(agents_gateway.ca_file),
        env=os.environ | {"PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 180)
    assert process.returncode == 0, err.decode()[-3000:]
    sdk, status, audio_ms, decoded_ms, close_code = out.decode().split()
    assert (sdk, status, close_code) == ("0.9.0", "completed", "1000")
    assert int(audio_ms) > 0 and decoded_ms == audio_ms  # every byte came back through the 0.9 SDK
