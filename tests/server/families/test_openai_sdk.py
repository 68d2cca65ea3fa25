"""The unmodified `openai` SDK against the real server: `audio.speech.create` in every
response_format, `with_streaming_response` yielding audio before synthesis ends, SSE, OpenAI's
error envelope naming the field, and the lists Open WebUI reads."""

import base64
import json
import time

import httpx
import openai
import pytest
from server.audio.audio_testkit import decoded_seconds

TEXT = "こんにちは。今日はいい天気ですね。散歩に行きましょう。"
SHORT = "こんにちは。"  # where the length proves nothing: each format's duration against the canonical one
# response_format -> (our format name for decoding, the Content-Type OpenAI's clients expect)
FORMATS = {"mp3": ("mp3", "audio/mpeg"), "opus": ("opus", "audio/ogg"), "aac": ("aac", "audio/aac"),
           "flac": ("flac", "audio/flac"), "wav": ("wav", "audio/wav"), "pcm": ("pcm_16", "audio/L16;rate=24000")}


@pytest.fixture(scope="module")
def client(speech_server):
    return openai.OpenAI(base_url=f"{speech_server.http_url}/v1", api_key="unused", timeout=180, max_retries=0)


@pytest.fixture(scope="module")
def spoken_seconds(speech_server):
    """The same text's duration through the canonical path, to hold each format to."""
    reply = httpx.post(f"{speech_server.http_url}/invocations", timeout=180,
                       json={"text": SHORT, "speaker_id": "jf_alpha", "format": "pcm_16", "stream": True})
    return len(reply.content) / 2 / 24000


@pytest.mark.parametrize("response_format", sorted(FORMATS))
def test_every_response_format_decodes_to_the_spoken_duration(client, spoken_seconds, response_format):
    fmt, media_type = FORMATS[response_format]
    reply = client.audio.speech.with_raw_response.create(model="tts-1", voice="jf_alpha", input=SHORT,
                                                         response_format=response_format)
    assert reply.headers["content-type"] == media_type
    seconds = decoded_seconds(reply.content, fmt, 24000)
    assert seconds == pytest.approx(spoken_seconds, abs=0.15), f"{response_format}: {seconds:.2f} s"


def test_mp3_is_the_default_and_an_openai_voice_speaks_saying_which(client):
    reply = client.audio.speech.with_raw_response.create(model="gpt-4o-mini-tts", voice="alloy", input=SHORT,
                                                         instructions="Speak cheerfully.")
    assert reply.headers["content-type"] == "audio/mpeg"
    assert reply.headers["x-voice"] == "jf_alpha", "alloy (af_alloy) is absent: the closest woman's voice speaks"
    assert decoded_seconds(reply.content, "mp3", 24000) > 0.5


def test_streaming_yields_audio_before_synthesis_ends(client):
    began = time.perf_counter()
    arrivals = []
    with client.audio.speech.with_streaming_response.create(model="tts-1", voice="jf_nezumi", input=TEXT * 2,
                                                            response_format="pcm") as reply:
        for chunk in reply.iter_bytes():
            arrivals.append((time.perf_counter() - began, len(chunk)))
    total = arrivals[-1][0]
    assert len(arrivals) > 1 and sum(n for _, n in arrivals) > 24000 * 2
    assert arrivals[0][0] < 0.7 * total, f"first audio at {arrivals[0][0]:.2f} s of {total:.2f} s"


def test_sse_gives_deltas_then_done(client):
    with client.audio.speech.with_streaming_response.create(model="tts-1", voice="jf_alpha", input=TEXT,
                                                            response_format="pcm", stream_format="sse") as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        events = [json.loads(line[len("data: "):]) for line in reply.iter_lines() if line.startswith("data: ")]
    assert [e["type"] for e in events[:-1]] == ["speech.audio.delta"] * (len(events) - 1) and len(events) > 2
    assert events[-1]["type"] == "speech.audio.done" and events[-1]["usage"]["input_tokens"] == len(TEXT)
    audio = b"".join(base64.b64decode(e["audio"]) for e in events[:-1])
    assert len(audio) / 2 / 24000 == pytest.approx(events[-1]["audio_ms"] / 1000, abs=0.05)


def test_a_kokoro_fastapi_blend_speaks(client):
    reply = client.audio.speech.with_raw_response.create(model="kokoro", voice="jf_alpha(2)+jf_nezumi(1)",
                                                         input="はい。", response_format="wav")
    assert reply.headers["x-voice"] == "jf_alpha:2+jf_nezumi:1"
    assert decoded_seconds(reply.content, "wav", 24000) > 0.2


@pytest.mark.parametrize("fields, param, words", [
    ({"voice": "bob"}, "voice", ["'jf_alpha'", "OpenAI's voices: alloy"]),
    ({"response_format": "ogg"}, "response_format", ["'mp3'", "'pcm'"]),
    ({"speed": 3.0}, "speed", ["less than or equal to 2"]),
    ({"input": ""}, "input", ["at least 1 character"]),
    ({"input": "あ" * 3501}, "input", ["at most 3500 characters"]),
    ({"model": "whisper-1"}, "model", ["'kokoro-82m'", "'tts-1'"]),
])
def test_mistakes_are_400_in_openais_envelope_naming_the_field(client, fields, param, words):
    body = {"model": "tts-1", "voice": "jf_alpha", "input": "はい。"} | fields
    with pytest.raises(openai.BadRequestError) as caught:
        client.audio.speech.create(**body)
    error = caught.value.body
    assert error["type"] == "invalid_request_error" and error["param"] == param
    for word in words:
        assert word in error["message"]


def test_the_lists_have_the_shapes_open_webui_reads(speech_server, client):
    voices = httpx.get(f"{speech_server.http_url}/v1/audio/voices").json()["voices"]
    assert {"id": "jf_alpha", "name": "jf_alpha"} in voices and any(v["id"] == "alloy" for v in voices)
    models = httpx.get(f"{speech_server.http_url}/v1/audio/models").json()["models"]
    assert {"id": "tts-1"} in models and {"id": "kokoro-82m"} in models
    assert {m.id for m in client.models.list()} >= {"kokoro-82m", "tts-1", "tts-1-hd", "kokoro"}


def test_the_same_body_on_invocations_is_recognised(speech_server):
    body = {"model": "tts-1", "input": "はい。", "voice": "nova", "response_format": "flac"}
    reply = httpx.post(f"{speech_server.http_url}/invocations", json=body, timeout=120)
    assert reply.status_code == 200 and reply.headers["content-type"] == "audio/flac"
    assert decoded_seconds(reply.content, "flac", 24000) > 0.2
    bad = httpx.post(f"{speech_server.http_url}/invocations", json=body | {"voice": "bob"}, timeout=60)
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "voice"
