"""`make demo`'s bridge: the page's WebSocket relayed through the client library's SageMaker
transport (the real AWS SDK, HTTP/2, signed event streams) to the local SageMaker gateway,
in front of the real server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path

import httpx
import pytest_asyncio
import uvicorn
import websockets
from demo_bridge import create_bridge
from demo_page import speak, wait_finished, wait_until
from running_server import free_port

from sagemaker_gateway.server import start_gateway
from tts_client.audio import duration_ms

REPO = Path(__file__).resolve().parents[2]


@pytest_asyncio.fixture(scope="module")
async def gateway(speech_server, tmp_path_factory):
    # Small parts: every audio frame crosses SageMaker's stream in several PARTIAL pieces.
    running = await start_gateway(speech_server.http_url, tmp_path_factory.mktemp("bridge-gateway"), port=0,
                                  max_part_bytes=1500)
    yield running
    await running.close()


@pytest_asyncio.fixture(scope="module")
async def bridge_url(gateway):
    app = create_bridge("local-kokoro", region="us-east-1", endpoint_url=gateway.endpoint_url, ca_file=str(gateway.ca_file))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, ws="websockets-sansio", log_level="warning"))
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.05)
    yield f"127.0.0.1:{port}"
    server.should_exit = True
    await serving


async def test_frames_cross_the_bridge_whole_and_keep_their_kind(bridge_url):
    async with websockets.connect(f"ws://{bridge_url}/invocations-bidirectional-stream", max_size=None) as socket:
        await socket.send(json.dumps({"type": "open", "format": "pcm_f32", "audio_frames": "binary"}))
        created = json.loads(await socket.recv())
        await socket.send(json.dumps({"type": "response.create", "text": "こんにちは。", "response_id": "a",
                                      "with_timestamps": True}))
        frames = []
        while not (isinstance(frame := await socket.recv(), str) and json.loads(frame)["type"] == "response.done"):
            frames.append(frame)
        done = json.loads(frame)
        await socket.send(b"\xff not json")  # a bad frame: an error, and the session goes on
        error = json.loads(await socket.recv())
        await socket.send(json.dumps({"type": "close"}))
        closed = json.loads(await socket.recv())
        with contextlib.suppress(websockets.ConnectionClosed):
            await socket.recv()
    assert created["type"] == "session.created" and created["speakers"]
    events = [json.loads(f) for f in frames if isinstance(f, str)]
    audio = [f for f in frames if isinstance(f, bytes)]
    chunks = [e for e in events if e["type"] == "audio.chunk"]
    # Each audio.chunk text frame is followed by exactly its binary frame, reassembled whole.
    assert [type(f) for f in frames[frames.index(next(f for f in frames if isinstance(f, bytes))) - 1:]][:2] == [str, bytes]
    # A word's times go with the chunk that ends it (a first window may carry none): together in order.
    aligned = [a for c in chunks for a in c["alignments"]]
    assert len(audio) == len(chunks) and "".join(a["text"] for a in aligned) == "こんにちは。"
    assert [a["start_ms"] for a in aligned] == sorted(a["start_ms"] for a in aligned)
    assert duration_ms("pcm_f32", 24000, b"".join(audio)) == done["usage"]["audio_ms"] and done["status"] == "completed"
    assert error["type"] == "error" and error["error"]["code"] == "invalid_request_error"
    assert closed["type"] == "session.closed" and socket.close_code == 1000


async def test_a_fatal_error_reaches_the_browser_with_the_containers_reason(bridge_url):
    async with websockets.connect(f"ws://{bridge_url}/invocations-bidirectional-stream") as socket:
        await socket.send(json.dumps({"type": "response.create", "text": "はい。"}))
        error = json.loads(await socket.recv())
        with contextlib.suppress(websockets.ConnectionClosed):
            await socket.recv()
    assert error["error"]["code"] == "session_not_open"
    assert socket.close_code == 1011 and "1008" in socket.close_reason


async def test_an_unreachable_endpoint_is_an_error_on_the_page():
    app = create_bridge("nowhere", region="us-east-1", endpoint_url=f"https://127.0.0.1:{free_port()}")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, ws="websockets-sansio", log_level="warning"))
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            await asyncio.sleep(0.05)
        async with websockets.connect(f"ws://127.0.0.1:{port}/invocations-bidirectional-stream") as socket:
            error = json.loads(await socket.recv())
            with contextlib.suppress(websockets.ConnectionClosed):
                await socket.recv()
    finally:
        server.should_exit = True
        await serving
    assert error["error"]["code"] == "endpoint_unreachable" and "nowhere" in error["error"]["message"]
    assert socket.close_code == 1011


async def test_the_page_speaks_through_the_bridge(bridge_url, open_page):
    page = await open_page(f"http://{bridge_url}/")
    await speak(page, "こんにちは。今日は晴れです。")
    response = (await wait_finished(page, "r1"))["r1"]
    assert response["status"] == "completed" and response["ttfaMs"] > 0
    assert abs(response["audioMs"] - response["usageAudioMs"]) < 1
    words = await wait_until(page, "demoState.highlighted")
    assert "".join(w["text"] for w in words) == "こんにちは。今日は晴れです。"


async def test_the_make_demo_command_serves_the_page_and_relays_to_the_endpoint(gateway):
    port = free_port()
    command = [sys.executable, str(REPO / "scripts" / "demo_bridge.py"), "--endpoint", "local-kokoro", "--region",
               "us-east-1", "--endpoint-url", gateway.endpoint_url, "--ca-file", str(gateway.ca_file), "--port", str(port)]
    process = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        banner = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        assert f"http://127.0.0.1:{port}/" in banner and "local-kokoro" in banner
        async with httpx.AsyncClient() as http:
            for _ in range(200):  # the banner comes just before uvicorn binds the port
                with contextlib.suppress(httpx.TransportError):
                    page = await http.get(f"http://127.0.0.1:{port}/")
                    break
                await asyncio.sleep(0.05)
            script = await http.get(f"http://127.0.0.1:{port}/demo/demo.js")
        assert page.status_code == 200 and "<title>Kokoro streaming TTS</title>" in page.text
        assert script.status_code == 200 and "javascript" in script.headers["content-type"]
        async with websockets.connect(f"ws://127.0.0.1:{port}/invocations-bidirectional-stream") as socket:
            await socket.send(json.dumps({"type": "open"}))
            created = json.loads(await socket.recv())
            await socket.send(json.dumps({"type": "ping"}))
            pong = json.loads(await socket.recv())
            await socket.send(json.dumps({"type": "close"}))
            closed = json.loads(await socket.recv())
        assert (created["type"], pong["type"], closed["type"]) == ("session.created", "pong", "session.closed")
    finally:
        process.terminate()
        await process.wait()


async def test_the_bridge_serves_openais_speech_api_in_front_of_the_endpoint(bridge_url):
    """The unmodified `openai` SDK through the bridge: InvokeEndpointWithResponseStream to the
    gateway, whose /invocations recognises OpenAI's body."""
    import openai

    client = openai.AsyncOpenAI(base_url=f"http://{bridge_url}/v1", api_key="unused", max_retries=0, timeout=120)
    chunks = []
    async with client.audio.speech.with_streaming_response.create(model="tts-1", voice="nova", input="こんにちは。元気です。",
                                                                  response_format="pcm") as reply:
        async for chunk in reply.iter_bytes():
            chunks.append(chunk)
    assert len(chunks) > 1 and sum(map(len, chunks)) / 2 / 24000 > 0.8, "PCM16 at 24 kHz, streamed in parts"
    try:
        await client.audio.speech.create(model="tts-1", voice="bob", input="はい。")
        raise AssertionError("an unknown voice should be refused")
    except openai.BadRequestError as error:
        assert error.body["param"] == "voice" and "'jf_alpha'" in error.body["message"]
    assert {m.id async for m in client.models.list()} >= {"tts-1", "kokoro"}
