"""Cartesia's own clients, unmodified, against the real server with only the URL changed:
Pipecat's CartesiaTTSService in a pipeline (a turn, its word frames, a barge-in), LiveKit's
cartesia.TTS streaming with aligned transcripts, and the `cartesia` SDK's websocket contexts,
bytes and SSE calls. The audio decodes to what the server speaks for the same text."""

import asyncio
import base64
import functools
import json

import httpx
import pytest
import websockets

pytest.importorskip("pipecat")
pytest.importorskip("cartesia")
pytest.importorskip("livekit.plugins.cartesia")

from cartesia import Cartesia
from pipecat.services.cartesia.tts import CartesiaHttpTTSService, CartesiaTTSService
from pipecat_turns import (
    LONG, RATE, STOP_FRAME_TIMEOUT_S, TEXT, audio_ms, heard_ms_with_a_barge_in, near, spoken_over_http, spoken_turn,
    words_in_order,
)

KATIE = "f786b574-daa5-4673-aa0c-cbe3e8534c02"  # LiveKit's default Cartesia voice
RAW = {"container": "raw", "encoding": "pcm_s16le", "sample_rate": RATE}


@functools.cache  # a length depends on the server, text and voice only: one synthesis per text a run
def reference_ms(server, text: str) -> float:
    """The same text through Cartesia's bytes path: what the server speaks for it."""
    reply = httpx.post(f"{server.http_url}/tts/bytes", timeout=180, json={
        "model_id": "sonic-3", "transcript": text, "voice": {"mode": "id", "id": KATIE}, "output_format": RAW})
    assert reply.status_code == 200, reply.text
    return len(reply.content) / 2 / RATE * 1000


def pipecat_service(server) -> CartesiaTTSService:
    return CartesiaTTSService(api_key="unused", url=f"ws://127.0.0.1:{server.port}/tts/websocket", sample_rate=RATE,
                              settings=CartesiaTTSService.Settings(voice=KATIE), stop_frame_timeout_s=STOP_FRAME_TIMEOUT_S)


async def test_pipecats_cartesia_service_speaks_a_turn_with_its_words_in_order(speech_server):
    spoken = await spoken_turn(pipecat_service(speech_server), TEXT)
    assert near(audio_ms(spoken), reference_ms(speech_server, TEXT))
    assert words_in_order(spoken, TEXT)


async def test_pipecats_cartesia_http_service_speaks(speech_server):
    down = await spoken_over_http(CartesiaHttpTTSService, speech_server, KATIE, TEXT)
    assert near(audio_ms(down), reference_ms(speech_server, TEXT))


async def test_a_barge_in_stops_the_turns_audio(speech_server):
    # Pipecat's Cartesia service queues an EndFrame behind the turn's audio, where the interruption
    # would drop it: the input stays open until the barge-in, as in a live call.
    heard = await heard_ms_with_a_barge_in(pipecat_service(speech_server), LONG, hold=True)
    # Its first sentence at most, never the turn: Pipecat's cancel stops the context on the server.
    assert 0 < heard < 0.6 * reference_ms(speech_server, LONG)


async def test_livekits_cartesia_tts_streams_with_aligned_transcripts(speech_server):
    from livekit.agents.types import USERDATA_TIMED_TRANSCRIPT
    from livekit.agents.utils import http_context
    from livekit.plugins import cartesia

    async with http_context.open():  # what an agent worker provides its plugins
        tts = cartesia.TTS(api_key="unused", base_url=speech_server.http_url, voice=KATIE, sample_rate=RATE)
        try:
            stream = tts.stream()
            for i in range(0, len(TEXT), 4):
                stream.push_text(TEXT[i:i + 4])
            stream.end_input()
            events = [event async for event in stream]
            await stream.aclose()
        finally:
            await tts.aclose()
    samples = sum(e.frame.samples_per_channel for e in events)
    assert near(samples / RATE * 1000, reference_ms(speech_server, TEXT))
    words = [w for e in events for w in e.frame.userdata.get(USERDATA_TIMED_TRANSCRIPT, [])]
    assert "".join(words).split() == TEXT.split()
    starts = [w.start_time for w in words]  # from the context's start, across its sentences
    assert starts == sorted(starts) and 0 <= starts[0] and starts[-1] <= samples / RATE


def sdk(server) -> Cartesia:
    return Cartesia(api_key="unused", base_url=server.http_url, websocket_base_url=f"ws://127.0.0.1:{server.port}")


