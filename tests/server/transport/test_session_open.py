"""Opening a session: negotiation, the fatal errors before a valid open, model loading."""

import asyncio
import json

import pytest
import websockets
from running_server import start_server, stop_server, wait_until_listening
from server.wire import Peer

POLICY_VIOLATION = 1008


async def test_binary_open_negotiates_and_lists_speakers(speech_server):
    peer = await Peer.connect(speech_server.ws_url)
    created = await peer.open(format="mulaw", sample_rate=24000, audio_frames="binary", speaker_id="man-1")
    assert created["type"] == "session.created"
    assert created["session_id"]
    # mulaw is always 8000: the requested rate is ignored and the real one echoed.
    assert (created["format"], created["sample_rate"], created["audio_frames"]) == ("mulaw", 8000, "binary")
    # No language named: each response's text decides its own; the speakers are those of the likeliest.
    assert (created["language"], created["speaker_id"], created["voice"]) == (None, "man-1", "jm_kumo")
    assert {"default", "woman-1", "woman-4", "man-1", "jf_alpha", "jm_kumo"} <= set(created["speakers"])
    await peer.close()


async def test_text_frames_work_as_well_as_binary(speech_server):
    async with websockets.connect(speech_server.ws_url) as ws:
        await ws.send(json.dumps({"type": "open"}))  # a text frame
        created = json.loads(await ws.recv())
        assert (created["format"], created["sample_rate"]) == ("pcm_f32", 24000)
        await ws.send(json.dumps({"type": "ping"}))
        assert json.loads(await ws.recv()) == {"type": "pong"}


@pytest.mark.parametrize(
    "first, code, words",
    [
        ({"type": "response.create", "text": "こんにちは"}, "session_not_open", ["type", "'open'"]),
        ({"type": "start"}, "session_not_open", ["type", "'open'"]),
        ({"data": {"text": "no type, no text"}}, "session_not_open", ["type", "'open'"]),
        ({"type": "open", "sample_rate": 44101}, "invalid_request_error", ["sample_rate", "8000, 11025, 16000, 22050, 24000, 32000, 44100 or 48000"]),
        ({"type": "open", "format": "ogg"}, "invalid_request_error", ["format", "'pcm_f32'", "'aac'"]),
        ({"type": "open", "speed": 3}, "invalid_request_error", ["speed", "less than or equal to 2"]),
        ({"type": "open", "language": "xx"}, "invalid_request_error", ["language", "'ja'"]),
        ({"type": "open", "speaker_id": "nobody"}, "invalid_request_error", ["speaker_id", "'woman-1'", "blend"]),
        ({"type": "open", "audio_frames": "hex"}, "invalid_request_error", ["audio_frames", "'json' or 'binary'"]),
        ({"type": "open", "spk_ref_audio_tokens": "AAAA"}, "invalid_request_error", ["spk_ref_audio_tokens", "256"]),
    ],
)
async def test_anything_but_a_valid_open_first_is_fatal(speech_server, first, code, words):
    peer = await Peer.connect(speech_server.ws_url)
    await peer.send(first)
    error = await peer.next_event()
    assert error["type"] == "error"
    assert error["error"]["code"] == code
    for word in words:
        assert word in error["error"]["message"]
    if code == "invalid_request_error":
        assert error["error"]["message"].startswith("Validation Error(s):\n- ")
    with pytest.raises(websockets.ConnectionClosed):
        await peer.next_event()
    assert peer.connection.close_code == POLICY_VIOLATION


async def test_unreadable_first_frame_is_fatal(speech_server):
    peer = await Peer.connect(speech_server.ws_url)
    await peer.send(b"\x7b\xff\x00 not json")
    error = await peer.next_event()
    assert error["error"]["code"] == "session_not_open"
    with pytest.raises(websockets.ConnectionClosed):
        await peer.next_event()
    assert peer.connection.close_code == POLICY_VIOLATION


async def test_custom_style_vector_is_accepted(speech_server):
    import base64

    import numpy as np

    vector = np.full(256, 0.05, dtype="<f4")
    peer = await Peer.connect(speech_server.ws_url)
    created = await peer.open(spk_ref_audio_tokens=base64.b64encode(vector.tobytes()).decode())
    assert created["type"] == "session.created"
    await peer.close()


async def test_session_before_the_model_is_ready_gets_model_loading_and_1013():
    server = start_server(wait=False, gated=True, languages="ja")  # the model stays unloaded until the gate opens
    try:
        status = await asyncio.to_thread(wait_until_listening, server)
        assert status == 503, "the server must answer /ping with 503 while the model loads"
        async with websockets.connect(server.ws_url) as ws:
            error = json.loads(await ws.recv())
            assert error["type"] == "error"
            assert error["error"]["code"] == "model_loading"
            assert error["error"]["retry_after"] > 0
            with pytest.raises(websockets.ConnectionClosed):
                await ws.recv()
            assert ws.close_code == 1013
    finally:
        stop_server(server)
