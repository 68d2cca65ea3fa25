"""The Bulbul v3 bidirectional dialect on the real server: config, incremental text, flush/final,
ping, errors with HTTP status codes. Frames go out as binary UTF-8 JSON, as SageMaker sends them."""

import asyncio
import base64
import json

import pytest
import websockets
from server.audio.audio_testkit import decoded_seconds

FINAL = {"type": "event", "data": {"event_type": "final"}}
# The seed's config, with Bulbul's own field names.
SEED_CONFIG = {"speaker": "woman-1", "language_code": "ja-JP", "output_audio_codec": "mp3",
               "speech_sample_rate": 24000, "pace": 1.0}


class Bulbul:
    def __init__(self, ws):
        self.ws = ws

    @classmethod
    async def configured(cls, url: str, **data) -> "Bulbul":
        session = cls(await websockets.connect(url))
        await session.send({"type": "config", "data": data})
        return session

    async def send(self, message: dict) -> None:
        await self.ws.send(json.dumps(message).encode())

    async def text(self, text: str) -> None:
        await self.send({"type": "text", "data": {"text": text}})

    async def recv(self, timeout: float = 30) -> dict:
        return json.loads(await asyncio.wait_for(self.ws.recv(), timeout))

    async def until_final(self) -> tuple[bytes, list[dict]]:
        """The audio up to the next final, and every message on the way (final included)."""
        audio, seen = bytearray(), []
        while not seen or seen[-1] != FINAL:
            seen.append(await self.recv())
            if seen[-1]["type"] == "audio":
                audio += base64.b64decode(seen[-1]["data"]["audio"])
        return bytes(audio), seen

    async def nothing_for(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self.ws.recv(), seconds)
        except TimeoutError:
            return True
        return False


@pytest.fixture
async def session(speech_server):
    session = await Bulbul.configured(speech_server.ws_url, **SEED_CONFIG)
    yield session
    await session.ws.close()


async def test_seed_example_config_text_flush_gives_mp3_then_final(session):
    await session.text("こんにちは。今日はいい天気ですね。")
    await session.send({"type": "flush"})
    audio, seen = await session.until_final()
    assert all(m["type"] == "audio" for m in seen[:-1]) and len(seen) >= 3
    assert {m["data"]["content_type"] for m in seen[:-1]} == {"audio/mpeg"}
    assert 1.5 < decoded_seconds(audio, "mp3", 24000) < 8


async def test_a_completed_sentence_is_spoken_before_any_flush(session):
    await session.text("最初の文です。次の文は")  # the second sentence has no end yet: held back
    first = await session.recv()
    assert first["type"] == "audio", "the first sentence did not wait for flush"
    await session.text("まだ続きます")
    await session.send({"type": "flush"})
    audio, seen = await session.until_final()
    assert len(audio) > 0, "the flushed remainder is spoken before final"
    assert await session.nothing_for(0.5), "nothing after final"


async def test_a_message_ending_a_sentence_is_spoken_without_waiting_for_the_next(session):
    await session.text("こんにちは。")  # a client that sends one sentence a message, as the blog's chunker does
    assert (await session.recv())["type"] == "audio"


async def test_every_flush_ends_with_its_own_final(session):
    for turn in ("一つ目の発言です。", "二つ目。"):
        await session.text(turn)
        await session.send({"type": "flush"})
    first_audio, _ = await session.until_final()
    second_audio, _ = await session.until_final()
    assert first_audio and second_audio
    await session.send({"type": "flush"})  # nothing pending: final at once
    assert await session.recv() == FINAL


async def test_ping_needs_no_reply(session):
    await session.send({"type": "ping"})
    assert await session.nothing_for(0.3)
    await session.send({"type": "flush"})
    assert await session.recv() == FINAL


async def test_linear16_is_raw_pcm16_at_the_rate_and_pace(speech_server):
    lengths = {}
    for pace in (1.0, 1.6):
        session = await Bulbul.configured(speech_server.ws_url, output_audio_codec="linear16", speech_sample_rate=16000,
                                          pace=pace, speaker="jm_kumo")
        await session.text("今日は晴れです。")
        await session.send({"type": "flush"})
        audio, seen = await session.until_final()
        assert seen[0]["data"]["content_type"] == "audio/L16;rate=16000"
        lengths[pace] = len(audio) / 2 / 16000
        await session.ws.close()
    assert 0.7 < lengths[1.0] < 4
    assert lengths[1.6] < 0.8 * lengths[1.0]


