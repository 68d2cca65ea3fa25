"""AudioOutput: model audio at 24 kHz in, one response's encoded audio out."""

import numpy as np
import pytest
from audio_testkit import (
    FORMAT_RATES, codec_extra, SOURCE_RATE, decode, dominant_frequency, opus_input_rate,
    sine, uneven_split,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from tts_server.audio import AudioOutput, negotiate

SECONDS = 2.3


def respond(spec, pieces, source_rate=SOURCE_RATE):
    output = AudioOutput(spec, source_rate)
    chunks = [output.push(p) for p in pieces]
    chunks.append(output.close())
    return output, b"".join(chunks)


@pytest.mark.parametrize("fmt, rate", FORMAT_RATES)
def test_a_response_decodes_at_the_negotiated_rate_and_duration(fmt, rate):
    spec = negotiate(fmt, rate)
    output, data = respond(spec, uneven_split(sine(SECONDS)))

    # What the server reports (usage.audio_ms) is the audio it produced.
    assert abs(output.samples_out - SECONDS * rate) <= 1
    assert output.duration_ms == pytest.approx(SECONDS * 1000, abs=1000 / rate)

    pcm, decoded_rate = decode(data, fmt, rate)
    if fmt == "opus":  # decoders always run Opus at 48 kHz; the stream says 24 kHz
        assert decoded_rate == 48000 and opus_input_rate(data) == 24000
        expected = output.samples_out * 2
    else:
        assert decoded_rate == rate
        expected = output.samples_out
    priming, padding = codec_extra(fmt, rate)
    extra = len(pcm) - expected
    assert priming <= extra <= priming + padding, (
        f"{fmt}@{rate}: decoded {len(pcm) / decoded_rate * 1000:.1f} ms "
        f"for {output.duration_ms:.1f} ms of audio")
    assert extra / decoded_rate <= 0.2  # worst case: MP3 at 8 kHz, 1105 + 575 samples

    # ... and it is still the 440 Hz tone.
    audio = pcm[priming:priming + expected]
    assert dominant_frequency(audio, decoded_rate) == pytest.approx(440, abs=2)


@pytest.mark.parametrize("fmt, rate", [("pcm_f32", 8000), ("pcm_f32", 16000), ("wav", 16000),
                                       ("flac", 8000), ("pcm_16", 24000), ("mulaw", 8000)])
@settings(max_examples=15, deadline=None)
@given(cuts=st.lists(st.integers(0, 12000), max_size=6))
def test_any_split_into_pushes_gives_the_same_audio(fmt, rate, cuts):
    x = sine(0.5)
    spec = negotiate(fmt, rate)
    whole, _ = decode(respond(spec, [x])[1], fmt, rate)
    split, _ = decode(respond(spec, np.split(x, sorted(cuts)))[1], fmt, rate)
    assert len(split) == len(whole)
    np.testing.assert_allclose(split, whole, atol=1e-6 if fmt == "pcm_f32" else 1.01 / 32768)


@pytest.mark.parametrize("rate", [8000, 16000])
def test_sentence_joins_are_seamless_after_resampling(rate):
    # Two sentences of a continuous tone: the decoded output equals the single-push one.
    x = sine(1.0)
    _, one = respond(negotiate("pcm_f32", rate), [x])
    _, two = respond(negotiate("pcm_f32", rate), [x[:11111], x[11111:]])
    np.testing.assert_allclose(np.frombuffer(two, "<f4"), np.frombuffer(one, "<f4"), atol=1e-6)


def test_samples_out_counts_what_was_emitted_so_far():
    output = AudioOutput(negotiate("pcm_16", 24000))
    assert output.samples_out == 0 and output.duration_ms == 0
    data = output.push(sine(0.5))
    assert output.samples_out == 12000 == len(data) // 2
    assert output.duration_ms == 500
    output.close()
    assert output.samples_out == 12000


def test_resampler_tail_is_counted_at_close():
    output = AudioOutput(negotiate("pcm_16", 8000))
    output.push(sine(1.0))
    before = output.samples_out
    assert before < 8000  # the resampler holds back its filter delay ...
    tail = output.close()
    assert output.samples_out == 8000 == before + len(tail) // 2  # ... until close


def test_other_source_rates_are_resampled_too():
    output, data = respond(negotiate("pcm_f32", 8000), [sine(1.0, 16000)], source_rate=16000)
    assert output.samples_out == 8000 and len(data) == 4 * 8000


def test_close_ends_the_response():
    output = AudioOutput(negotiate("mp3"))
    output.push(sine(0.3))
    assert output.close()
    assert output.close() == b""
    with pytest.raises(RuntimeError):
        output.push(sine(0.1))


def test_an_empty_push_is_harmless():
    output = AudioOutput(negotiate("pcm_16", 16000))
    assert output.push(np.zeros(0, np.float32)) == b""
    assert output.samples_out == 0
