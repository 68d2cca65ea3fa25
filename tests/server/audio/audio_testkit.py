"""Shared helpers for the audio tests: synthetic input and decoding what a client receives."""

from __future__ import annotations

import io
import struct

import av
import numpy as np

SOURCE_RATE = 24000  # the model's output rate

# What a decoder returns beyond the input, in samples at the output rate:
# (priming before the audio, the most padding after it).
# MP3 (LAME): 576 samples of encoder delay + 529 of decoder delay, then padding up to a
# whole 576-sample frame; a stream has no Xing/LAME tag to let the decoder trim them.
# AAC in ADTS: 1024 samples of priming, padding up to a whole 1024-sample frame.
# Ogg/Opus carries pre-skip and end trimming, FLAC/WAV/raw PCM/G.711 are sample-exact.
CODEC_EXTRA: dict[str, tuple[int, int]] = {"mp3": (1105, 576 + 575), "aac": (1024, 1023)}


def codec_extra(fmt: str, rate: int) -> tuple[int, int]:
    """CODEC_EXTRA at a given rate. MPEG-1 rates (32 kHz and up) have 1152-sample MP3 frames;
    at the 11.025 kHz family LAME pads by up to one frame more than at the 8 kHz family."""
    priming, padding = CODEC_EXTRA.get(fmt, (0, 0))
    if fmt == "mp3":
        frame = 1152 if rate >= 32000 else 576
        padding = 2 * frame - 1
    return priming, padding

FIXED_RATE = {"mulaw": 8000, "alaw": 8000, "opus": 24000}
RAW_FORMATS = ("pcm_f32", "pcm_16", "mulaw", "alaw", "wav")  # no codec delay at all
# Every (format, sample_rate) pair a client can get.
FORMAT_RATES = [
    (fmt, rate)
    for fmt in ("pcm_f32", "pcm_16", "mulaw", "alaw", "opus", "mp3", "wav", "flac", "aac")
    for rate in ((FIXED_RATE[fmt],) if fmt in FIXED_RATE else (8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000))
]



def covering(pairs: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Pairs in which every format and every rate of `pairs` appears at least once: what an
    end-to-end test through the model needs (the encoders' tests take the whole matrix)."""
    chosen: list[tuple[str, int]] = []
    by_format: dict[str, list[int]] = {}
    for fmt, rate in pairs:
        by_format.setdefault(fmt, []).append(rate)
    for fmt, rates in sorted(by_format.items(), key=lambda item: len(item[1])):  # fixed rates first
        used = {rate for _, rate in chosen}
        chosen.append((fmt, next((rate for rate in rates if rate not in used), rates[0])))
    return chosen


_DEMUXERS = {"mulaw": "mulaw", "alaw": "alaw", "opus": "ogg", "mp3": "mp3",
             "wav": "wav", "flac": "flac", "aac": "aac"}


def sine(seconds: float, rate: int = SOURCE_RATE, freq: float = 440.0, amp: float = 0.5) -> np.ndarray:
    t = np.arange(round(seconds * rate)) / rate
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def uneven_split(x: np.ndarray, fractions=(0.07, 0.31, 0.02, 0.25, 0.001)) -> list[np.ndarray]:
    """Pieces of uneven length (a tiny one among them), in order, covering all of x."""
    cuts = np.cumsum(np.round(np.array(fractions) * len(x)).astype(int))
    return np.split(x, cuts)


def _to_float(frame: av.AudioFrame) -> np.ndarray:
    a = frame.to_ndarray().reshape(-1)
    if a.dtype == np.int16:
        return a.astype(np.float32) / 32768.0
    if a.dtype == np.int32:
        return (a.astype(np.float64) / 2.0**31).astype(np.float32)
    return a.astype(np.float32)


def decode(data: bytes, fmt: str, rate: int) -> tuple[np.ndarray, int]:
    """Decode a response's bytes the way a client would: (float samples, sample rate).

    Raw formats are read at the negotiated `rate`; the others report their own.
    Opus is always decoded at 48 kHz (see `opus_input_rate` for the stream's rate).
    """
    if fmt == "pcm_f32":
        return np.frombuffer(data, "<f4").astype(np.float32), rate
    if fmt == "pcm_16":
        return np.frombuffer(data, "<i2").astype(np.float32) / 32768.0, rate
    options = {"sample_rate": str(rate), "ch_layout": "mono"} if fmt in ("mulaw", "alaw") else {}
    with av.open(io.BytesIO(data), "r", format=_DEMUXERS[fmt], options=options) as container:
        stream = container.streams.audio[0]
        assert stream.channels == 1
        frames = [_to_float(f) for f in container.decode(stream)]
        return (np.concatenate(frames) if frames else np.zeros(0, np.float32)), stream.rate


def decoded_length(data: bytes, fmt: str, rate: int) -> int:
    """Samples a client can decode from `data` so far (0 for a header alone)."""
    if not data:
        return 0
    try:
        return len(decode(data, fmt, rate)[0])
    except (av.error.InvalidDataError, av.error.EOFError):
        return 0


def opus_input_rate(data: bytes) -> int:
    """The input sample rate an Ogg/Opus stream declares in its OpusHead packet."""
    head = data.index(b"OpusHead")
    return struct.unpack_from("<I", data, head + 12)[0]


def decoded_seconds(data: bytes, fmt: str, rate: int) -> float:
    pcm, decoded_rate = decode(data, fmt, rate)
    priming, _ = CODEC_EXTRA.get(fmt, (0, 0))
    return (len(pcm) - priming) / decoded_rate


def dominant_frequency(x: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    return float(np.argmax(spectrum) * rate / len(x))


def snr_db(reference: np.ndarray, actual: np.ndarray) -> float:
    noise = actual.astype(np.float64) - reference
    return float(10 * np.log10(np.sum(reference.astype(np.float64) ** 2) / np.sum(noise**2)))
