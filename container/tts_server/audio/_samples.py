"""Input checks shared by the resampler and the encoders."""

from __future__ import annotations

import numpy as np


def as_mono(samples: np.ndarray) -> np.ndarray:
    """A 1-D C-contiguous float32 view/copy of mono `samples` (shape (n,), (n, 1) or (1, n))."""
    x = np.asarray(samples, dtype=np.float32)
    if x.ndim != 1:
        if x.size != max(x.shape, default=0):
            raise ValueError(f"expected mono samples, got shape {x.shape}")
        x = x.reshape(-1)
    return np.ascontiguousarray(x)
