"""Deepgram's own clients, unmodified, against the real server with only the base URL changed:
Pipecat's DeepgramTTSService in a pipeline (a turn, its frames in order, a barge-in), LiveKit's
deepgram.TTS streaming, and the `deepgram-sdk`'s socket and REST calls; then its socket's
protocol as they use it (Flush answered once per flush, Clear, bad frames, a bad query) on the
real model. The audio decodes to what the server speaks for the same text."""

import asyncio
import functools
import json

import httpx
import pytest
import websockets

pytest.importorskip("pipecat")
pytest.importorskip("deepgram")
pytest.importorskip("livekit.plugins.deepgram")

from pipecat.services.deepgram.tts import DeepgramHttpTTSService, DeepgramTTSService
from pipecat_turns import (
    LONG, RATE, STOP_FRAME_TIMEOUT_S, TEXT, audio_ms, heard_ms_with_a_barge_in, near, spoken_over_http, spoken_turn,
)
from server.families.test_elevenlabs_clients import livekit_stream

MODEL = "aura-2-thalia-en"


@functools.cache  # a length depends on the server, text, voice and rate only: one synthesis per text a run
def reference_ms(server, text: str, rate: int = RATE) -> float:
    """The same text through Deepgram's REST path: what the server speaks for it."""
    reply = httpx.post(f"{server.http_url}/v1/speak", params={"model": MODEL, "encoding": "linear16",
                                                               "sample_rate": rate, "container": "none"},
                       json={"text": text}, headers={"Authorization": "Token unused"}, timeout=180)
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"].startswith("audio/L16")
    return len(reply.content) / 2 / rate * 1000


def pipecat_service(server) -> DeepgramTTSService:
    return DeepgramTTSService(api_key="unused", base_url=f"ws://127.0.0.1:{server.port}", sample_rate=RATE,
                              settings=DeepgramTTSService.Settings(voice=MODEL), stop_frame_timeout_s=STOP_FRAME_TIMEOUT_S)


async def test_pipecats_deepgram_service_speaks_a_turn_in_order(speech_server):
    spoken = await spoken_turn(pipecat_service(speech_server), TEXT)  # one Flushed ends the turn once
    assert near(audio_ms(spoken), reference_ms(speech_server, TEXT))


async def test_pipecats_deepgram_http_service_speaks(speech_server):
    down = await spoken_over_http(DeepgramHttpTTSService, speech_server, MODEL, TEXT)
    assert near(audio_ms(down), reference_ms(speech_server, TEXT))


async def test_a_barge_in_stops_the_turns_audio(speech_server):
    heard = await heard_ms_with_a_barge_in(pipecat_service(speech_server), LONG)
    # Its first sentence at most (a chunk sent just before the Clear may still arrive), never the turn.
    assert 0 < heard < 0.6 * reference_ms(speech_server, LONG)


async def test_livekits_deepgram_tts_streams(speech_server):
    from livekit.agents.utils import http_context
    from livekit.plugins import deepgram

    async with http_context.open():  # what an agent worker provides its plugins
        events = await livekit_stream(deepgram.TTS(api_key="unused", base_url=f"{speech_server.http_url}/v1/speak",
                                                   model=MODEL, sample_rate=RATE), TEXT)
    samples = sum(e.frame.samples_per_channel for e in events)
    assert near(samples / RATE * 1000, reference_ms(speech_server, TEXT))
    assert events[-1].is_final