async def test_close_speaks_the_rest_then_closes_1000(session):
    await session.text("さようなら")
    await session.send({"type": "close"})
    audio, _ = await session.until_final()
    assert audio
    with pytest.raises(websockets.ConnectionClosed):
        await session.recv()
    assert session.ws.close_code == 1000


@pytest.mark.parametrize(
    "data, words",
    [
        ({"speech_sample_rate": 12000}, ["data.speech_sample_rate: Input should be 8000, 11025, 16000, 22050, 24000, 32000, 44100 or 48000"]),
        ({"output_audio_codec": "ogg"}, ["data.output_audio_codec: Input should be 'pcm_f32'", "'linear16'"]),
        ({"pace": 3}, ["data.pace: Input should be less than or equal to 2"]),
        ({"speaker": "nobody"}, ["data.speaker: Input should be 'default', 'woman-1'", "got 'nobody'"]),
        ({"target_language_code": "ko-KR"}, ["data.target_language_code: Input should be ", "'ja'", "got 'ko-KR'"]),
        ({"model": "bulbul:v1"}, ["data.model: Input should be 'kokoro-82m', 'bulbul:v3', 'bulbul:v2' or 'bulbul:v4-flash'"]),
        (None, ["data: Field required"]),
    ],
)
async def test_a_bad_config_is_a_400_error_and_close_1008(speech_server, data, words):
    async with websockets.connect(speech_server.ws_url) as ws:
        await ws.send(json.dumps({"type": "config"} | ({"data": data} if data is not None else {})).encode())
        error = json.loads(await ws.recv())
        assert error["type"] == "error" and error["data"]["code"] == 400
        assert error["data"]["message"].startswith("Validation Error(s):\n- ")
        for word in words:
            assert word in error["data"]["message"]
        with pytest.raises(websockets.ConnectionClosed):
            await ws.recv()
        assert ws.close_code == 1008


async def test_the_served_model_id_is_accepted_in_config_or_model_query_string(speech_server):
    for url, data in ((speech_server.ws_url, {"model": "kokoro-82m"}), (speech_server.ws_url + "?model=kokoro-82m", {})):
        session = await Bulbul.configured(url, **data)
        await session.send({"type": "flush"})
        assert await session.recv() == FINAL
        await session.ws.close()


async def test_another_model_in_the_model_query_string_is_refused(speech_server):
    session = await Bulbul.configured(speech_server.ws_url + "?model=bulbul%3Av1")
    error = await session.recv()
    assert error == {"type": "error", "data": {
        "message": "Validation Error(s):\n- model: Input should be 'kokoro-82m', 'bulbul:v3', 'bulbul:v2' or 'bulbul:v4-flash' (the ModelQueryString's model)", "code": 400}}
    with pytest.raises(websockets.ConnectionClosed):
        await session.recv()
    assert session.ws.close_code == 1008


async def test_bad_messages_are_400_errors_and_the_session_goes_on(session):
    bad = [
        ({"type": "speak"}, "type: Input should be 'config', 'text', 'flush', 'ping' or 'close'"),
        ({"type": "config", "data": {"pace": 3}}, "data.pace: Input should be less than or equal to 2"),
        ({"type": "text", "data": {"text": ""}}, "data.text: String should have at least 1 character"),
        ({"type": "text", "data": {"text": 5}}, "data.text: Input should be a valid string"),
        ({"type": "text"}, "data: Field required"),
        (b"{oops", "frame: Invalid JSON"),
        (b"\xff\xfe", "frame: Input should be UTF-8 encoded JSON"),
    ]
    for message, words in bad:
        await session.ws.send(message if isinstance(message, bytes) else json.dumps(message).encode())
        error = await session.recv()
        assert error["type"] == "error" and error["data"]["code"] == 400, error
        assert words in error["data"]["message"], error
    await session.text("大丈夫です。")
    await session.send({"type": "flush"})
    audio, _ = await session.until_final()
    assert audio


async def test_unfinished_text_is_bounded_by_the_text_limit(session):
    await session.text("あ" * 2000)
    await session.text("い" * 2000)  # 4000 characters without a sentence end
    error = await session.recv()
    assert error["data"]["code"] == 400
    assert "data.text: at most 3500 characters may wait for the end of a sentence" in error["data"]["message"]


async def test_more_turns_than_the_queue_holds_get_a_429(session):
    # Each text message with a complete sentence is one response; 15 may wait behind the active one.
    for i in range(17):
        await session.text(f"{i}番です。")  # each message ends its sentence: 17 responses
    while (message := await session.recv())["type"] == "audio":
        pass
    assert message["type"] == "error" and message["data"]["code"] == 429
    assert "WS_MAX_PENDING_RESPONSES" in message["data"]["message"]
