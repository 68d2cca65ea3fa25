"""The acoustic model interface every engine backend implements (ONNX on CPU today, PyTorch on GPU later)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

SAMPLE_RATE = 24000
SAMPLES_PER_DURATION_UNIT = 600  # Kokoro predicts durations in 25 ms frames at 24 kHz


@dataclass(frozen=True)
class Inference:
    """Audio for token ids [pad, *ids, pad] and the model's duration per token (pads included)."""

    audio: np.ndarray  # float32 mono at SAMPLE_RATE
    durations: np.ndarray  # int, len(ids) + 2; audio length == 600 * sum


class AcousticBackend(Protocol):
    name: str
    languages: tuple[str, ...]
    max_tokens: int  # phoneme tokens per inference, pads excluded
    vocab: Mapping[str, int]

    def voices(self, language: str) -> Mapping[str, np.ndarray]:
        """Voice id -> style pack of shape (max_tokens, 256)."""
        ...

    def infer(self, token_ids: Sequence[int], style: np.ndarray, speed: float) -> Inference: ...
