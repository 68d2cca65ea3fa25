"""Deepgram's socket behind SageMaker: Pipecat's own DeepgramSageMakerTTSService through the local
gateway (the socket's query in ModelQueryString, on /invocations-bidirectional-stream), with
nothing changed but the endpoint name and URL."""

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from server.families.test_deepgram_clients import MODEL, RATE, TEXT, reference_ms
from server.families.test_elevenlabs_clients import near
from tts_client.transports.sagemaker import LOCAL_CREDENTIALS

SCRIPT = Path(__file__).with_name("pipecat_deepgram_sagemaker.py")
# pipecat-ai[sagemaker]'s SDK line, installed by `make setup` beside the venv's newer one.
PIPECAT_SDK = Path(sys.prefix) / "pipecat-sagemaker"


async def test_pipecats_deepgram_sagemaker_service_speaks_through_the_gateway(gateway, speech_server):
    if not (PIPECAT_SDK / "aws_sdk_sagemaker_runtime_http2").is_dir():
        pytest.fail(f"{PIPECAT_SDK} is missing: run `make setup`")
    environment = os.environ | {"PYTHONPATH": os.pathsep.join([str(PIPECAT_SDK), os.environ.get("PYTHONPATH", "")]),
                                "AWS_ACCESS_KEY_ID": LOCAL_CREDENTIALS.access_key_id,
                                "AWS_SECRET_ACCESS_KEY": LOCAL_CREDENTIALS.secret_access_key}
    # A process of its own (two SDK lines cannot share one); the gateway serves from this test's loop meanwhile.
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(SCRIPT), gateway.endpoint_url, str(gateway.ca_file), MODEL, str(RATE), TEXT,
        env=environment, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 300)
    assert process.returncode == 0, err.decode()[-3000:]
    spoken = json.loads(out.decode().strip().splitlines()[-1])
    assert spoken["frames"] == ["started", "audio", "stopped"] and not spoken["errors"], spoken
    assert near(spoken["audio_bytes"] / 2 / RATE * 1000, reference_ms(speech_server, TEXT))
