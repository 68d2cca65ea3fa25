"""Audio output stage: format negotiation, streaming resampling, incremental encoding."""

from .encoders import Encoder, make_encoder
from tts_formats import SAMPLE_RATES

from .formats import AUDIO_FORMATS, OutputSpec, UnsupportedAudio, negotiate
from .pipeline import AudioOutput
from .resampler import StreamingResampler

__all__ = [
    "AUDIO_FORMATS",
    "SAMPLE_RATES",
    "AudioOutput",
    "Encoder",
    "OutputSpec",
    "StreamingResampler",
    "UnsupportedAudio",
    "make_encoder",
    "negotiate",
]
