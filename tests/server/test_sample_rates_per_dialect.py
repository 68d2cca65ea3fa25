"""Every dialect takes the common PCM rates a client offers (22050 and 44100 here, the ones
Bulbul's SDK and the blog's client default to or list) and returns the expected number of
samples: the 24 kHz reference's length times the rate ratio."""

import base64
import json

import httpx
import pytest
import websockets

TEXT = "はい、そうです。"
RATES = (22050, 44100)


@pytest.fixture(scope="module")
async def reference_samples(speech_server):
    async with httpx.AsyncClient(base_url=speech_server.http_url, timeout=120) as http:
        reply = await http.post("/invocations", json={"text": TEXT, "format": "pcm_16", "sample_rate": 24000})
    return len(base64.b64decode(reply.json()["audios"][0])) // 2


def assert_samples(pcm16: bytes, rate: int, reference: int) -> None:
    assert len(pcm16) % 2 == 0
    assert len(pcm16) // 2 == pytest.approx(reference * rate / 24000, abs=3)


async def http_canonical(server, rate):
    async with httpx.AsyncClient(base_url=server.http_url, timeout=120) as http:
        reply = await http.post("/invocations", json={"text": TEXT, "format": "pcm_16", "sample_rate": rate})
    return base64.b64decode(reply.json()["audios"][0])


async def http_bulbul(server, rate):
    async with httpx.AsyncClient(base_url=server.http_url, timeout=120) as http:
        reply = await http.post("/text-to-speech", json={"text": TEXT, "target_language_code": "ja-JP", "model": "bulbul:v3",
                                                         "output_audio_codec": "linear16", "speech_sample_rate": rate})
    return base64.b64decode(reply.json()["audios"][0])


async def http_blog(server, rate):
    async with httpx.AsyncClient(base_url=server.http_url, timeout=120) as http:
        reply = await http.post("/invocations", json={"text": TEXT, "voice": "jf_alpha", "format": "wav",
                                                      "sample_rate": rate, "stream": False})
    assert int.from_bytes(reply.content[24:28], "little") == rate
    return reply.content[44:]


async def ws_canonical(server, rate):
    audio = bytearray()
    async with websockets.connect(server.ws_url) as ws:
        await ws.send(json.dumps({"type": "open", "format": "pcm_16", "sample_rate": rate}))
        assert json.loads(await ws.recv())["sample_rate"] == rate  # the negotiated rate, echoed
        await ws.send(json.dumps({"type": "response.create", "text": TEXT}))
        while (event := json.loads(await ws.recv()))["type"] != "response.done":
            if event["type"] == "audio.chunk":
                audio += base64.b64decode(event["audio"])
    return bytes(audio)


async def ws_bulbul(server, rate):
    audio = bytearray()
    async with websockets.connect(server.ws_url) as ws:
        await ws.send(json.dumps({"type": "config", "data": {"language_code": "ja-JP", "output_audio_codec": "linear16",
                                                              "speech_sample_rate": rate}}))
        await ws.send(json.dumps({"type": "text", "data": {"text": TEXT}}))
        await ws.send(json.dumps({"type": "flush"}))
        while (event := json.loads(await ws.recv()))["type"] == "audio":
            assert event["data"]["content_type"] == f"audio/L16;rate={rate}"
            audio += base64.b64decode(event["data"]["audio"])
    assert event == {"type": "event", "data": {"event_type": "final"}}
    return bytes(audio)


async def ws_blog(server, rate):
    audio = bytearray()
    async with websockets.connect(server.ws_url) as ws:
        await ws.send(json.dumps({"text": TEXT, "sample_rate": rate}))
        while True:
            frame = await ws.recv()
            if isinstance(frame, bytes):
                audio += frame
            elif json.loads(frame)["type"] == "synthesis_complete":
                return bytes(audio)


@pytest.mark.parametrize("rate", RATES)
@pytest.mark.parametrize("surface", [http_canonical, http_bulbul, http_blog, ws_canonical, ws_bulbul, ws_blog],
                         ids=lambda f: f.__name__)
async def test_each_dialect_returns_the_expected_samples(speech_server, reference_samples, surface, rate):
    assert_samples(await surface(speech_server, rate), rate, reference_samples)
