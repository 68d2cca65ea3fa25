"""Audio output stage: format negotiation, streaming resampling, incremental encoding."""

from .formats import AUDIO_FORMATS, SAMPLE_RATES, OutputSpec, UnsupportedAudio, negotiate
from .resampler import StreamingResampler

__all__ = [
    "AUDIO_FORMATS",
    "SAMPLE_RATES",
    "OutputSpec",
    "StreamingResampler",
    "UnsupportedAudio",
    "negotiate",
]
