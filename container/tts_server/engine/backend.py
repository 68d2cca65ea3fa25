"""The acoustic model interface every backend implements: the embedded int8 ONNX export on the
CPU, or PyTorch Kokoro from the deployed weights (GPU when present). Backends are
language-blind, like Kokoro itself: token ids and a style vector in, audio and durations out.

A run is two parts: `front` (text encoder, durations, pitch and energy: cheap) and `decode`
(decoder and vocoder, about 90% of the work) over any window of the piece's frames, so first
audio can leave after a first window (windows.py). `infer` is both over the whole piece."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

SAMPLE_RATE = 24000
SAMPLES_PER_DURATION_UNIT = 600  # Kokoro predicts durations in 25 ms frames at 24 kHz
MS_PER_DURATION_UNIT = SAMPLES_PER_DURATION_UNIT * 1000 // SAMPLE_RATE
SAMPLES_PER_MS = SAMPLE_RATE // 1000


@dataclass(frozen=True)
class Inference:
    """Audio for token ids [pad, *ids, pad] and the model's duration per token (pads included);
    for a windowed job, the audio of frames [window.start, window.end) only."""

    audio: np.ndarray  # float32 mono at SAMPLE_RATE
    durations: np.ndarray  # int, len(ids) + 2; the whole audio's length == 600 * sum
    window: object = None  # windows.Window of a windowed job

@dataclass(frozen=True, eq=False)
class Front:
    """The front part's result for one piece: its durations, and what the decoder reads per frame."""

    durations: np.ndarray  # int, len(ids) + 2, pads included
    features: object  # the backend's own
    energy: np.ndarray | None = None  # the predicted energy per frame (where windows join: windows.py)

    @property
    def frames(self) -> int:
        return int(self.durations.sum())


class Interrupted(Exception):
    """A model run stopped part-way because its RunControl was interrupted."""


class RunControl:
    """The scheduler's handle on one model run: `interrupt()`, from any thread, stops it soon.

    Each backend honours it its own way and raises Interrupted when the stop took effect: the
    ONNX backend registers onnxruntime's terminate flag with `on_interrupt`; the PyTorch backend
    reads `interrupted` before each conv/LSTM layer (a forward pre-hook). Asking again after the
    run ended does nothing.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._stops: list[Callable[[], None]] = []
        self.interrupted = False

    def interrupt(self) -> None:
        with self._lock:
            self.interrupted = True
            stops = list(self._stops)
        for stop in stops:
            stop()

    def on_interrupt(self, stop: Callable[[], None]) -> None:
        """Call `stop` on interrupt; raises Interrupted at once if that was already asked."""
        with self._lock:
            if self.interrupted:
                raise Interrupted
            self._stops.append(stop)


class AcousticBackend(Protocol):
    name: str
    device: str  # where inference runs: "cpu" or "cuda"
    precision: str  # the weights' and activations' number format: "int8" (ONNX export) or "fp32"
    max_tokens: int  # phoneme tokens per inference, pads excluded
    first_window_lead: int  # frames of the model's silence a first window decodes before the speech (windows.py)
    vocab: Mapping[str, int]
    voices: Mapping[str, np.ndarray]  # Kokoro voice id ("af_heart") -> style pack (max_tokens, 256)

    def infer(self, token_ids: Sequence[int], style: np.ndarray, speed: float,
              control: RunControl | None = None) -> Inference:
        """Raises Interrupted when `control` is interrupted before the run ends."""
        ...

    def front(self, token_ids: Sequence[int], style: np.ndarray, speed: float,
              control: RunControl | None = None) -> Front:
        ...

    def decode(self, front: Front, start: int, end: int, control: RunControl | None = None,
               norms: object = None) -> np.ndarray:
        """Audio of frames [start, end) decoded on their own (600 samples a frame); the harmonic
        source's phase continues from frame `start` as in the whole decode. With `norms` (what
        `statistics` returned), the decoder's instance norms take those, not the frames' own."""
        ...

    def statistics(self, front: Front, control: RunControl | None = None) -> tuple[np.ndarray, object]:
        """The piece's whole decode and its decoder's instance-norm statistics, the backend's own
        record of them (a voice's reference: span_norm.py)."""
        ...
