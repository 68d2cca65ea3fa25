"""A voice the engine lacks, on every surface of the real (embedded, Japanese-voiced) engine: the
AWS sample's `af_heart` and OpenAI's `alloy` (`af_alloy`) speak with the closest voice it has and say which;
with VOICE_FALLBACK=strict they are refused naming the voices. And the blog's `request_timestamp`
is honoured on the bidirectional path as on HTTP."""

import asyncio
import base64
import json
import time

import httpx
import pytest
import websockets
from running_server import start_server, stop_server
from server.wire import is_control

CLOSEST = "jf_alpha"  # af_heart and af_alloy are women: this engine's first woman's voice


@pytest.fixture(scope="module")
def strict_server():
    server = start_server({"ENGINE": "onnx", "VOICE_FALLBACK": "strict"}, languages="ja")
    yield server
    stop_server(server)


async def first_frames(url: str, first: dict, then: list[dict], until_type: str) -> list:
    """Frames (control events as dicts, audio as bytes) up to the first event of `until_type`."""
    frames = []
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps(first))
        for message in then:
            await ws.send(json.dumps(message))
        while True:
            frame = await asyncio.wait_for(ws.recv(), 60)
            event = is_control(frame)
            frames.append(event if event is not None else frame)
            if event is not None and event.get("type") == until_type:
                return frames


@pytest.mark.parametrize("voice", ["af_heart", "af_alloy"])
async def test_canonical_session_speaks_and_names_the_voice(speech_server, voice):
    frames = await first_frames(speech_server.ws_url, {"type": "open", "speaker_id": voice, "format": "pcm_16"},
                                [{"type": "response.create", "text": "はい。"}], "response.done")
    created = frames[0]
    assert created["type"] == "session.created" and created["voice"] == CLOSEST and created["speaker_id"] == voice
    chunks = [base64.b64decode(f["audio"]) for f in frames if isinstance(f, dict) and f["type"] == "audio.chunk"]
    assert sum(map(len, chunks)) > 2400 and frames[-1]["status"] == "completed"


@pytest.mark.parametrize("path, body", [
    ("/invocations", {"text": "はい。", "speaker_id": "af_heart"}),
    ("/invocations", {"text": "はい。", "voice": "af_alloy", "stream": True}),
    ("/text-to-speech", {"text": "はい。", "speaker": "af_heart", "target_language_code": "ja-JP"}),
    ("/invocations", {"text": "はい。", "voice": "af_heart", "format": "wav"}),  # the blog's shape
    ("/v1/audio/speech", {"model": "tts-1", "input": "はい。", "voice": "af_heart"}),
])
def test_every_http_surface_speaks_and_says_which_voice(speech_server, path, body):
    reply = httpx.post(speech_server.http_url + path, json=body, timeout=120)
    assert reply.status_code == 200, reply.text
    assert reply.headers["x-voice"] == CLOSEST and len(reply.content) > 1000


async def test_another_familys_voice_names_are_its_own(speech_server):
    """OpenAI's `alloy` is OpenAI's: the canonical protocol refuses it, naming its speakers."""
    async with websockets.connect(speech_server.ws_url) as ws:
        await ws.send(json.dumps({"type": "open", "speaker_id": "alloy"}))
        error = json.loads(await asyncio.wait_for(ws.recv(), 30))
    assert error["type"] == "error" and "speaker_id: Input should be 'default'" in error["error"]["message"]
    assert "got 'alloy'" in error["error"]["message"]


async def test_bulbul_socket_speaks_an_absent_voice(speech_server):
    config = {"type": "config", "data": {"speaker": "af_alloy", "target_language_code": "ja-JP"}}
    frames = await first_frames(speech_server.ws_url, config,
                                [{"type": "text", "data": {"text": "はい。"}}, {"type": "flush"}], "event")
    audio = [f for f in frames if isinstance(f, dict) and f["type"] == "audio"]
    assert audio and frames[-1]["data"]["event_type"] == "final"


async def test_blog_socket_speaks_af_heart_and_names_the_voice(speech_server):
    frames = await first_frames(speech_server.ws_url, {"text": "はい。", "voice": "af_heart"}, [],
                                "synthesis_complete")
    assert frames[0] == {"type": "synthesis_start", "request_id": frames[-1]["request_id"], "voice": CLOSEST}
    assert sum(len(f) for f in frames if isinstance(f, bytes)) > 2400


async def test_a_stale_request_timestamp_on_the_socket_is_request_stale_and_the_session_goes_on(speech_server):
    async with websockets.connect(speech_server.ws_url) as ws:
        await ws.send(json.dumps({"text": "はい。", "voice": "jf_alpha", "request_id": "old",
                                  "request_timestamp": time.time() - 3600}))
        error = json.loads(await asyncio.wait_for(ws.recv(), 30))
        assert error["type"] == "error" and error["request_id"] == "old" and error["code"] == "request_stale"
        assert error["message"].startswith("request_stale: request_timestamp: older than 56 s (MAX_REQUEST_AGE_S)")
        await ws.send(json.dumps({"text": "はい。", "voice": "jf_alpha", "request_timestamp": time.time()}))
        start = json.loads(await asyncio.wait_for(ws.recv(), 30))
        assert start["type"] == "synthesis_start", "a fresh request is served on the same session"


def test_strict_refuses_naming_the_voices(strict_server):
    reply = httpx.post(strict_server.http_url + "/invocations", json={"text": "はい。", "speaker_id": "af_heart"},
                       timeout=60)
    assert reply.status_code == 400
    assert "speaker_id: Input should be 'default', 'woman-1'" in reply.json()["error"]["message"]
    assert "'jf_alpha'" in reply.json()["error"]["message"]
    openai = httpx.post(strict_server.http_url + "/v1/audio/speech", json={"input": "はい。", "voice": "alloy"},
                        timeout=60)
    assert openai.status_code == 400 and openai.json()["error"]["param"] == "voice"
    assert "'jf_alpha'" in openai.json()["error"]["message"]


async def test_strict_refuses_an_absent_voice_at_open(strict_server):
    async with websockets.connect(strict_server.ws_url) as ws:
        await ws.send(json.dumps({"type": "open", "speaker_id": "af_heart"}))
        error = json.loads(await asyncio.wait_for(ws.recv(), 30))
        assert error["type"] == "error" and "speaker_id: Input should be" in error["error"]["message"]
        await asyncio.wait_for(ws.wait_closed(), 30)
        assert ws.close_code == 1008
