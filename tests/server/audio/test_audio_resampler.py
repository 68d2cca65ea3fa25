"""StreamingResampler: chunked output equals one-shot output, no clicks at the joins."""

import numpy as np
import pytest
import soxr
from audio_testkit import SOURCE_RATE, sine
from hypothesis import given, settings
from hypothesis import strategies as st

from tts_server.audio import StreamingResampler

INPUT = sine(0.5)


def resample_in_pieces(pieces, out_rate):
    resampler = StreamingResampler(SOURCE_RATE, out_rate)
    outputs = [resampler.process(p) for p in pieces] + [resampler.flush()]
    return outputs


@pytest.mark.parametrize("out_rate", [8000, 16000])
@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.integers(0, len(INPUT)), max_size=8))
def test_any_chunking_gives_the_one_shot_result(out_rate, cuts):
    pieces = np.split(INPUT, sorted(cuts))
    chunked = np.concatenate(resample_in_pieces(pieces, out_rate))
    one_shot = soxr.resample(INPUT, SOURCE_RATE, out_rate, quality="HQ")
    assert chunked.dtype == np.float32
    assert len(chunked) == len(one_shot)
    np.testing.assert_allclose(chunked, one_shot, atol=1e-6)


@pytest.mark.parametrize("out_rate", [8000, 16000])
def test_no_discontinuity_at_chunk_joins(out_rate):
    # Five "sentences" of one continuous 440 Hz tone must come out as that tone sampled
    # at the output rate, joins included (a click would be a local error spike there).
    outputs = resample_in_pieces(np.array_split(sine(1.0), 5), out_rate)
    y = np.concatenate(outputs)
    ideal = sine(1.0, rate=out_rate)
    assert len(y) == len(ideal)
    edge = out_rate // 100  # the tone's abrupt start and end ring for a few ms
    error = np.abs(y - ideal)[edge:-edge]
    assert error.max() < 1e-4
    joins = np.cumsum([len(o) for o in outputs[:-2]])
    assert len(joins) == 4 and all(edge < j < len(y) - edge for j in joins)


@pytest.mark.parametrize("out_rate", [8000, 16000])
def test_output_length_follows_the_rate_ratio(out_rate):
    y = np.concatenate(resample_in_pieces(np.array_split(sine(2.3), 7), out_rate))
    assert abs(len(y) - 2.3 * out_rate) <= 1


def test_matching_rates_pass_audio_through_untouched():
    resampler = StreamingResampler(24000, 24000)
    x = sine(0.1)
    np.testing.assert_array_equal(resampler.process(x), x)
    assert resampler.flush().size == 0


def test_accepts_column_vectors_and_other_dtypes():
    resampler = StreamingResampler(24000, 24000)
    out = resampler.process(np.ones((10, 1), dtype=np.float64))
    assert out.shape == (10,) and out.dtype == np.float32


def test_rejects_multichannel_audio():
    with pytest.raises(ValueError, match="mono"):
        StreamingResampler(24000, 16000).process(np.zeros((10, 2), np.float32))


def test_flush_ends_the_stream():
    resampler = StreamingResampler(24000, 8000)
    resampler.process(sine(0.2))
    assert resampler.flush().size > 0
    assert resampler.flush().size == 0
    with pytest.raises(RuntimeError):
        resampler.process(sine(0.1))
