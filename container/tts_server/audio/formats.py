"""Output formats and sample-rate negotiation (SPEC §3, the `format`/`sample_rate` rules)."""

from __future__ import annotations

from dataclasses import dataclass

from ..wire.errors import FieldError, one_of

AUDIO_FORMATS: tuple[str, ...] = (
    "pcm_f32", "pcm_16", "mulaw", "alaw", "opus", "mp3", "wav", "flac", "aac",
)
# The common PCM rates; soxr resamples the model's 24 kHz to each, and every variable-rate
# codec here (PCM, WAV, FLAC, MP3, AAC) takes all of them.
SAMPLE_RATES: tuple[int, ...] = (8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000)
DEFAULT_SAMPLE_RATE = 24000
# Formats whose rate is fixed; the requested `sample_rate` is ignored for them.
FIXED_RATES: dict[str, int] = {"mulaw": 8000, "alaw": 8000, "opus": 24000}

_MEDIA_TYPES: dict[str, str] = {
    # No registered type exists for raw float PCM; say what it is in parameters.
    "pcm_f32": "audio/pcm;rate={rate};encoding=float;bits=32",
    "pcm_16": "audio/L16;rate={rate}",
    "mulaw": "audio/basic",
    "alaw": "audio/x-alaw-basic",
    "opus": "audio/ogg",
    "mp3": "audio/mpeg",
    "wav": "audio/wav",
    "flac": "audio/flac",
    "aac": "audio/aac",
}


class UnsupportedAudio(FieldError):
    """A requested format or sample rate is not offered; ``str(exc)`` reads "<field>: <message>"."""


@dataclass(frozen=True)
class OutputSpec:
    format: str
    sample_rate: int

    def __post_init__(self) -> None:
        if self.format not in AUDIO_FORMATS:
            raise UnsupportedAudio("format", one_of(AUDIO_FORMATS))
        allowed = (FIXED_RATES[self.format],) if self.format in FIXED_RATES else SAMPLE_RATES
        if isinstance(self.sample_rate, bool) or self.sample_rate not in allowed:
            if len(allowed) == 1:
                message = f"Input should be {allowed[0]} for format {self.format!r}"
            else:
                message = one_of(allowed)
            raise UnsupportedAudio("sample_rate", message)
        object.__setattr__(self, "sample_rate", int(self.sample_rate))

    @property
    def media_type(self) -> str:
        return _MEDIA_TYPES[self.format].format(rate=self.sample_rate)


def negotiate(format: str = "pcm_f32", sample_rate: int | None = None) -> OutputSpec:
    """The output a client gets for the `format`/`sample_rate` it asked for.

    mulaw/alaw are always 8000 and opus always 24000 (the requested rate is ignored);
    the other formats take any rate of SAMPLE_RATES, default 24000.
    Raises UnsupportedAudio (a ValueError) naming the field and the accepted values.
    """
    if not isinstance(format, str) or format not in AUDIO_FORMATS:
        raise UnsupportedAudio("format", one_of(AUDIO_FORMATS))
    if format in FIXED_RATES:
        return OutputSpec(format, FIXED_RATES[format])
    return OutputSpec(format, DEFAULT_SAMPLE_RATE if sample_rate is None else sample_rate)
