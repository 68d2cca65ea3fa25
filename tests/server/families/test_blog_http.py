"""POST /invocations with the bodies the AWS blog sample's own client sends
(sample-kokoro-tts-for-ai-agents, packages/tts-client: `{"text", "voice", "speed", "format",
"request_timestamp", "sample_rate"?}`, no `stream`), answered as its container answers them."""

import base64
import io
import json
import struct
import time
import wave

import httpx
import pytest
from server.audio.audio_testkit import decoded_seconds

from tts_server.families.blog.http import claims_body as is_blog_body

TEXT = "こんにちは。今日はいい天気ですね。"
VOICE = "jf_alpha"  # this engine's voices are Japanese; the blog's af_heart needs the English ones


def blog_body(**fields) -> dict:
    """Exactly what their client's _build_payload sends."""
    return {"text": TEXT, "voice": VOICE, "speed": 1.0, "format": "wav", "request_timestamp": time.time()} | fields


@pytest.fixture
async def http(speech_server):
    async with httpx.AsyncClient(base_url=speech_server.http_url, timeout=120) as client:
        yield client


async def streamed(http, body: dict) -> tuple[httpx.Response, list[bytes]]:
    async with http.stream("POST", "/invocations", json=body) as reply:
        chunks = [chunk async for chunk in reply.aiter_raw()]
    return reply, chunks


# Two renderings of one text are cut alike (whatever first-window make-up gain the server has
# learned between them: engine/windows.py); durations are given to the ms, and resampled.
ROUNDING_S = 0.002


@pytest.fixture(scope="module")
async def whole_wav(speech_server):
    async with httpx.AsyncClient(base_url=speech_server.http_url, timeout=120) as client:
        return await client.post("/invocations", json=blog_body(stream=False))


async def test_default_is_a_chunked_wav_stream_with_the_streaming_header(http, whole_wav):
    reply, chunks = await streamed(http, blog_body())
    assert reply.status_code == 200 and reply.headers["content-type"] == "audio/wav"
    audio = b"".join(chunks)
    # Their container's header: 44 bytes, RIFF and data sizes 0xFFFFFFFF, PCM16 mono 24 kHz.
    riff, riff_size, wave_id, fmt, _, pcm, channels, rate, _, _, bits, data, data_size = struct.unpack(
        "<4sI4s4sIHHIIHH4sI", audio[:44])
    assert (riff, wave_id, fmt, data) == (b"RIFF", b"WAVE", b"fmt ", b"data")
    assert riff_size == data_size == 0xFFFFFFFF
    assert (pcm, channels, rate, bits) == (1, 1, 24000, 16)
    # What their client computes: the rate at byte 24, the duration from the bytes after the header.
    assert struct.unpack_from("<I", audio, 24)[0] == 24000
    seconds = (len(audio) - 44) / 2 / 24000
    assert seconds == pytest.approx(float(whole_wav.headers["x-audio-duration"]), abs=ROUNDING_S)


async def test_mp3_is_a_bare_frame_stream(http, whole_wav):
    reply, chunks = await streamed(http, blog_body(format="mp3"))
    assert reply.status_code == 200 and reply.headers["content-type"] == "audio/mpeg"
    audio = b"".join(chunks)
    assert audio[:2] == b"\xff\xf3" or audio[:2] == b"\xff\xf2" or audio[:2] == b"\xff\xfb", "no ID3 tag: a frame first"
    expected = float(whole_wav.headers["x-audio-duration"])
    assert decoded_seconds(audio, "mp3", 24000) == pytest.approx(expected, abs=0.15)  # + encoder priming/padding


async def test_stream_false_is_one_whole_wav_with_their_headers(whole_wav):
    reply = whole_wav
    assert reply.status_code == 200 and reply.headers["content-type"] == "audio/wav"
    with wave.open(io.BytesIO(reply.content)) as wav:  # real sizes: the stdlib reader needs them
        assert (wav.getframerate(), wav.getsampwidth(), wav.getnchannels()) == (24000, 2, 1)
        seconds = wav.getnframes() / 24000
    assert struct.unpack_from("<I", reply.content, 40)[0] == len(reply.content) - 44
    assert float(reply.headers["x-audio-duration"]) == pytest.approx(seconds, abs=0.001)
    assert int(reply.headers["x-characters-processed"]) == len(TEXT)
    inference_ms = int(reply.headers["x-inference-time-ms"])
    assert inference_ms > 0
    assert float(reply.headers["x-rtf"]) == pytest.approx(inference_ms / 1000 / seconds, rel=0.05, abs=0.002)


