"""Streaming sample-rate conversion with soxr (SPEC §6)."""

from __future__ import annotations

import numpy as np
import soxr

from ._samples import as_mono


class StreamingResampler:
    """Resamples float32 mono audio chunk by chunk.

    The filter state is kept across chunks, so the output of any split of the input
    equals the one-shot resample (no clicks at the joins). The resampler holds back
    a few milliseconds of filter delay; `flush()` returns them at the end.
    Identity (no copy, no delay) when the rates match.
    """

    def __init__(self, in_rate: int, out_rate: int):
        if in_rate <= 0 or out_rate <= 0:
            raise ValueError(f"sample rates must be positive, got {in_rate} -> {out_rate}")
        self.in_rate = in_rate
        self.out_rate = out_rate
        self._stream = (
            None if in_rate == out_rate
            else soxr.ResampleStream(in_rate, out_rate, 1, dtype="float32", quality="HQ")
        )
        self._flushed = False

    def process(self, samples: np.ndarray) -> np.ndarray:
        if self._flushed:
            raise RuntimeError("process() after flush()")
        x = as_mono(samples)
        if self._stream is None:
            return x
        return self._stream.resample_chunk(x, last=False)

    def flush(self) -> np.ndarray:
        """The remaining tail; later calls return nothing."""
        if self._flushed or self._stream is None:
            self._flushed = True
            return np.zeros(0, dtype=np.float32)
        self._flushed = True
        return self._stream.resample_chunk(np.zeros(0, dtype=np.float32), last=True)
