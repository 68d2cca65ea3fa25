"""Incremental encoders, one small class per format family (SPEC §3 and §6).

Every encoder takes float32 mono samples at the spec's rate, clips them to [-1, 1]
and returns the bytes that are ready now. For container formats the chunks returned
by successive `encode()` calls and `finish()`, concatenated in order, form one file.
"""

from __future__ import annotations

import struct
from fractions import Fraction
from typing import Protocol

import av
import numpy as np
from tts_formats import G711, Raw, Wav, speech_bit_rate

from ._samples import as_mono
from .formats import OutputSpec


class Encoder(Protocol):
    def encode(self, samples: np.ndarray) -> bytes:
        """Encode float32 mono samples; return the bytes ready now (may be b"")."""

    def finish(self) -> bytes:
        """Flush the codec and close the container; the last bytes."""


def _clipped(samples: np.ndarray) -> np.ndarray:
    x = as_mono(samples)
    return np.clip(np.nan_to_num(x, nan=0.0, posinf=1.0, neginf=-1.0), -1.0, 1.0)


def _pcm16(x: np.ndarray) -> np.ndarray:
    """Clipped float in [-1, 1] -> little-endian int16."""
    return np.rint(x * 32767.0).astype("<i2")


class _Once:
    """Bookkeeping shared by all encoders: finish() once, no encode() after it."""

    _finished = False

    def _check_open(self) -> None:
        if self._finished:
            raise RuntimeError("encode() after finish()")

    def finish(self) -> bytes:
        if self._finished:
            return b""
        self._finished = True
        return self._flush()

    def _flush(self) -> bytes:
        return b""


class RawPcmEncoder(_Once):
    """pcm_f32 (little-endian float32) and pcm_16 (little-endian int16), headerless."""

    def __init__(self, sample_type: str):
        if sample_type not in ("f32", "s16"):
            raise ValueError(f"unknown PCM sample type {sample_type!r}")
        self._sample_type = sample_type

    def _payload(self, x: np.ndarray) -> bytes:
        return (x.astype("<f4") if self._sample_type == "f32" else _pcm16(x)).tobytes()

    def encode(self, samples: np.ndarray) -> bytes:
        self._check_open()
        return self._payload(_clipped(samples))


class WavEncoder(RawPcmEncoder):
    """16-bit PCM WAV for streaming: a RIFF header with unknown (0xFFFFFFFF) sizes,
    written with the first bytes, then raw PCM16."""

    UNKNOWN_SIZE = 0xFFFFFFFF

    def __init__(self, sample_rate: int):
        super().__init__("s16")
        self._header: bytes | None = self.header(sample_rate)

    @classmethod
    def header(cls, sample_rate: int) -> bytes:
        channels, bits = 1, 16
        block_align = channels * bits // 8
        return b"".join((
            b"RIFF", struct.pack("<I", cls.UNKNOWN_SIZE), b"WAVE",
            b"fmt ", struct.pack("<IHHIIHH", 16, 1, channels, sample_rate,
                                 sample_rate * block_align, block_align, bits),
            b"data", struct.pack("<I", cls.UNKNOWN_SIZE),
        ))

    def _take_header(self) -> bytes:
        header, self._header = self._header or b"", None
        return header

    @classmethod
    def with_sizes(cls, wav: bytes) -> bytes:
        """A whole streamed WAV with its real RIFF and data sizes, once its length is known."""
        header_size = len(cls.header(24000))
        sizes = struct.pack("<I", len(wav) - 8), struct.pack("<I", len(wav) - header_size)
        return wav[:4] + sizes[0] + wav[8 : header_size - 4] + sizes[1] + wav[header_size:]

    def encode(self, samples: np.ndarray) -> bytes:
        self._check_open()
        return self._take_header() + self._payload(_clipped(samples))

    def _flush(self) -> bytes:
        return self._take_header()


