"""A response's later piece, run alone, is decoded over its speech only: the model's silence around
it is not decoded, every sample stays in its place, and what the server keeps of the piece
(pauses.trim) sounds as the whole decode does. Unit checks on a decoder double that records what
it was asked for; the real model through the runner, against its own whole decode."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from cores import ENGINE_THREADS

from tts_server.engine import speech_span
from tts_server.engine.backend import SAMPLES_PER_DURATION_UNIT as UNIT
from tts_server.engine.backend import Front
from tts_server.engine.factory import build_synthesizer
from tts_server.engine.pauses import Pauses
from tts_server.engine.speech_span import MARGIN_FRAMES, span

SILENCE, SPEECH = -9.0, 4.0  # the model's predicted energy in its pads and in speech


def piece(lead=12, speech=60, tail=30) -> Front:
    """A piece of `lead` pad frames, `speech` frames of speech, then `tail` frames of the model's
    silence (inside the last phoneme's duration, as the model predicts it)."""
    durations = np.array([lead, *([3] * (speech // 3 - 1)), 3 + tail, 1])
    energy = np.full(int(durations.sum()), SILENCE, np.float32)
    energy[lead : lead + speech] = SPEECH
    return Front(durations, None, energy)


class RecordingDecoder:
    """A decoder double: each frame's samples are that frame's number (so a misplaced one shows),
    and the frame ranges it was asked for are recorded."""

    def __init__(self):
        self.calls: list[tuple[int, int]] = []

    def decode(self, front, start, end, control=None):
        self.calls.append((start, end))
        return np.repeat(np.arange(start, end, dtype=np.float32) + 1, UNIT)


def test_the_span_runs_from_before_the_first_token_to_past_the_last_frame_of_speech():
    front = piece(lead=12, speech=60, tail=30)
    assert span(front) == (12 - MARGIN_FRAMES, 12 + 60 + MARGIN_FRAMES)
    near_the_edges = piece(lead=3, speech=60, tail=2)
    assert span(near_the_edges) == (0, near_the_edges.frames), "the margins stop at the piece's own ends"


def test_a_piece_with_no_frame_of_speech_energy_is_decoded_whole():
    silent = piece()
    silent.energy[:] = SILENCE
    assert span(silent) == (0, silent.frames)
    assert span(Front(silent.durations, None, None)) == (0, silent.frames), "no energy: nothing to tell silence by"


def test_the_decoder_runs_over_the_span_only_and_every_sample_keeps_its_place():
    front, decoder = piece(lead=12, speech=60, tail=30), RecordingDecoder()
    audio = speech_span.decode(decoder, front)
    low, high = span(front)
    assert decoder.calls == [(low, high)]
    assert len(audio) == front.frames * UNIT, "the durations still account for every sample"
    assert not audio[: low * UNIT].any() and not audio[high * UNIT :].any(), "outside the span: zeros"
    inner = slice((low + 1) * UNIT, (high - 1) * UNIT)  # the edge frames are ramped
    assert np.array_equal(audio[inner], np.repeat(np.arange(low + 1, high - 1, dtype=np.float32) + 1, UNIT))
    edges = audio[low * UNIT : (low + 1) * UNIT], audio[(high - 1) * UNIT : high * UNIT]
    assert edges[0][0] == 0 and edges[0][-1] > 0.99 * (low + 1), "the first decoded frame ramps in"
    assert edges[1][-1] == 0 and edges[1][0] > 0.99 * high, "the last one ramps out"
    silent = piece()
    silent.energy[:] = SILENCE
    assert np.array_equal(speech_span.decode(decoder, silent), decoder.decode(silent, 0, silent.frames)), \
        "no speech to tell by: decoded whole, nothing ramped"


@pytest.fixture(scope="module")
def spoken():
    """One sentence on the embedded engine: the runner's decode (the speech span) and the whole decode."""
    synthesizer = build_synthesizer("onnx", "cpu", threads=ENGINE_THREADS, languages=["ja"])
    text = "お支払いは現金のほか、各種クレジットカードもご利用いただけます。"
    job = synthesizer.prepare(text, 0, len(text), synthesizer.voice_book("ja").resolve("default"), 1.0, "ja").jobs[0]
    backend, asked = synthesizer.backend, []
    decode = backend.decode

    def recorded(front, start, end, control=None):
        asked.append((start, end))
        return decode(front, start, end, control)

    backend.decode = recorded
    try:
        (result,) = synthesizer.runner.run([replace(job, later=True)])
    finally:
        del backend.decode
    front = backend.front(job.ids, job.style, job.speed)
    return SimpleNamespace(result=result, asked=asked, front=front, whole=backend.decode(front, 0, front.frames))


def test_the_real_model_is_decoded_over_its_speech_and_what_is_kept_sounds_as_the_whole_decode(spoken):
    result, whole, front = spoken.result, spoken.whole, spoken.front
    assert np.array_equal(result.durations, front.durations)
    assert len(result.audio) == len(whole), "every sample in its place"
    ((low, high),) = spoken.asked
    assert high - low < 0.9 * front.frames, f"decoded {high - low} of {front.frames} frames: the silence too"
    pauses = Pauses()
    kept, reference = pauses.trim(result.audio), pauses.trim(whole)
    assert abs(kept[0] - reference[0]) <= UNIT and abs(kept[1] - reference[1]) <= UNIT, \
        f"kept {kept}, the whole decode's {reference}: the onset or the decay was cut"
    both = slice(max(kept[0], reference[0]), min(kept[1], reference[1]))
    level_db = 20 * np.log10(np.std(result.audio[both]) / np.std(whole[both]))
    assert -2.0 < level_db < 0.5, f"{level_db:.2f} dB against the whole decode"
    assert np.corrcoef(result.audio[both], whole[both])[0, 1] > 0.8, "the same speech, in place"
    misplaced = np.roll(result.audio, UNIT // 4)
    assert np.corrcoef(misplaced[both], whole[both])[0, 1] < 0.5, "the check would see speech moved by 6 ms"


class BatchingBackend(RecordingDecoder):
    """A backend of a runner that batches: what the runner asked of it."""

    default_max_batch = 4

    def __init__(self):
        super().__init__()
        self.whole: list[int] = []

    def front(self, ids, style, speed, control=None):
        return piece()

    def infer(self, ids, style, speed, control=None):
        self.whole.append(len(ids))
        return SimpleNamespace(audio=np.zeros(piece().frames * UNIT, np.float32), durations=piece().durations)

    def infer_batch(self, items, control=None):
        return [self.infer(*item) for item in items]


@pytest.mark.parametrize("max_batch, later, spans", [(1, True, True), (1, False, False), (4, True, False)])
def test_a_runner_of_one_piece_a_run_decodes_later_pieces_speech_only(max_batch, later, spans):
    """A response's first piece is decoded whole (its first audio is measured against that), and
    so is every piece of a runner that batches (a piece alone sounds as it would in a batch)."""
    from tts_server.engine.runner import ModelRunner

    backend = BatchingBackend()
    (result,) = ModelRunner(backend, max_batch).run([SimpleNamespace(ids=[1] * 20, style=None, speed=1.0, split=None,
                                                                     later=later)])
    assert len(result.audio) == piece().frames * UNIT
    assert (backend.calls, backend.whole) == (([span(piece())], []) if spans else ([], [20]))
