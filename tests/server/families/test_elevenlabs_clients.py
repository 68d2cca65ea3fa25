"""ElevenLabs' own clients, unmodified, against the real server with only the base URL changed:
Pipecat's ElevenLabsTTSService in a pipeline (a turn, its word frames, a barge-in), LiveKit's
elevenlabs.TTS streaming with aligned transcripts, and the `elevenlabs` SDK's HTTP streams and
its websocket helper. The audio decodes to what the server speaks for the same text."""

import asyncio
import base64
import functools
import json
from types import SimpleNamespace

import httpx
import pytest
import pytest_asyncio
import websockets

from sagemaker_gateway.certs import issue

pytest.importorskip("pipecat")
pytest.importorskip("elevenlabs")
pytest.importorskip("livekit.plugins.elevenlabs")

from pipecat.frames.frames import TTSTextFrame
from pipecat.services.elevenlabs.tts import ElevenLabsHttpTTSService, ElevenLabsTTSService
from pipecat_turns import (
    LONG, RATE, STOP_FRAME_TIMEOUT_S, TEXT, audio_ms, heard_ms_with_a_barge_in, near, spoken_over_http, spoken_turn,
    words_in_order,
)

RACHEL = "21m00Tcm4TlvDq8ikWAM"  # ElevenLabs' premade voice id, as their examples send it


@pytest_asyncio.fixture(scope="module")
async def tls_front(speech_server, tmp_path_factory):
    """TLS in front of the server (the SDK's websocket helper only speaks wss://), bytes passed through."""
    tls = issue(tmp_path_factory.mktemp("tls-front"))
    # No TLS 1.3 session tickets: a ticket makes the socket readable before any reply, and the
    # websockets sync client then waits in an SSL read its handshake timeout cannot wake (the
    # test hung to pytest's limit instead of failing at the SDK's timeout).
    tls.context.num_tickets = 0
    writers = []

    async def pipe(reader, writer):
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        finally:
            writer.close()

    async def on_connection(reader, writer):
        upstream = await asyncio.open_connection("127.0.0.1", speech_server.port)
        writers.extend((writer, upstream[1]))
        await asyncio.gather(pipe(reader, upstream[1]), pipe(upstream[0], writer), return_exceptions=True)

    server = await asyncio.start_server(on_connection, "127.0.0.1", 0, ssl=tls.context)
    yield SimpleNamespace(url=f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}", ca_file=tls.ca_file)
    server.close()
    for writer in writers:  # no TLS goodbye left waiting for a peer that has gone
        writer.transport.abort()


@functools.cache  # a length depends on the server, text and voice only: one synthesis per text a run
def reference_ms(server, text: str) -> float:
    """The same text through ElevenLabs' HTTP stream path: what the server speaks for it."""
    reply = httpx.post(f"{server.http_url}/v1/text-to-speech/{RACHEL}/stream", params={"output_format": "pcm_24000"},
                       json={"text": text, "model_id": "eleven_flash_v2_5"}, timeout=180)
    assert reply.status_code == 200, reply.text
    return len(reply.content) / 2 / RATE * 1000


def pipecat_service(server) -> ElevenLabsTTSService:
    return ElevenLabsTTSService(api_key="unused", url=f"ws://127.0.0.1:{server.port}", sample_rate=RATE,
                                settings=ElevenLabsTTSService.Settings(voice=RACHEL),
                                stop_frame_timeout_s=STOP_FRAME_TIMEOUT_S)


async def test_pipecats_elevenlabs_service_speaks_a_turn_with_its_words_in_order(speech_server):
    spoken = await spoken_turn(pipecat_service(speech_server), TEXT)
    assert near(audio_ms(spoken), reference_ms(speech_server, TEXT))
    assert words_in_order(spoken, TEXT)


async def test_pipecats_elevenlabs_http_service_speaks_with_word_frames(speech_server):
    down = await spoken_over_http(ElevenLabsHttpTTSService, speech_server, RACHEL, TEXT)
    assert near(audio_ms(down), reference_ms(speech_server, TEXT))
    assert [f.text for f in down if isinstance(f, TTSTextFrame)] == TEXT.split()


async def test_a_barge_in_stops_the_turns_audio(speech_server):
    heard = await heard_ms_with_a_barge_in(pipecat_service(speech_server), LONG)
    # Its first sentence at most (a chunk pushed just before the cut may still arrive), never the turn:
    # the context Pipecat closes at the cut cancels the rest on the server.
    assert 0 < heard < 0.6 * reference_ms(speech_server, LONG)


async def livekit_stream(tts, text: str) -> list:
    """`text` streamed into a LiveKit TTS as an LLM writes it (a few characters at a time): its events."""
    try:
        stream = tts.stream()
        for i in range(0, len(text), 4):
            stream.push_text(text[i:i + 4])
        stream.end_input()
        events = [event async for event in stream]
        await stream.aclose()
    finally:
        await tts.aclose()
    return events


