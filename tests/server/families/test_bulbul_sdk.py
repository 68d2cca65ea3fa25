"""Sarvam's own Bulbul SDK (`sarvamai`, unmodified) against the real local server: only its
environment's URLs point here, and the language and speaker are ones this engine has.
REST (`convert`), streamed REST (`convert_stream`) and the WebSocket client on its defaults
(which include speech_sample_rate 22050, mp3, model=None, pitch/loudness/min_buffer_size...)."""

import base64

import pytest
from sarvamai import SarvamAI
from sarvamai.core.api_error import ApiError
from sarvamai.environment import SarvamAIEnvironment
from server.audio.audio_testkit import decoded_seconds

TEXT = "こんにちは。今日はいい天気ですね。"
LANGUAGE, SPEAKER = "ja-JP", "woman-1"  # what exists here; everything else is the SDK's default


@pytest.fixture(scope="module")
def sdk(speech_server):
    environment = SarvamAIEnvironment(base=speech_server.http_url, production=speech_server.http_url.replace("http", "ws"),
                                      creative=speech_server.http_url)
    return SarvamAI(api_subscription_key="local", environment=environment, timeout=120)


@pytest.fixture(scope="module")
def reference_seconds(sdk):
    reply = sdk.text_to_speech.convert(text=TEXT, language_code=LANGUAGE, speaker=SPEAKER,
                                       output_audio_codec="linear16", speech_sample_rate=24000)
    return len(base64.b64decode(reply.audios[0])) / 2 / 24000


def test_convert_returns_the_real_time_json_as_the_sdk_parses_it(sdk, reference_seconds):
    reply = sdk.text_to_speech.convert(text=TEXT, language_code=LANGUAGE, speaker=SPEAKER, model="bulbul:v3",
                                       speech_sample_rate=22050)
    (audio,) = reply.audios
    assert reply.request_id
    assert decoded_seconds(base64.b64decode(audio), "wav", 22050) == pytest.approx(reference_seconds, abs=0.01)
    assert reference_seconds > 1


def test_convert_stream_returns_audio_bytes(sdk, reference_seconds):
    chunks = list(sdk.text_to_speech.convert_stream(text=TEXT, language_code=LANGUAGE, speaker=SPEAKER,
                                                    model="bulbul:v3", output_audio_codec="mp3"))
    audio = b"".join(chunks)
    assert decoded_seconds(audio, "mp3", 24000) == pytest.approx(reference_seconds, abs=0.15)


def test_errors_come_back_as_the_sdks_typed_errors(sdk):
    with pytest.raises(ApiError) as caught:
        sdk.text_to_speech.convert(text="", language_code=LANGUAGE)
    assert caught.value.status_code == 400
    assert "text: String should have at least 1 character" in caught.value.body["error"]["message"]


def drain_turn(ws) -> tuple[list[bytes], list]:
    """Audio messages up to the turn's final event (or an error)."""
    audio, others = [], []
    for message in ws:
        if message.type == "audio":
            audio.append(base64.b64decode(message.data.audio))
            continue
        others.append(message)
        if message.type in ("event", "error"):
            return audio, others
    return audio, others


def test_websocket_on_the_sdk_defaults_with_a_second_configure(sdk, reference_seconds):
    with sdk.text_to_speech_streaming.connect(model="bulbul:v3") as ws:
        ws.configure(target_language_code=LANGUAGE, speaker=SPEAKER)  # 22050 Hz, mp3, pitch 0, loudness 1...
        ws.convert(TEXT)
        ws.flush()
        first, events = drain_turn(ws)
        assert [e.type for e in events] == ["event"] and events[0].data.event_type == "final"
        ws.configure(target_language_code=LANGUAGE, speaker="man-1", pace=1.5, output_audio_codec="linear16",
                     speech_sample_rate=16000)
        ws.ping()  # a keep-alive: no reply, as Bulbul documents it
        ws.convert(TEXT)
        ws.flush()
        second, events = drain_turn(ws)
        assert [e.type for e in events] == ["event"]
    first_seconds = decoded_seconds(b"".join(first), "mp3", 22050)
    assert first_seconds == pytest.approx(reference_seconds, abs=0.2)
    second_seconds = len(b"".join(second)) / 2 / 16000  # the new config: PCM16 at 16 kHz, faster
    assert 0.3 * reference_seconds < second_seconds < 0.85 * reference_seconds


def test_websocket_empty_text_is_refused_as_rest_refuses_it(sdk):
    with sdk.text_to_speech_streaming.connect() as ws:
        ws.configure(target_language_code=LANGUAGE, speaker=SPEAKER)
        ws.convert("")
        error = ws.recv()
        assert error.type == "error" and error.data.code == 400
        assert "data.text: String should have at least 1 character" in error.data.message
        ws.convert("はい。")  # the session goes on
        ws.flush()
        audio, events = drain_turn(ws)
        assert audio and events[-1].type == "event"


def test_send_completion_event_false_suppresses_final(sdk):
    one = sdk.text_to_speech.convert(text="はい。", language_code=LANGUAGE, speaker=SPEAKER, output_audio_codec="linear16",
                                     speech_sample_rate=24000)
    with sdk.text_to_speech_streaming.connect(send_completion_event=False) as ws:
        ws.configure(target_language_code=LANGUAGE, speaker=SPEAKER, output_audio_codec="linear16",
                     speech_sample_rate=24000)
        for _ in range(2):
            ws.convert("はい。")
            ws.flush()
        ws._send({"type": "close"})  # ours: finish what was sent, then close 1000; the iteration ends there
        messages = list(ws)
    assert {m.type for m in messages} == {"audio"}, "the audio of both turns, and no final event"
    audio = b"".join(base64.b64decode(m.data.audio) for m in messages)
    # Each turn is one more response of the text, cut alike whatever make-up gain the server has
    # learned (windows.py)
    assert len(audio) == 2 * len(base64.b64decode(one.audios[0]))
