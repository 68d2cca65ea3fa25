"""The audio output stage of one response: resample the model's audio, then encode it."""

from __future__ import annotations

import numpy as np

from .encoders import make_encoder
from .formats import OutputSpec
from .resampler import StreamingResampler


class AudioOutput:
    """Resampler + encoder for one response; use from one thread at a time.

    `push()` takes model audio (float32 mono at `source_rate`) and returns the encoded
    bytes ready now; `close()` returns the rest. The chunks, concatenated in order,
    are the response's audio (one file for container formats).
    """

    def __init__(self, spec: OutputSpec, source_rate: int = 24000):
        self.spec = spec
        self.samples_out = 0
        self._resampler = StreamingResampler(source_rate, spec.sample_rate)
        self._encoder = make_encoder(spec)
        self._closed = False

    def _encode(self, samples: np.ndarray) -> bytes:
        self.samples_out += samples.size
        return self._encoder.encode(samples)

    def push(self, samples_24k: np.ndarray) -> bytes:
        if self._closed:
            raise RuntimeError("push() after close()")
        return self._encode(self._resampler.process(samples_24k))

    def close(self) -> bytes:
        """Flush the resampler and the encoder; later calls return b""."""
        if self._closed:
            return b""
        self._closed = True
        return self._encode(self._resampler.flush()) + self._encoder.finish()

    @property
    def duration_ms(self) -> float:
        return self.samples_out / self.spec.sample_rate * 1000.0