async def test_the_sdks_socket_speaks_and_flushes(speech_server):
    from deepgram import AsyncDeepgramClient
    from deepgram.environment import DeepgramClientEnvironment
    from deepgram.speak.v1.types import SpeakV1Flush, SpeakV1Text

    environment = DeepgramClientEnvironment(base=speech_server.http_url, production=f"ws://127.0.0.1:{speech_server.port}",
                                            agent="", agent_rest="")
    client = AsyncDeepgramClient(api_key="unused", environment=environment)
    audio, kinds = b"", []
    async with client.speak.v1.connect(model=MODEL, encoding="linear16", sample_rate=16000) as socket:
        for piece in ("Hello ", "there. ", "How are ", "you today?"):
            await socket.send_text(SpeakV1Text(text=piece))
        await socket.send_flush(SpeakV1Flush(type="Flush"))
        while True:
            message = await asyncio.wait_for(socket.recv(), 120)
            if isinstance(message, bytes):
                audio += message
                continue
            kinds.append(message.type)
            if message.type == "Flushed":
                break
    assert kinds == ["Metadata", "Flushed"]
    assert near(len(audio) / 2 / 16000 * 1000, reference_ms(speech_server, TEXT, 16000))


async def test_the_sdks_rest_call_speaks_mp3(speech_server):
    import io

    import av
    from deepgram import AsyncDeepgramClient
    from deepgram.environment import DeepgramClientEnvironment

    environment = DeepgramClientEnvironment(base=speech_server.http_url, production="", agent="", agent_rest="")
    client = AsyncDeepgramClient(api_key="unused", environment=environment)
    mp3 = b"".join([chunk async for chunk in client.speak.v1.audio.generate(text=TEXT, model=MODEL)])
    with av.open(io.BytesIO(mp3), format="mp3") as container:
        stream = container.streams.audio[0]
        samples = sum(frame.samples for frame in container.decode(stream))
        rate = stream.rate
    assert rate == 22050 and near(samples / rate * 1000, reference_ms(speech_server, TEXT))


async def speak_raw(url: str, messages: list[dict], until: int) -> tuple[list, int | None]:
    """Messages to its socket; the replies (JSON decoded, audio as bytes) until `until` Flushed."""
    replies = []
    async with websockets.connect(url) as ws:
        for message in messages:
            await ws.send(json.dumps(message))
        while sum(isinstance(r, dict) and r.get("type") == "Flushed" for r in replies) < until:
            frame = await asyncio.wait_for(ws.recv(), 120)
            replies.append(frame if isinstance(frame, bytes) else json.loads(frame))
        await ws.send(json.dumps({"type": "Close"}))
        await asyncio.wait_for(ws.wait_closed(), 30)
    return replies, ws.close_code


def socket_url(server, path: str = "/v1/speak", **query) -> str:
    query = {"model": MODEL, "encoding": "linear16", "sample_rate": RATE} | query
    return f"ws://127.0.0.1:{server.port}{path}?" + "&".join(f"{k}={v}" for k, v in query.items())


async def test_flushed_comes_once_per_flush_and_bad_frames_are_warnings_on_a_live_session(speech_server):
    messages = [{"type": "Speak", "text": "Good morning."}, {"type": "Flush"}, {"type": "Shout"},
                {"type": "Speak"}, {"type": "Speak", "text": "Good night."}, {"type": "Flush"}]
    replies, code = await speak_raw(socket_url(speech_server), messages, until=2)
    kinds = [r["type"] for r in replies if isinstance(r, dict)]
    assert kinds[0] == "Metadata" and sorted(kinds[1:]) == ["Flushed", "Flushed", "Warning", "Warning"]
    warnings = [r for r in replies if isinstance(r, dict) and r["type"] == "Warning"]
    assert "type: Input should be 'Speak', 'Flush', 'Clear' or 'Close'" in warnings[0]["description"]
    assert "text: Field required" in warnings[1]["description"]
    flushed = [r["sequence_id"] for r in replies if isinstance(r, dict) and r["type"] == "Flushed"]
    second_audio = b"".join(r for r in replies[replies.index({"type": "Flushed", "sequence_id": 0}):]
                            if isinstance(r, bytes))
    assert flushed == [0, 1] and code == 1000
    assert near(len(second_audio) / 2 / RATE * 1000, reference_ms(speech_server, "Good night."))