async def test_the_sdks_websocket_context_streams_each_sentence_before_the_input_ends(speech_server):
    def speak() -> tuple[bytes, list[str], list[str]]:
        with sdk(speech_server).tts.websocket_connect() as connection:
            context = connection.context(model_id="sonic-3", voice={"mode": "id", "id": KATIE}, output_format=RAW,
                                         add_timestamps=True, timeout=120)  # a server waiting for the end fails
            context.push("Hello ")
            context.push("there. ")  # a whole sentence: spoken now, while the rest is still to come
            events = context.receive()
            first = next(events)
            context.push("How are ")
            context.push("you today?")
            context.no_more_inputs()
            rest = [first, *events]
        audio = b"".join(e.audio for e in rest if e.type == "chunk")
        words = [w for e in rest if e.type == "timestamps" for w in e.word_timestamps.words]
        return audio, words, [e.type for e in rest]

    audio, words, kinds = await asyncio.to_thread(speak)
    assert kinds[0] == "chunk" and kinds[-1] == "done" and "error" not in kinds
    assert near(len(audio) / 2 / RATE * 1000, reference_ms(speech_server, TEXT))
    assert words == TEXT.split()


def test_the_sdks_bytes_and_sse_calls_speak(speech_server):
    client = sdk(speech_server)
    voice = {"mode": "id", "id": KATIE}
    audio = client.tts.generate(model_id="sonic-3", transcript=TEXT, voice=voice, output_format=RAW).read()
    assert near(len(audio) / 2 / RATE * 1000, reference_ms(speech_server, TEXT))
    events = list(client.tts.generate_sse(model_id="sonic-3", transcript=TEXT, voice=voice, output_format=RAW,
                                          add_timestamps=True))
    assert events[-1].type == "done"
    sse_audio = b"".join(e.audio for e in events if e.type == "chunk")
    assert near(len(sse_audio) / 2 / RATE * 1000, len(audio) / 2 / RATE * 1000)
    assert [w for e in events if e.type == "timestamps" for w in e.word_timestamps.words] == TEXT.split()


async def exchange(url: str, messages: list[dict], until) -> list[dict]:
    """Send `messages`, then read replies until `until(replies)`."""
    async with websockets.connect(url) as ws:
        for message in messages:
            await ws.send(json.dumps(message))
        replies = []
        while not until(replies):
            replies.append(json.loads(await asyncio.wait_for(ws.recv(), 120)))
    return replies


def generation(transcript: str, context_id: str, **extra) -> dict:
    return {"model_id": "sonic-3", "transcript": transcript, "voice": {"mode": "id", "id": KATIE},
            "output_format": RAW, "context_id": context_id} | extra


def context_audio_ms(replies: list[dict], context_id: str) -> float:
    data = b"".join(base64.b64decode(r["data"]) for r in replies if r["type"] == "chunk" and r["context_id"] == context_id)
    return len(data) / 2 / RATE * 1000


async def test_cancel_stops_a_context_and_the_socket_speaks_the_next(speech_server):
    async with websockets.connect(f"ws://127.0.0.1:{speech_server.port}/tts/websocket") as ws:
        await ws.send(json.dumps(generation(LONG, "long", **{"continue": True})))
        first = json.loads(await asyncio.wait_for(ws.recv(), 120))
        await ws.send(json.dumps({"context_id": "long", "cancel": True}))
        await ws.send(json.dumps(generation("Okay.", "next")))
        replies = [first]
        while not (replies[-1]["type"] == "done" and replies[-1]["context_id"] == "next"):
            replies.append(json.loads(await asyncio.wait_for(ws.recv(), 120)))
    assert first["type"] == "chunk" and first["context_id"] == "long"
    assert not any(r["type"] in ("done", "error") for r in replies if r["context_id"] == "long")
    assert context_audio_ms(replies, "long") < 0.6 * reference_ms(speech_server, LONG)
    assert near(context_audio_ms(replies, "next"), reference_ms(speech_server, "Okay."))


async def test_behind_sagemaker_its_first_request_chooses_it_on_the_shared_socket(speech_server):
    replies = await exchange(speech_server.ws_url, [generation("Hello there.", "c1", language="en")],
                             lambda r: r and r[-1]["type"] in ("done", "error"))
    assert replies[-1]["type"] == "done" and {r["context_id"] for r in replies} == {"c1"}
    assert near(context_audio_ms(replies, "c1"), reference_ms(speech_server, "Hello there."))


def test_the_invocations_form_answers_bytes_and_events(speech_server):
    body = generation("Hello there.", "c1")
    reply = httpx.post(f"{speech_server.http_url}/invocations", json=body, timeout=180)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("audio/L16")
    assert near(len(reply.content) / 2 / RATE * 1000, reference_ms(speech_server, "Hello there."))
    events = httpx.post(f"{speech_server.http_url}/invocations", json=body, timeout=180,
                        headers={"Accept": "text/event-stream"})
    kinds = [json.loads(line[6:])["type"] for line in events.text.splitlines() if line.startswith("data: ")]
    assert kinds[0] == "chunk" and kinds[-1] == "done"


def test_errors_keep_cartesias_shape(speech_server):
    body = generation("Hi.", "c1", output_format={"container": "raw", "encoding": "pcm_s24le", "sample_rate": RATE})
    reply = httpx.post(f"{speech_server.http_url}/tts/bytes", json=body, timeout=60)
    assert reply.status_code == 400
    error = reply.json()
    assert error["error_code"] == "invalid_request" and error["status_code"] == 400
    assert "output_format.encoding: Input should be 'pcm_s16le'" in error["message"]
