"""What SageMaker does when a client ends its input stream, and the blog's response-stream call,
through the local gateway with the real SDKs.

SageMaker keeps the bidirectional connection "until either the client closes it or the model
indicates completion"; the AWS sample's client notes that ending the input right after sending
makes SageMaker tear the container's socket down. The gateway does the same by default; with
`drain_seconds` it lets the container finish instead."""

import asyncio
import json
import struct

import boto3
import httpx
import pytest
import pytest_asyncio

from sagemaker_gateway.server import start_gateway
from tts_client.events import ResponseDone, SessionClosed, TransportClosed
from tts_client.session import Session
from tts_client.transports.sagemaker import LOCAL_CREDENTIALS

TEXT = "今日はいい天気ですね。明日も晴れるでしょう。週末は雨が降るかもしれません。"


@pytest_asyncio.fixture(scope="module")
async def draining_gateway(speech_server, tmp_path_factory):
    running = await start_gateway(speech_server.http_url, tmp_path_factory.mktemp("drain-certs"), port=0, drain_seconds=60)
    yield running
    await running.close()


async def sdk_session(gateway) -> Session:
    return await Session.sagemaker("local-kokoro", region="us-east-1", endpoint_url=gateway.endpoint_url,
                                   ca_file=str(gateway.ca_file))


async def close_then_end_input(gateway) -> list:
    """Open, ask for speech, send `close`, and end the input stream at once."""
    session = await sdk_session(gateway)
    await session.open(format="pcm_16")
    await session.send({"type": "response.create", "text": TEXT, "response_id": "r"})
    await session.send({"type": "close"})
    await session.transport.finish_sending()
    events = [event async for event in session.events()]
    await session.transport.close()
    return events


async def load(server) -> dict:
    async with httpx.AsyncClient(base_url=server.http_url) as http:
        return (await http.get("/ping")).json()["load"]


async def sessions_in_use(server) -> int:
    return (await load(server))["sessions"]


async def idle(server) -> None:
    """Work of earlier tests (cut or aborted) has given its slots back."""
    while (now := await load(server))["syntheses"] or now["sessions"]:
        await asyncio.sleep(0.1)


async def test_ending_the_input_tears_the_container_socket_down(gateway, speech_server):
    events = await close_then_end_input(gateway)
    assert isinstance(events[-1], TransportClosed) and events[-1].code == 1000, "a clean end, not a hang or an error"
    assert not [e for e in events if isinstance(e, ResponseDone | SessionClosed)], \
        "what the container had not sent when the input ended never arrives"
    while await sessions_in_use(speech_server):  # the container saw the disconnect and freed the session
        await asyncio.sleep(0.1)


async def test_a_draining_gateway_lets_the_container_finish(draining_gateway):
    events = await close_then_end_input(draining_gateway)
    (done,) = [e for e in events if isinstance(e, ResponseDone)]
    assert done.status == "completed" and done.audio_ms > 2000
    assert isinstance(events[-2], SessionClosed) and events[-1].code == 1000


async def test_keeping_the_input_open_until_the_session_ends_delivers_everything(gateway):
    session = await sdk_session(gateway)
    await session.open(format="pcm_16")
    response = await session.create(TEXT)
    closed = await session.close()  # sends close, ends the input only after the server closed
    assert response.done.status == "completed" and response.audio
    assert closed.code == 1000


async def test_the_blog_body_through_invoke_endpoint_with_response_stream_is_playable_wav(gateway, speech_server):
    client = boto3.client("sagemaker-runtime", region_name="us-east-1", endpoint_url=gateway.endpoint_url,
                          verify=str(gateway.ca_file), aws_access_key_id=LOCAL_CREDENTIALS.access_key_id,
                          aws_secret_access_key=LOCAL_CREDENTIALS.secret_access_key)
    body = {"text": TEXT, "voice": "jf_alpha", "speed": 1.0, "format": "wav", "request_timestamp": __import__("time").time()}

    def call() -> tuple[bytes, str]:  # exactly their TTSClient.synthesize: Accept audio/wav, no `stream`
        reply = client.invoke_endpoint_with_response_stream(EndpointName="local-kokoro", ContentType="application/json",
                                                            Accept="audio/wav", Body=json.dumps(body))
        parts = [event["PayloadPart"]["Bytes"] for event in reply["Body"] if "PayloadPart" in event]
        return b"".join(parts), reply["ContentType"]

    await idle(speech_server)
    async with httpx.AsyncClient(base_url=speech_server.http_url, timeout=120) as http:
        whole = await http.post("/invocations", json=body | {"stream": False})
    assert whole.status_code == 200, whole.text
    audio, content_type = await asyncio.to_thread(call)
    assert content_type == "audio/wav"
    assert audio[:4] == b"RIFF" and struct.unpack_from("<I", audio, 24)[0] == 24000  # their client reads the rate here
    seconds = (len(audio) - 44) / 2 / 24000  # ... and the duration from the bytes after the header
    # Another response of the same text: the same length (x-audio-duration is rounded to the ms)
    assert seconds == pytest.approx(float(whole.headers["x-audio-duration"]), abs=0.001) and seconds > 3
