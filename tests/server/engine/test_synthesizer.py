"""The real embedded model: audio length equals the predicted durations; long text is batched."""

import numpy as np
import pytest
from cores import ENGINE_THREADS

from tts_server.engine.backend import SAMPLES_PER_DURATION_UNIT
from tts_server.engine.factory import build_synthesizer


@pytest.fixture(scope="module")
def synthesizer():
    return build_synthesizer("onnx", "cpu", None, threads=ENGINE_THREADS)


def test_backend_durations_account_for_every_sample(synthesizer):
    backend = synthesizer.backend
    ids = [backend.vocab[c] for c in "koɲɲiʨiβa."]
    style = synthesizer.voice_book("ja").resolve("default")[len(ids) - 1]
    result = backend.infer(ids, style, 1.0)
    assert len(result.durations) == len(ids) + 2
    assert len(result.audio) == SAMPLES_PER_DURATION_UNIT * result.durations.sum()
    faster = backend.infer(ids, style, 2.0)
    assert len(faster.audio) < 0.7 * len(result.audio)


def test_segment_alignments_follow_the_durations(synthesizer):
    text = "天気予報です。"
    style = synthesizer.voice_book("ja").resolve("default")
    segment = synthesizer.synthesize(text, 0, len(text), style, 1.0, "ja")
    assert [a.text for a in segment.alignments] == ["天気予報", "です", "。"]
    assert segment.alignments[-1].end_ms <= segment.duration_ms
    assert segment.alignments[0].start_ms > 0, "the leading pad carries the initial silence"


def test_text_longer_than_the_model_context_is_batched(synthesizer):
    text = "これは、とても長い文章の一部です、" * 12  # 527 phoneme tokens: just over the 510 of one run
    style = synthesizer.voice_book("ja").resolve("default")
    piece = synthesizer.prepare(text, 0, len(text), style, 2.0, "ja")
    assert len(piece.chunks) == 2 and len(piece.chunks[0]) <= 510
    segment = synthesizer.synthesize(text, 0, len(text), style, 2.0, "ja")  # the fastest speed: the least audio
    assert segment.duration_ms > 6_000
    starts = [a.start_ms for a in segment.alignments]
    assert starts == sorted(starts)
    assert segment.alignments[-1].end_char == len(text)
    assert np.abs(segment.audio).max() > 0.05
