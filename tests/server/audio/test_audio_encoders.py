"""Encoders: incremental output, clipping, G.711 fidelity, stream-friendly headers."""

import io
import struct
import wave
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from audio_testkit import (
    CODEC_EXTRA, FORMAT_RATES, RAW_FORMATS, decode, decoded_length, decoded_seconds,
    opus_input_rate, sine, snr_db,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from tts_server.audio import AUDIO_FORMATS, make_encoder, negotiate

CONTAINERS = ("opus", "mp3", "wav", "flac", "aac")


def encode_all(fmt, rate, pieces):
    encoder = make_encoder(negotiate(fmt, rate))
    chunks = [encoder.encode(p) for p in pieces]
    return chunks, encoder.finish()


@pytest.mark.parametrize("fmt, rate", FORMAT_RATES)
@pytest.mark.parametrize("pushes", [1, 3])
def test_encode_returns_audio_before_finish(fmt, rate, pushes):
    # One sentence (1.2 s) pushed whole or in parts: the bytes encode() returned,
    # without finish(), already decode to most of it (codec lookahead aside).
    chunks, _ = encode_all(fmt, rate, np.array_split(sine(1.2, rate), pushes))
    assert chunks[0], "the first encode() of a sentence returned nothing"
    assert decoded_seconds(b"".join(chunks), fmt, rate) >= 0.8


@pytest.mark.parametrize("fmt, rate", FORMAT_RATES)
def test_first_audio_comes_after_a_fraction_of_a_second(fmt, rate):
    # Pushing 10 ms at a time: raw formats answer at once; codecs need a frame or
    # a few (and lookahead) before a decodable frame leaves them.
    encoder = make_encoder(negotiate(fmt, rate))
    pushed, sent = 0, b""
    for piece in np.array_split(sine(0.5, rate), 50):
        sent += encoder.encode(piece)
        pushed += len(piece)
        if decoded_length(sent, fmt, rate):
            break
    first_audio_ms = pushed / rate * 1000
    if fmt in RAW_FORMATS:
        assert pushed == len(np.array_split(sine(0.5, rate), 50)[0])  # the first 10 ms piece
    else:
        assert first_audio_ms <= (110 if rate == 24000 else 300)


@pytest.mark.parametrize("fmt", AUDIO_FORMATS)
def test_samples_are_clipped_to_full_scale(fmt):
    rate = negotiate(fmt).sample_rate
    loud = 3.0 * sine(0.5, rate, amp=1.0)
    loud[100:110] = np.nan
    chunks, tail = encode_all(fmt, rate, [loud])
    pcm, _ = decode(b"".join(chunks) + tail, fmt, rate)
    assert np.all(np.isfinite(pcm))
    if fmt in ("pcm_f32", "pcm_16", "wav", "flac"):  # lossless: a clipped square-ish wave
        assert np.max(np.abs(pcm)) <= 1.0
        assert np.max(pcm) >= 32767 / 32768 and np.min(pcm) <= -32767 / 32768
        np.testing.assert_allclose(pcm[100:110], 0.0, atol=1 / 32768)
    else:  # lossy codecs may overshoot a little around the flat tops, never wildly
        assert np.max(np.abs(pcm)) <= 1.3


def test_float_pcm_is_little_endian_float32_verbatim():
    x = sine(0.1, 16000)
    chunks, tail = encode_all("pcm_f32", 16000, [x])
    assert b"".join(chunks) + tail == x.astype("<f4").tobytes()


@pytest.mark.parametrize("fmt", ["pcm_16", "wav"])
def test_16_bit_pcm_is_within_half_a_step(fmt):
    x = sine(0.2, 8000, amp=0.9)
    chunks, tail = encode_all(fmt, 8000, [x])
    pcm, _ = decode(b"".join(chunks) + tail, fmt, 8000)
    np.testing.assert_allclose(pcm, x, atol=1.5 / 32768)


@pytest.mark.parametrize("fmt", ["mulaw", "alaw"])
def test_g711_decodes_back_close_to_the_input(fmt):
    x = sine(1.0, 8000, amp=0.5)
    chunks, tail = encode_all(fmt, 8000, np.array_split(x, 3))
    data = b"".join(chunks) + tail
    assert len(data) == len(x)  # one byte per sample, no header
    pcm, rate = decode(data, fmt, 8000)
    assert rate == 8000
    assert snr_db(x, pcm) > 30  # G.711's companding keeps ~38 dB on a loud tone


@settings(max_examples=25, deadline=None)
@given(fmt=st.sampled_from(["pcm_f32", "pcm_16", "wav", "mulaw", "alaw"]),
       cuts=st.lists(st.integers(0, 4000), max_size=6))
def test_raw_output_does_not_depend_on_how_the_input_was_split(fmt, cuts):
    x = sine(0.5, 8000)
    whole = b"".join(p for chunks, tail in [encode_all(fmt, 8000, [x])] for p in [*chunks, tail])
    chunks, tail = encode_all(fmt, 8000, np.split(x, sorted(cuts)))
    assert b"".join(chunks) + tail == whole


@settings(max_examples=10, deadline=None)
@given(cuts=st.lists(st.integers(0, 12000), max_size=5))
def test_flac_decodes_to_the_same_pcm_for_any_split(cuts):
    x = sine(0.5)
    chunks, tail = encode_all("flac", 24000, np.split(x, sorted(cuts)))
    pcm, _ = decode(b"".join(chunks) + tail, "flac", 24000)
    np.testing.assert_allclose(pcm, x, atol=1.5 / 32768)


def test_wav_streams_a_header_of_unknown_length_first():
    encoder = make_encoder(negotiate("wav", 16000))
    first = encoder.encode(sine(0.1, 16000))
    assert first[:4] == b"RIFF" and first[8:16] == b"WAVEfmt "
    assert struct.unpack_from("<I", first, 4)[0] == 0xFFFFFFFF
    fmt_tag, channels, rate, _, _, bits = struct.unpack_from("<HHIIHH", first, 20)
    assert (fmt_tag, channels, rate, bits) == (1, 1, 16000, 16)
    assert first[36:40] == b"data" and struct.unpack_from("<I", first, 40)[0] == 0xFFFFFFFF
    assert len(first) == 44 + 2 * 1600
    second = encoder.encode(sine(0.1, 16000))
    assert len(second) == 2 * 1600  # the header comes once
    assert encoder.finish() == b""
    with wave.open(io.BytesIO(first + second)) as w:  # the stdlib reader copes too
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (16000, 1, 2)
        assert len(w.readframes(10**9)) == 2 * 3200


def test_a_wav_response_without_audio_is_still_a_header():
    assert len(make_encoder(negotiate("wav")).finish()) == 44


@pytest.mark.parametrize("fmt, magic", [
    ("opus", b"OggS"), ("flac", b"fLaC"),
    ("mp3", b"\xff"),  # a frame sync straight away: no ID3 tag, playable from byte 0
    ("aac", b"\xff"),  # an ADTS frame header
])
def test_container_streams_start_with_their_own_signature(fmt, magic):
    chunks, _ = encode_all(fmt, negotiate(fmt).sample_rate, [sine(0.5)])
    assert chunks[0].startswith(magic)


def test_opus_declares_a_24k_input_rate():
    chunks, tail = encode_all("opus", 24000, [sine(0.3)])
    assert opus_input_rate(b"".join(chunks) + tail) == 24000


def test_encoders_in_parallel_threads_do_not_interfere():
    # The server runs one encoder per response in worker threads.
    jobs = [(fmt, negotiate(fmt).sample_rate) for fmt in CONTAINERS + ("mulaw",)] * 2

    def run(job):
        fmt, rate = job
        chunks, tail = encode_all(fmt, rate, np.array_split(sine(1.0, rate), 4))
        return decode(b"".join(chunks) + tail, fmt, rate)[0]  # (Ogg serials are random)

    alone = [run(job) for job in jobs]
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        together = list(pool.map(run, jobs))
    for a, b in zip(alone, together, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("fmt", AUDIO_FORMATS)
def test_no_encode_after_finish(fmt):
    encoder = make_encoder(negotiate(fmt))
    encoder.encode(sine(0.1))
    encoder.finish()
    assert encoder.finish() == b""
    with pytest.raises(RuntimeError):
        encoder.encode(sine(0.1))


def test_priming_table_covers_only_codecs_that_need_it():
    assert set(CODEC_EXTRA) <= set(CONTAINERS)