class _Sink:
    """Non-seekable in-memory output for a PyAV muxer, drained after every call.

    Having no seek()/tell() tells FFmpeg the output is a stream: muxers then write
    headers meant for streaming and never go back to patch them.
    """

    def __init__(self) -> None:
        self._buf = bytearray()

    def write(self, data: bytes) -> int:
        self._buf += data
        return len(data)

    def drain(self) -> bytes:
        data = bytes(self._buf)
        self._buf.clear()
        return data


def _frame(x: np.ndarray, sample_format: str, rate: int, pts: int) -> av.AudioFrame:
    data = _pcm16(x) if sample_format in ("s16", "s16p") else x
    frame = av.AudioFrame.from_ndarray(data.reshape(1, -1), format=sample_format, layout="mono")
    frame.sample_rate = rate
    frame.pts = pts
    frame.time_base = Fraction(1, rate)
    return frame


class G711Encoder(_Once):
    """mu-law / A-law (G.711), raw 8-bit samples, with PyAV's pcm_mulaw/pcm_alaw."""

    def __init__(self, codec: str, sample_rate: int):
        self._codec = av.CodecContext.create(codec, "w")
        self._codec.sample_rate = sample_rate
        self._codec.layout = "mono"
        self._codec.format = "s16"
        self._codec.time_base = Fraction(1, sample_rate)
        self._codec.open()
        self._pts = 0

    def _packets(self, frame: av.AudioFrame | None) -> bytes:
        return b"".join(bytes(packet) for packet in self._codec.encode(frame))

    def encode(self, samples: np.ndarray) -> bytes:
        self._check_open()
        x = _clipped(samples)
        if not x.size:
            return b""
        frame = _frame(x, "s16", self._codec.sample_rate, self._pts)
        self._pts += x.size
        return self._packets(frame)

    def _flush(self) -> bytes:
        return self._packets(None)


class MuxedEncoder(_Once):
    """A PyAV codec inside a PyAV muxer (Ogg/Opus, MP3, FLAC, AAC in ADTS).

    The muxer writes into a non-seekable sink with flush_packets on, so each
    `encode()` returns every packet the codec has produced so far. The header is
    written at construction and returned with the first bytes.
    """

    def __init__(self, muxer: str, codec: str, sample_format: str, sample_rate: int,
                 bit_rate: int | None = None, container_options: dict[str, str] | None = None,
                 codec_options: dict[str, str] | None = None):
        self._sink = _Sink()
        self._container = av.open(
            self._sink, "w", format=muxer,
            container_options={"flush_packets": "1", **(container_options or {})},
        )
        self._stream = self._container.add_stream(
            codec, rate=sample_rate, layout="mono", options=codec_options or {})
        self._stream.codec_context.format = sample_format
        if bit_rate:
            self._stream.codec_context.bit_rate = bit_rate
        self._sample_format = sample_format
        self._rate = sample_rate
        self._pts = 0
        self._container.start_encoding()

    def encode(self, samples: np.ndarray) -> bytes:
        self._check_open()
        x = _clipped(samples)
        if x.size:
            frame = _frame(x, self._sample_format, self._rate, self._pts)
            self._pts += x.size
            self._container.mux(self._stream.encode(frame))
        return self._sink.drain()

    def _flush(self) -> bytes:
        self._container.mux(self._stream.encode(None))
        self._container.close()
        return self._sink.drain()


def make_encoder(spec: OutputSpec) -> Encoder:
    """A fresh encoder for one response, built from its format's record (tts_formats)."""
    encoding, rate = spec.record.encoding, spec.sample_rate
    if isinstance(encoding, Raw):
        return RawPcmEncoder(encoding.sample)
    if isinstance(encoding, Wav):
        return WavEncoder(rate)
    if isinstance(encoding, G711):
        return G711Encoder(encoding.codec, rate)
    bit_rate = None if encoding.lossless else encoding.bit_rate or speech_bit_rate(rate)
    return MuxedEncoder(encoding.muxer, encoding.codec, encoding.sample_format, rate, bit_rate,
                        dict(encoding.container_options), dict(encoding.codec_options))
