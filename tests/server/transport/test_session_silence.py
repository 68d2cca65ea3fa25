"""No dead air (SPEC §6), as a client hears it: the first sound comes right after the first
byte, and sentences are 150-500 ms apart, on both engines, in raw PCM and in Ogg/Opus."""

from itertools import pairwise

import numpy as np
import pytest
from server.audio.audio_testkit import decode
from server.wire import Peer

TEXT = "今日は晴れです。明日は雨が降ります。週末は曇りでしょう。"
SENTENCES = 3
AUDIBLE = 10 ** (-40 / 20)  # -40 dBFS


def silent_runs_ms(samples: np.ndarray, rate: int, window_ms: int = 5) -> list[tuple[float, float]]:
    """(start, length) in ms of each run of windows whose peak is below -40 dBFS, between sounds."""
    size = rate * window_ms // 1000
    peaks = np.abs(samples[: len(samples) // size * size]).reshape(-1, size).max(axis=1)
    loud = np.flatnonzero(peaks >= AUDIBLE)
    runs = []
    for before, after in pairwise(loud):
        if after - before > 1:
            runs.append(((before + 1) * window_ms, (after - before - 1) * window_ms))
    return runs


# The trimming is each engine's (its own silence around a piece); what a codec does to the gaps is
# not: Ogg/Opus once, on the embedded engine.
@pytest.mark.parametrize("engine, fmt", [("onnx", "pcm_16"), ("onnx", "opus"), ("torch", "pcm_16")])
async def test_speech_starts_at_once_and_sentences_are_a_pause_apart(request, engine, fmt):
    # the shared servers, whatever make-up gain the tests before taught them: the cuts follow the
    # decode (engine/output.py)
    server = request.getfixturevalue("speech_server" if engine == "onnx" else "torch_server")
    peer = await Peer.connect(server.ws_url)
    await peer.open(format=fmt, audio_frames="binary")
    await peer.send({"type": "response.create", "text": TEXT, "response_id": "r"})
    (done,) = await peer.until_done("r")
    await peer.close()
    assert done["status"] == "completed"
    samples, rate = decode(peer.audio_of("r"), fmt, 24000)

    first_audible_ms = np.flatnonzero(np.abs(samples) >= AUDIBLE)[0] * 1000 / rate
    assert first_audible_ms <= 50

    runs = silent_runs_ms(samples, rate)
    gaps = [length for _, length in runs if length >= 120]
    # where each quiet run lies, for a failure's reader: within a sentence or between two
    quiet = [(int(start), int(length)) for start, length in runs if length >= 50]
    heard = f"silent runs (start ms, length ms) {quiet} in {len(samples) * 1000 // rate} ms"
    assert len(gaps) == SENTENCES - 1, heard
    assert all(150 <= gap <= 500 for gap in gaps), heard
