"""POST /invocations on the real server: whole JSON, chunked audio stream, SSE; both field families."""

import base64
import io
import json
import re
import time
import wave

import httpx
import pytest
from server.audio.audio_testkit import decode, decoded_seconds

from tts_client.sse import SSEReader

TWO_SENTENCES = "おはようございます。今日は晴れです。"
REQUEST_ID = re.compile(r"^\d{8}_[0-9a-f-]{36}$")


@pytest.fixture
async def http(speech_server):
    async with httpx.AsyncClient(base_url=speech_server.http_url, timeout=60) as client:
        yield client


async def test_whole_reply_is_one_base64_wav_with_real_sizes(http):
    reply = await http.post("/invocations", json={"text": "こんにちは。"})
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json"
    body = reply.json()
    assert set(body) == {"request_id", "audios"}
    assert REQUEST_ID.match(body["request_id"])
    (audio,) = body["audios"]
    with wave.open(io.BytesIO(base64.b64decode(audio))) as wav:  # a whole file: sizes filled in
        assert (wav.getframerate(), wav.getsampwidth(), wav.getnchannels()) == (24000, 2, 1)
        assert 0.5 < wav.getnframes() / 24000 < 3


async def test_bulbul_field_names_are_accepted(http, speech_server):
    # The seed's real-time request with `model` changed to the served id.
    payload = {"model": "kokoro-82m", "text": TWO_SENTENCES, "speaker": "woman-2", "target_language_code": "ja-JP",
               "output_audio_codec": "linear16", "speech_sample_rate": 16000, "pace": 1.5,
               "enable_preprocessing": True}  # a Bulbul field with no meaning here is ignored
    fast = (await http.post("/invocations", json=payload)).json()
    slow = (await http.post("/invocations", json=payload | {"pace": 1.0})).json()
    fast_pcm, slow_pcm = (base64.b64decode(b["audios"][0]) for b in (fast, slow))
    assert len(fast_pcm) % 2 == 0 and len(fast_pcm) > 0
    assert len(fast_pcm) < 0.8 * len(slow_pcm), "pace maps to speed"
    assert 0.5 < len(slow_pcm) / 2 / 16000 < 6, "linear16 is PCM16 at the speech_sample_rate"


async def test_session_field_names_are_accepted(http):
    body = {"text": "はい。", "speaker_id": "jm_kumo", "language": "ja", "format": "flac", "sample_rate": 8000, "speed": 0.8}
    reply = await http.post("/invocations", json=body)
    samples, rate = decode(base64.b64decode(reply.json()["audios"][0]), "flac", 8000)
    assert rate == 8000 and len(samples) > 0.2 * 8000


@pytest.fixture(scope="module")
async def reference_seconds(speech_server):
    async with httpx.AsyncClient(base_url=speech_server.http_url, timeout=60) as client:
        reply = await client.post("/invocations", json={"text": "こんにちは。", "format": "pcm_16"})
    return len(base64.b64decode(reply.json()["audios"][0])) / 2 / 24000


@pytest.mark.parametrize("fmt, rate", [("pcm_f32", 24000), ("mulaw", 8000), ("alaw", 8000), ("opus", 24000),
                                        ("mp3", 16000), ("aac", 24000), ("wav", 8000)])
async def test_every_format_decodes_to_the_same_duration(http, reference_seconds, fmt, rate):
    reply = await http.post("/invocations", json={"text": "こんにちは。", "format": fmt, "sample_rate": rate})
    assert reply.status_code == 200, reply.text
    seconds = decoded_seconds(base64.b64decode(reply.json()["audios"][0]), fmt, rate)
    assert seconds == pytest.approx(reference_seconds, abs=0.05)


async def test_timestamps_index_the_request_text(http):
    body = (await http.post("/invocations", json={"text": TWO_SENTENCES, "with_timestamps": True, "format": "pcm_16"})).json()
    duration_ms = len(base64.b64decode(body["audios"][0])) / 2 / 24
    stamps = body["timestamps"]
    assert stamps and all(TWO_SENTENCES[s["start_char"]:s["end_char"]] == s["text"] for s in stamps)
    assert all(b["start_ms"] >= a["end_ms"] for a, b in zip(stamps, stamps[1:], strict=False))
    assert stamps[-1]["end_ms"] <= duration_ms + 1
    plain = (await http.post("/invocations", json={"text": "はい。"})).json()
    assert "timestamps" not in plain


async def test_stream_true_sends_audio_bytes_as_each_sentence_exists(http):
    text = "最初の文です。" + "二番目の文はもう少しだけ長く書いてあります。" * 3
    payload = {"text": text, "output_audio_codec": "mp3", "stream": True}  # the seed's streaming call
    arrivals, chunks = [], []
    began = time.perf_counter()
    async with http.stream("POST", "/invocations", json=payload) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"] == "audio/mpeg"
        assert REQUEST_ID.match(reply.headers["x-request-id"])
        async for chunk in reply.aiter_raw():
            arrivals.append(time.perf_counter() - began)
            chunks.append(chunk)
    assert len(chunks) >= 3, "one piece per sentence at least"
    assert arrivals[0] < 0.6 * arrivals[-1], "the first bytes leave after the first sentence, not the last"
    assert decoded_seconds(b"".join(chunks), "mp3", 24000) > 3


async def test_sse_carries_base64_chunks_and_alignments_then_done(http):
    payload = {"text": TWO_SENTENCES, "format": "pcm_16", "stream": True, "with_timestamps": True}
    reader, events = SSEReader(), []
    async with http.stream("POST", "/invocations", json=payload, headers={"Accept": "text/event-stream"}) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        async for chunk in reply.aiter_raw():
            events += [event.json() for event in reader.feed(chunk)]
    chunks, done = events[:-1], events[-1]
    assert [c["type"] for c in chunks] == ["audio.chunk"] * len(chunks) and len(chunks) >= 2
    assert [c["sequence"] for c in chunks] == list(range(len(chunks)))
    assert {c["request_id"] for c in chunks} == {done["request_id"]}
    audio = b"".join(base64.b64decode(c["audio"]) for c in chunks)
    assert done["type"] == "response.done" and done["status"] == "completed"
    assert done["usage"] == {"characters": len(TWO_SENTENCES), "audio_ms": pytest.approx(len(audio) / 2 / 24, abs=1)}
    words = [a["text"] for c in chunks for a in c["alignments"]]
    assert "晴れ" in "".join(words)


async def test_accept_sse_without_stream_gets_the_whole_json(http):
    reply = await http.post("/invocations", json={"text": "はい。"}, headers={"Accept": "text/event-stream"})
    assert reply.headers["content-type"] == "application/json"
    assert len(reply.json()["audios"]) == 1


async def test_max_length_truncates(http):
    body = (await http.post("/invocations", json={"text": TWO_SENTENCES, "format": "pcm_16", "max_length": 500})).json()
    assert len(base64.b64decode(body["audios"][0])) / 2 / 24 == pytest.approx(500, abs=1)


async def test_json_content_type_with_parameters_is_json(http):
    data = json.dumps({"text": "はい。"}).encode()
    reply = await http.post("/invocations", content=data, headers={"Content-Type": "application/json; charset=utf-8"})
    assert reply.status_code == 200