async def test_livekits_elevenlabs_tts_streams_with_aligned_transcripts(speech_server):
    from livekit.agents.types import USERDATA_TIMED_TRANSCRIPT
    from livekit.agents.utils import http_context
    from livekit.plugins import elevenlabs

    async with http_context.open():  # what an agent worker provides its plugins
        events = await livekit_stream(elevenlabs.TTS(api_key="unused", base_url=f"{speech_server.http_url}/v1",
                                                     voice_id=RACHEL, encoding="pcm_24000"), TEXT)
    samples = sum(e.frame.samples_per_channel for e in events)
    assert near(samples / RATE * 1000, reference_ms(speech_server, TEXT))
    words = [w for e in events for w in e.frame.userdata.get(USERDATA_TIMED_TRANSCRIPT, [])]
    # Every word, in order, each starting inside the audio. (LiveKit reads a message's character
    # times as if from the context's start; ElevenLabs times them from the message's own audio, and
    # so does this server, so LiveKit's word times restart at each sentence: README, "Compatibility".)
    assert "".join(words).split() == TEXT.split()
    assert all(0 <= w.start_time <= samples / RATE for w in words)


def test_the_sdks_http_streams_speak_and_time_every_character(speech_server):
    from elevenlabs.client import ElevenLabs

    client = ElevenLabs(api_key="unused", base_url=speech_server.http_url)
    audio = b"".join(client.text_to_speech.stream(voice_id=RACHEL, text=TEXT, model_id="eleven_flash_v2_5",
                                                  output_format="pcm_24000"))
    assert near(len(audio) / 2 / RATE * 1000, reference_ms(speech_server, TEXT))
    chunks = list(client.text_to_speech.stream_with_timestamps(voice_id=RACHEL, text=TEXT, output_format="pcm_24000"))
    timed = b"".join(base64.b64decode(c.audio_base_64) for c in chunks)
    assert near(len(timed) / 2 / RATE * 1000, len(audio) / 2 / RATE * 1000)
    chars = [ch for c in chunks if c.alignment for ch in c.alignment.characters]
    starts = [s for c in chunks if c.alignment for s in c.alignment.character_start_times_seconds]
    assert "".join(chars) == TEXT + " " and starts == sorted(starts) and starts[-1] <= len(timed) / 2 / RATE


async def test_the_sdks_websocket_helper_speaks_streamed_text(speech_server, tls_front, monkeypatch):
    from elevenlabs import realtime_tts
    from elevenlabs.client import ElevenLabs
    from websockets.sync.client import connect

    monkeypatch.setenv("SSL_CERT_FILE", str(tls_front.ca_file))  # the helper insists on wss://
    # The SDK's handshake wait is websockets' default 10 s; a loaded 2-core CI machine once went past
    # it (5-7 ms on other runs), so this run waits longer. Nothing else of the SDK changes.
    monkeypatch.setattr(realtime_tts, "connect", functools.partial(connect, open_timeout=60))
    client = ElevenLabs(api_key="unused", base_url=tls_front.url)

    def speak() -> bytes:
        pieces = iter(["Hello ", "there. ", "How are ", "you today?"])
        return b"".join(client.text_to_speech.convert_realtime(voice_id=RACHEL, text=pieces, output_format="pcm_24000"))

    audio = await asyncio.to_thread(speak)
    assert near(len(audio) / 2 / RATE * 1000, reference_ms(speech_server, TEXT))


async def test_behind_sagemaker_the_query_chooses_it_on_the_shared_socket(speech_server):
    """What a SageMaker client sends: the socket's query as ModelQueryString, `voice_id` in it."""
    url = f"{speech_server.ws_url}?voice_id={RACHEL}&output_format=pcm_16000&model_id=eleven_flash_v2_5"
    async with websockets.connect(url) as ws:
        for message in ({"text": " ", "context_id": "c1"}, {"text": "Hello there. ", "context_id": "c1"},
                        {"context_id": "c1", "flush": True}, {"context_id": "c1", "close_context": True}):
            await ws.send(json.dumps(message))
        audio, replies = b"", []
        while not replies or not replies[-1].get("isFinal"):
            replies.append(json.loads(await asyncio.wait_for(ws.recv(), 120)))
            audio += base64.b64decode(replies[-1].get("audio") or "")
        await ws.send(json.dumps({"close_socket": True}))
        await asyncio.wait_for(ws.wait_closed(), 30)
    assert {r.get("contextId") for r in replies} == {"c1"} and ws.close_code == 1000
    assert near(len(audio) / 2 / 16000 * 1000, reference_ms(speech_server, "Hello there."))


def test_the_invocations_form_carries_the_voice_in_the_body(speech_server):
    body = {"text": "Hello there.", "voice_id": RACHEL, "output_format": "pcm_24000"}
    reply = httpx.post(f"{speech_server.http_url}/invocations", json=body, timeout=180)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("audio/L16")
    assert near(len(reply.content) / 2 / RATE * 1000, reference_ms(speech_server, "Hello there."))


def test_errors_keep_elevenlabs_shape(speech_server):
    reply = httpx.post(f"{speech_server.http_url}/v1/text-to-speech/{RACHEL}/stream", params={"output_format": "flac"},
                       json={"text": "Hi."}, timeout=60)
    assert reply.status_code == 400
    detail = reply.json()["detail"]
    assert detail["status"] == "invalid_request" and "output_format: Input should be 'pcm_16000'" in detail["message"]