async def test_clear_stops_the_audio_and_the_session_speaks_on(speech_server):
    async with websockets.connect(socket_url(speech_server)) as ws:
        await ws.send(json.dumps({"type": "Speak", "text": LONG}))
        await ws.send(json.dumps({"type": "Flush"}))
        heard = b""
        while len(heard) < 4800:  # the first 100 ms of audio
            frame = await asyncio.wait_for(ws.recv(), 120)
            heard += frame if isinstance(frame, bytes) else b""
        await ws.send(json.dumps({"type": "Clear"}))
        while not isinstance(frame := await asyncio.wait_for(ws.recv(), 60), str) or '"Cleared"' not in frame:
            heard += frame if isinstance(frame, bytes) else b""
        assert json.loads(frame) == {"type": "Cleared", "sequence_id": 0}
        await ws.send(json.dumps({"type": "Speak", "text": "Okay."}))
        await ws.send(json.dumps({"type": "Flush"}))
        after, replies = b"", []
        while not replies or replies[-1].get("type") != "Flushed":
            frame = await asyncio.wait_for(ws.recv(), 120)
            if isinstance(frame, bytes):
                after += frame
            else:
                replies.append(json.loads(frame))
    assert len(heard) / 2 / RATE * 1000 < 0.6 * reference_ms(speech_server, LONG)
    assert replies == [{"type": "Flushed", "sequence_id": 1}], "the cleared flush is never answered"
    assert near(len(after) / 2 / RATE * 1000, reference_ms(speech_server, "Okay."))


async def test_a_bad_encoding_is_an_error_naming_the_field_then_close_1008(speech_server):
    async with websockets.connect(socket_url(speech_server, encoding="wav")) as ws:
        await ws.send(json.dumps({"type": "Speak", "text": "Hi."}))
        error = json.loads(await asyncio.wait_for(ws.recv(), 30))
        await asyncio.wait_for(ws.wait_closed(), 30)
    assert error["type"] == "Error" and error["err_code"] == "INVALID_QUERY_PARAMETER"
    assert "encoding: Input should be 'linear16', 'mulaw', 'alaw', 'mp3', 'opus', 'flac' or 'aac'" in error["err_msg"]
    assert ws.close_code == 1008


def test_rest_errors_keep_deepgrams_shape(speech_server):
    reply = httpx.post(f"{speech_server.http_url}/v1/speak", params={"model": MODEL, "encoding": "mulaw",
                                                                     "sample_rate": 16000},
                       json={"text": "Hi."}, timeout=60)
    assert reply.status_code == 400
    body = reply.json()
    assert body["err_code"] == "INVALID_QUERY_PARAMETER" and body["request_id"] == reply.headers["dg-request-id"]
    assert "sample_rate: Input should be 8000 for encoding 'mulaw'" in body["err_msg"]
    empty = httpx.post(f"{speech_server.http_url}/v1/speak", params={"model": MODEL}, json={"text": " "}, timeout=60)
    assert empty.status_code == 400 and "text" in empty.json()["err_msg"]


async def test_behind_sagemaker_the_query_chooses_it_on_the_shared_socket(speech_server):
    """What DeepgramSageMakerTTSService sends: the socket's query as ModelQueryString."""
    replies, code = await speak_raw(socket_url(speech_server, "/invocations-bidirectional-stream", sample_rate=16000),
                                    [{"type": "Speak", "text": "Hello there."}, {"type": "Flush"}], until=1)
    audio = b"".join(r for r in replies if isinstance(r, bytes))
    assert replies[0]["type"] == "Metadata" and code == 1000
    assert near(len(audio) / 2 / 16000 * 1000, reference_ms(speech_server, "Hello there.", 16000))


def test_the_invocations_form_carries_the_query_in_the_body(speech_server):
    body = {"text": "Hello there.", "model": MODEL, "encoding": "linear16", "container": "none"}
    reply = httpx.post(f"{speech_server.http_url}/invocations", json=body, timeout=180)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("audio/L16")
    assert near(len(reply.content) / 2 / RATE * 1000, reference_ms(speech_server, "Hello there."))
