"""Output formats and sample-rate negotiation (SPEC §3, the `format`/`sample_rate` rules).

The formats themselves are records of the shared `tts_formats` package (the client reads the
same ones); this module negotiates a client's request against them."""

from __future__ import annotations

from dataclasses import dataclass

from tts_formats import BY_NAME, DEFAULT_SAMPLE_RATE, FORMATS, NAMES, AudioFormat

from ..wire.errors import FieldError, one_of

AUDIO_FORMATS: tuple[str, ...] = NAMES
# Formats whose rate is fixed; the requested `sample_rate` is ignored for them.
FIXED_RATES: dict[str, int] = {f.name: f.fixed_rate for f in FORMATS if f.fixed_rate}


class UnsupportedAudio(FieldError):
    """A requested format or sample rate is not offered; ``str(exc)`` reads "<field>: <message>"."""


@dataclass(frozen=True)
class OutputSpec:
    format: str
    sample_rate: int

    def __post_init__(self) -> None:
        if self.format not in AUDIO_FORMATS:
            raise UnsupportedAudio("format", one_of(AUDIO_FORMATS))
        allowed = self.record.rates
        if isinstance(self.sample_rate, bool) or self.sample_rate not in allowed:
            if len(allowed) == 1:
                message = f"Input should be {allowed[0]} for format {self.format!r}"
            else:
                message = one_of(allowed)
            raise UnsupportedAudio("sample_rate", message)
        object.__setattr__(self, "sample_rate", int(self.sample_rate))

    @property
    def record(self) -> AudioFormat:
        return BY_NAME[self.format]

    @property
    def media_type(self) -> str:
        return self.record.media_type_at(self.sample_rate)


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
