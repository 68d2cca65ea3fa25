"""The acoustic model interface every backend implements: the embedded int8 ONNX export on the
CPU, or PyTorch Kokoro from the deployed weights (GPU when present). Backends are
language-blind, like Kokoro itself: token ids and a style vector in, audio and durations out."""

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
    device: str  # where inference runs: "cpu" or "cuda"
    max_tokens: int  # phoneme tokens per inference, pads excluded
    vocab: Mapping[str, int]
    voices: Mapping[str, np.ndarray]  # Kokoro voice id ("af_heart") -> style pack (max_tokens, 256)

    def infer(self, token_ids: Sequence[int], style: np.ndarray, speed: float) -> Inference: ...
