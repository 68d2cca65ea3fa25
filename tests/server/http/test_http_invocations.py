"""POST /invocations on the real server: whole JSON, chunked audio stream, SSE; both field families."""

import base64
import io
import json
import re
import wave

import httpx
import pytest
from server.audio.audio_testkit import CODEC_EXTRA, FORMAT_RATES, covering, decode, decoded_seconds, opus_input_rate

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


# Every format and every rate once: the whole matrix runs on synthetic audio in tests/server/audio.
ENDS = covering(FORMAT_RATES)


def test_the_end_to_end_pairs_cover_every_format_and_rate():
    assert {f for f, _ in ENDS} == {f for f, _ in FORMAT_RATES} and {r for _, r in ENDS} == {r for _, r in FORMAT_RATES}
    assert len(ENDS) == len({f for f, _ in FORMAT_RATES})


@pytest.mark.parametrize("fmt, rate", ENDS, ids=[f"{f}@{r}" for f, r in ENDS])
async def test_every_format_and_rate_decodes_at_that_rate_to_the_same_duration(http, reference_seconds, fmt, rate):
    reply = await http.post("/invocations", json={"text": "こんにちは。", "format": fmt, "sample_rate": rate})
    assert reply.status_code == 200, reply.text
    audio = base64.b64decode(reply.json()["audios"][0])
    # A container says its rate; raw samples read at the asked rate last as long as the
    # reference only if they really are at that rate.
    _, decoded_rate = decode(audio, fmt, rate)
    assert (opus_input_rate(audio) if fmt == "opus" else decoded_rate) == rate
    padding = CODEC_EXTRA.get(fmt, (0, 0))[1] / rate  # MP3/AAC pad up to a whole frame
    assert decoded_seconds(audio, fmt, rate) == pytest.approx(reference_seconds, abs=0.05 + padding)


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
    async with http.stream("POST", "/invocations", json=payload) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"] == "audio/mpeg"
        assert REQUEST_ID.match(reply.headers["x-request-id"])
        pieces = reply.aiter_raw()
        chunks = [await anext(pieces)]
        # The first bytes came while the request still held its synthesis slot: they left
        # before the last sentence was synthesized, not after. (How soon: `make bench`.)
        assert (await http.get("/ping")).json()["load"]["syntheses"] == 1
        chunks += [chunk async for chunk in pieces]
    assert len(chunks) >= 3, "one piece per sentence at least"
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