async def test_sse_uses_their_event_names_and_reassembles_to_the_same_audio(http, whole_wav):
    body = blog_body(format="wav", transport="sse", request_id="req-7")
    buffer, frames = b"", []
    async with http.stream("POST", "/invocations", json=body) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        async for part in reply.aiter_raw():  # buffer across delivery units, as their docs require
            buffer += part
            while b"\n\n" in buffer:
                frame, buffer = buffer.split(b"\n\n", 1)
                event_line, data_line = frame.decode().split("\n")
                frames.append((event_line.removeprefix("event: "), json.loads(data_line.removeprefix("data: "))))
    names = [name for name, _ in frames]
    assert names[0] == "audio_stream_start" and names[-1] == "audio_stream_end"
    assert set(names[1:-1]) == {"audio_chunk"}
    assert frames[0][1] == {"request_id": "req-7", "format": "wav", "voice": VOICE, "sample_rate": 24000}
    chunks = [data for name, data in frames if name == "audio_chunk"]
    assert [c["seq"] for c in chunks] == list(range(len(chunks))) and {c["request_id"] for c in chunks} == {"req-7"}
    audio = b"".join(base64.b64decode(c["data"]) for c in chunks)
    assert audio[:4] == b"RIFF" and struct.unpack_from("<I", audio, 4)[0] == 0xFFFFFFFF
    end = frames[-1][1]
    assert end == {"request_id": "req-7", "total_chunks": len(chunks), "duration_s": end["duration_s"]}
    assert end["duration_s"] == pytest.approx((len(audio) - 44) / 2 / 24000, abs=0.002)
    whole_s = float(whole_wav.headers["x-audio-duration"])
    assert end["duration_s"] == pytest.approx(whole_s, abs=ROUNDING_S), "the same speech as the whole file"


async def test_a_stale_request_timestamp_is_408_request_stale(http):
    reply = await http.post("/invocations", json=blog_body(request_timestamp=time.time() - 57))
    assert reply.status_code == 408
    assert reply.json()["error"] == "request_stale"  # their container's body, which their client types
    fresh = await http.post("/invocations", json=blog_body(text="はい。", request_timestamp=time.time() - 5, stream=False))
    assert fresh.status_code == 200


async def test_22050_hz_decodes_to_the_right_duration(http, whole_wav):
    reply, chunks = await streamed(http, blog_body(sample_rate=22050))
    audio = b"".join(chunks)
    assert struct.unpack_from("<I", audio, 24)[0] == 22050
    assert (len(audio) - 44) / 2 / 22050 == pytest.approx(float(whole_wav.headers["x-audio-duration"]), abs=ROUNDING_S)


async def test_errors_are_flat_and_name_the_field(http):
    reply = await http.post("/invocations", json=blog_body(transport="websocket"))
    assert reply.status_code == 400
    body = reply.json()
    assert body["error"] == "invalid_request_error" and "transport: Input should be 'binary' or 'sse'" in body["message"]
    reply = await http.post("/invocations", json=blog_body(text=""))
    assert reply.status_code == 400 and "text: String should have at least 1 character" in reply.json()["message"]


async def test_without_a_voice_the_engine_default_speaks_as_af_heart_is_absent(http, speech_server):
    body = blog_body(stream=False)
    del body["voice"]
    reply = await http.post("/invocations", json=body)
    assert reply.status_code == 200 and reply.headers["content-type"] == "audio/wav"
    assert float(reply.headers["x-audio-duration"]) > 0.5


async def test_bulbul_bodies_keep_their_shape_and_accept_audio_streams_them(http):
    body = {"text": "はい。", "speaker": "woman-1", "target_language_code": "ja-JP", "model": "bulbul:v3"}
    whole = await http.post("/invocations", json=body)
    assert whole.headers["content-type"] == "application/json" and set(whole.json()) == {"request_id", "audios"}
    assert whole.headers["x-model"] == "kokoro-82m", "what actually spoke"
    # InvokeEndpointWithResponseStream passes its Accept on: asking for audio streams the bytes.
    async with http.stream("POST", "/invocations", json=body | {"output_audio_codec": "mp3"},
                           headers={"Accept": "audio/mpeg"}) as reply:
        audio = b"".join([chunk async for chunk in reply.aiter_raw()])
    assert reply.headers["content-type"] == "audio/mpeg" and decoded_seconds(audio, "mp3", 24000) > 0.3


@pytest.mark.parametrize("body, blog", [
    ({"text": "a", "voice": "af_heart"}, True),
    ({"text": "a", "request_timestamp": 1.0, "format": "mp3"}, True),
    ({"text": "a", "transport": "sse"}, True),
    ({"text": "a"}, False),  # ours: the JSON reply
    ({"text": "a", "voice": "af_heart", "model": "bulbul:v3"}, False),  # Bulbul's field: Bulbul's answer
    ({"text": "a", "voice": "af_heart", "speaker_id": "default"}, False),  # the session protocol's own field
    ({"text": "a", "voice": "af_heart", "with_timestamps": True}, False),
])
def test_the_blog_shape_is_recognised_by_its_fields(body, blog):
    assert is_blog_body(body) is blog
