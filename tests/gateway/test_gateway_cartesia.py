"""Cartesia's socket and HTTP body behind SageMaker: the real AWS SDK's bidirectional stream through
the local gateway, recognised by its first request (its `transcript`), and its body on /invocations."""

import asyncio
import base64
import json

import boto3

from tts_client.transports.sagemaker import LOCAL_CREDENTIALS, SageMakerTransport

KATIE = "f786b574-daa5-4673-aa0c-cbe3e8534c02"
RAW = {"container": "raw", "encoding": "pcm_s16le", "sample_rate": 16000}


async def test_cartesia_speaks_through_the_bidirectional_stream(gateway):
    transport = await SageMakerTransport.connect("local-kokoro", region="us-east-1", endpoint_url=gateway.endpoint_url,
                                                 ca_file=str(gateway.ca_file))
    try:
        for transcript, more in (("Hello ", True), ("there.", False)):
            await transport.send(json.dumps({"model_id": "sonic-3", "transcript": transcript, "context_id": "c1",
                                             "voice": {"mode": "id", "id": KATIE}, "output_format": RAW,
                                             "continue": more, "add_timestamps": True, "language": "en"}))
        replies = []
        while not replies or replies[-1]["type"] not in ("done", "error"):
            replies.append(json.loads(await transport.receive()))
    finally:
        await transport.close()
    assert replies[-1] == {"type": "done", "context_id": "c1", "done": True, "status_code": 200}
    audio = b"".join(base64.b64decode(r["data"]) for r in replies if r["type"] == "chunk")
    assert len(audio) / 2 / 16000 > 0.5
    assert [w for r in replies if r["type"] == "timestamps" for w in r["word_timestamps"]["words"]] == ["Hello",
                                                                                                      "there."]


async def test_its_body_on_invoke_endpoint_answers_the_audio(gateway):
    client = boto3.client("sagemaker-runtime", region_name="us-east-1", endpoint_url=gateway.endpoint_url,
                          verify=str(gateway.ca_file), aws_access_key_id=LOCAL_CREDENTIALS.access_key_id,
                          aws_secret_access_key=LOCAL_CREDENTIALS.secret_access_key)
    body = {"model_id": "sonic-3", "transcript": "Hello there.", "voice": {"mode": "id", "id": KATIE},
            "output_format": RAW}
    reply = await asyncio.to_thread(client.invoke_endpoint, EndpointName="local-kokoro", Body=json.dumps(body),
                                    ContentType="application/json")
    assert reply["ContentType"].startswith("audio/L16") and len(reply["Body"].read()) / 2 / 16000 > 0.5
