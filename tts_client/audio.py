"""Decode what a response produced far enough to know how long it plays.

Raw formats are counted; container formats (Ogg/Opus, MP3, WAV, FLAC, AAC) are decoded
with PyAV, imported only when needed. What each format is comes from its record in the
shared `tts_formats` package, the same one the server encodes from.
"""

from __future__ import annotations

import io

from tts_formats import BY_NAME, BY_SUFFIX

BYTES_PER_SAMPLE = {name: f.bytes_per_sample for name, f in BY_NAME.items() if f.bytes_per_sample}
CONTAINERS = {name: f.demuxer for name, f in BY_NAME.items() if f.demuxer}
FILE_SUFFIXES = {suffix: f.name for suffix, f in BY_SUFFIX.items()}


class UndecodableAudio(ValueError):
    pass


def duration_ms(format: str, sample_rate: int, data: bytes) -> float:
    if format in BYTES_PER_SAMPLE:
        width = BYTES_PER_SAMPLE[format]
        if len(data) % width:
            raise UndecodableAudio(f"{format}: {len(data)} bytes is not a whole number of {width}-byte samples")
        return len(data) / width / sample_rate * 1000
    if format in CONTAINERS:
        return _decoded_ms(CONTAINERS[format], data)
    raise UndecodableAudio(f"unknown format {format!r}")


def decoded_sample_rate(format: str, data: bytes) -> int | None:
    """The rate a container format's bytes decode at; None for raw formats (no header) and for
    Opus, which always decodes at 48 kHz whatever rate it was encoded from."""
    if format not in CONTAINERS or format == "opus":
        return None
    return _decode(CONTAINERS[format], data)[1]


def _decoded_ms(container: str, data: bytes) -> float:
    samples, rate = _decode(container, data)
    return samples / rate * 1000


def _decode(container: str, data: bytes) -> tuple[int, int]:
    import av

    samples, rate = 0, 0
    try:
        with av.open(io.BytesIO(data), format=container) as source:
            for frame in source.decode(audio=0):
                samples += frame.samples
                rate = frame.sample_rate
    except av.FFmpegError as error:
        raise UndecodableAudio(f"{container}: {error}") from None
    if not rate:
        raise UndecodableAudio(f"{container}: no audio frames")
    return samples, rate
