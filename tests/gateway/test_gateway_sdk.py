"""The real AWS SDK (HTTP/2, awscrt, signed event streams) through the local gateway to the
real server: what a deployed endpoint's callers do, on 127.0.0.1."""

import asyncio
import gc
import json
import ssl
import sys

import boto3
import httpx
import pytest
from botocore.exceptions import ClientError

from tts_client.audio import duration_ms
from tts_client.errors import ServiceError
from tts_client.http import DirectHTTP, SageMakerHTTP
from tts_client.session import Session
from tts_client.transports.sagemaker import LOCAL_CREDENTIALS
from waiting import until

TEXT = "こんにちは。今日はいい天気ですね。"


async def sdk_session(gateway) -> Session:
    return await Session.sagemaker("local-kokoro", region="us-east-1", endpoint_url=gateway.endpoint_url,
                                   ca_file=str(gateway.ca_file))


async def test_binary_audio_frames_split_into_partial_parts_come_back_whole(gateway):
    async with await sdk_session(gateway) as session:
        created = await session.open(format="pcm_16", audio_frames="binary")
        first, second = await session.create(TEXT), await session.create("さようなら。")
        await first.wait(120)
        await second.wait(120)
        closed = await session.close()
    assert created.format == "pcm_16" and second.queued
    for response in (first, second):
        assert response.done.status == "completed"
        # Each chunk's frame was far over the gateway's 1500-byte parts: reassembly is exact
        # only if the decoded duration matches what the server says it sent.
        assert max(len(c.audio) for c in response.chunks) > 1500
        assert duration_ms("pcm_16", 24000, response.audio) == response.done.audio_ms
    assert closed.code == 1000 and not closed.reason


def body_writers() -> list[asyncio.Task]:
    """awscrt's tasks writing request bodies, still waiting for more."""
    return [t for t in asyncio.all_tasks() if t.get_coro().__name__ == "_set_request_body_generator"]


async def test_streams_the_container_ends_leave_no_writer_and_nothing_on_stderr(gateway, monkeypatch):
    """The container ends the stream (here at `close`, read to the end as an app reads its events):
    the session's exit still releases the SDK's stream, and its request-body writer ends, not left
    waiting until garbage collection closed it ("Exception ignored ... HTTP-stream has completed"
    on stderr for each stream, and at asyncio.run's end "unhandled exception during shutdown")."""
    earlier = set(body_writers())  # what other files' tests on this worker's loop may have left
    ignored = []
    monkeypatch.setattr(sys, "unraisablehook", ignored.append)
    for _ in range(2):
        async with await sdk_session(gateway) as session:
            await session.open()
            await session.create("はい。")
            await session.send({"type": "close"})
            events = [type(event).__name__ async for event in session.events()]
        assert events[-3:] == ["ResponseDone", "SessionClosed", "TransportClosed"]
    await until(lambda: not set(body_writers()) - earlier, "the request-body writers to end", timeout=30)
    gc.collect()
    assert [f"{u.exc_type.__name__}: {u.exc_value}" for u in ignored] == []


async def test_a_bad_frame_through_sagemaker_gets_an_error_and_the_session_goes_on(gateway):
    async with await sdk_session(gateway) as session:
        await session.open()
        await session.send_raw(b"\xff\xfe not utf-8")
        await session.ping()
        response = await session.synthesize("はい。", timeout=120)
    assert [e.code for e in session.errors] == ["invalid_request_error"]
    assert "UTF-8" in session.errors[0].message
    assert response.done.status == "completed" and response.audio


async def test_a_fatal_error_ends_the_sdk_stream_with_the_container_reason(gateway):
    session = await sdk_session(gateway)
    await session.send({"type": "response.create", "text": "はい。"})
    async for event in session.events():
        last = event
    assert session.errors[0].code == "session_not_open"
    assert "1008" in last.reason


async def test_invoke_endpoint_errors_arrive_as_424_model_error_and_unwrap_to_the_container_reply(gateway, speech_server):
    body = {"text": "", "sample_rate": 12345}
    through_sagemaker = SageMakerHTTP("local-kokoro", region="us-east-1", endpoint_url=gateway.endpoint_url,
                                      ca_file=str(gateway.ca_file))
    # Blocking clients run in threads: the gateway serves from this test's event loop.
    with pytest.raises(ServiceError) as direct:
        await asyncio.to_thread(DirectHTTP(speech_server.http_url).invoke, body)
    with pytest.raises(ServiceError) as through:
        await asyncio.to_thread(through_sagemaker.invoke, body)
    assert through.value.via_model_error
    assert (through.value.status, through.value.code, through.value.message) == (
        direct.value.status, direct.value.code, direct.value.message)


async def test_boto3_sees_sagemakers_model_error_shape(gateway):
    client = boto3.client("sagemaker-runtime", region_name="us-east-1", endpoint_url=gateway.endpoint_url,
                          verify=str(gateway.ca_file), aws_access_key_id=LOCAL_CREDENTIALS.access_key_id,
                          aws_secret_access_key=LOCAL_CREDENTIALS.secret_access_key)
    with pytest.raises(ClientError) as raised:
        await asyncio.to_thread(client.invoke_endpoint, EndpointName="local-kokoro", Body=json.dumps({"text": ""}),
                                ContentType="application/json")
    response = raised.value.response
    assert response["Error"]["Code"] == "ModelError"
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 424
    assert 400 <= response["OriginalStatusCode"] < 500


async def test_unsigned_requests_are_refused(gateway):
    async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=str(gateway.ca_file))) as client:
        reply = await client.post(f"{gateway.endpoint_url}/endpoints/x/invocations", content=b"{}")
    assert reply.status_code == 403
