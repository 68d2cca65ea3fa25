"""What a client hears: every format decodes to the model's duration; timestamps line up."""

import numpy as np
import pytest
from server.audio.audio_testkit import CODEC_EXTRA, FORMAT_RATES, covering, decode
from server.wire import Peer

TEXT = "こんにちは。今日は、いい天気ですね。"
SHORT = "はい。"  # where the length proves nothing: each format's duration against the float32 one
# Every format and every rate once, over the socket (the encoders' tests take the whole matrix).
CASES = covering(FORMAT_RATES)


async def synthesize(url: str, text: str = TEXT, **open_fields) -> tuple[Peer, dict]:
    peer = await Peer.connect(url)
    created = await peer.open(**open_fields)
    assert created["type"] == "session.created", created
    await peer.send({"type": "response.create", "text": text, "response_id": "r", "with_timestamps": True})
    (done,) = await peer.until_done("r")
    await peer.close()
    assert done["status"] == "completed"
    return peer, done


@pytest.fixture(scope="module")
async def reference(speech_server):
    """The model's own output: float32 at 24 kHz."""
    peer, done = await synthesize(speech_server.ws_url)
    samples = np.frombuffer(peer.audio_of("r"), "<f4")
    return samples, peer, done


async def test_reference_audio_is_speech_of_the_reported_length(reference):
    samples, _, done = reference
    seconds = len(samples) / 24000
    assert 1.5 < seconds < 6
    assert done["usage"]["audio_ms"] == round(seconds * 1000)
    # Speech, not silence or noise: loud enough, with quiet gaps between words.
    frames = samples[: len(samples) // 240 * 240].reshape(-1, 240)
    rms = np.sqrt((frames**2).mean(axis=1))
    assert rms.max() > 0.05
    assert (rms < 0.01).mean() > 0.05


# Binary framing is format-independent: a raw and two container formats cover it.
FRAMED_CASES = [(f, r, "json") for f, r in CASES] + [("pcm_16", 24000, "binary"), ("opus", 24000, "binary"), ("mp3", 8000, "binary")]


@pytest.fixture(scope="module")
async def short_reference(speech_server) -> np.ndarray:
    peer, _ = await synthesize(speech_server.ws_url, SHORT)
    return np.frombuffer(peer.audio_of("r"), "<f4")


@pytest.mark.parametrize("fmt, rate, frames", FRAMED_CASES)
async def test_every_format_decodes_to_the_expected_duration(speech_server, short_reference, fmt, rate, frames):
    peer, done = await synthesize(speech_server.ws_url, SHORT, format=fmt, sample_rate=rate, audio_frames=frames)
    data = peer.audio_of("r")
    decoded, decoded_rate = decode(data, fmt, rate)
    expected = done["usage"]["audio_ms"] * rate / 1000  # what the server says it sent, in whole ms
    priming, padding = CODEC_EXTRA.get(fmt, (0, 0))
    scale = decoded_rate / rate  # opus decodes at 48 kHz
    assert expected * scale - 2 * scale <= len(decoded) <= (expected + priming + padding + 2) * scale
    # Another response of the same text, as raw float32: the same length (the cuts follow the
    # decode, not the first-window make-up gain the server has learned by then: windows.py)
    assert done["usage"]["audio_ms"] == len(short_reference) / 24


async def test_container_formats_are_one_file_per_response(speech_server):
    peer, _ = await synthesize(speech_server.ws_url, format="wav")  # two sentences: two pieces, one file
    data = peer.audio_of("r")
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE"
    assert data.count(b"RIFF") == 1
    peer, _ = await synthesize(speech_server.ws_url, format="opus")
    assert peer.audio_of("r")[:4] == b"OggS"


async def test_timestamps_are_ordered_inside_the_audio_and_cover_the_text(reference):
    samples, peer, _ = reference
    duration_ms = len(samples) / 24
    alignments = [a for chunk in peer.received.of("audio.chunk") for a in chunk["alignments"]]
    assert alignments
    previous_end_ms, previous_end_char = 0, 0
    for a in alignments:
        assert TEXT[a["start_char"] : a["end_char"]] == a["text"]
        assert a["start_char"] >= previous_end_char
        assert previous_end_ms <= a["start_ms"] < a["end_ms"] <= duration_ms
        previous_end_ms, previous_end_char = a["end_ms"], a["end_char"]
    covered = "".join(a["text"] for a in alignments)
    assert covered == TEXT.replace(" ", "")
    # Derived from the model's 25 ms duration frames, not estimated.
    assert all(a["start_ms"] % 25 == 0 and a["end_ms"] % 25 == 0 for a in alignments)
    # The word 天気 is heard where the audio is loud.
    weather = next(a for a in alignments if a["text"] == "天気")
    segment = samples[weather["start_ms"] * 24 : weather["end_ms"] * 24]
    assert np.sqrt((segment**2).mean()) > 0.02


async def test_timestamps_only_when_asked(speech_server):
    peer = await Peer.connect(speech_server.ws_url)
    await peer.open()
    await peer.send({"type": "response.create", "text": "はい。", "response_id": "plain"})
    await peer.until_done("plain")
    assert all("alignments" not in c for c in peer.received.of("audio.chunk"))
    await peer.close()
