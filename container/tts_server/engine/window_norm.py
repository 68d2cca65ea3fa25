"""A window's instance-norm statistics weighted to its piece's share of silence (PyTorch engine).

Kokoro's decoder normalises each channel over the frames it is given (AdaIN). A first window
holds less of the model's silence than its piece (its lead only: 10-15% of its frames against
25-35% for the piece, whose pause after the last word is long), and statistics taken over mostly
speech bring its speech out 3-10 dB quieter than the whole decode, most at the first word's onset,
the part the listener then mishears. Here the window's silent and spoken frames each count for
their piece's share in those statistics: the same frames decoded, within about 2 dB of the whole
decode. Measurements: docs/performance.md ("A window's statistics weighted to its piece's silence").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from . import speech_span


@dataclass
class FrameWeights:
    """Which of a window's frames are the model's silence, and the silence's share of its piece."""

    silent: np.ndarray  # bool per frame of the window
    share: float  # the piece's frames that are silent, over its frames
    _resolutions: dict[int, Resolution | None] = field(default_factory=dict)

    @classmethod
    def for_window(cls, energy: np.ndarray | None, frames: int, start: int, end: int) -> FrameWeights | None:
        """None where the stock statistics already are the piece's (the whole piece) or where there is
        nothing to weight (no energy, or a window or piece all silence or all speech)."""
        if energy is None or (start, end) == (0, frames):
            return None
        silent = energy[:frames] <= speech_span.SPEECH_ENERGY
        share, window = float(silent.mean()), silent[start:end]
        if not (0 < share < 1) or window.all() or not window.any():
            return None
        return cls(window, share)

    def at(self, steps: int) -> Resolution | None:
        """The weights at a tensor of `steps` time steps over the window (each frame spans
        steps / frames of them: 1, 2, 20 or 120 here); None where it has no step of one kind."""
        if steps not in self._resolutions:
            silent = self.silent[np.arange(steps) * len(self.silent) // steps]
            quiet = int(silent.sum())
            edges = np.flatnonzero(np.diff(np.concatenate([[0], silent.astype(np.int8), [0]])))
            self._resolutions[steps] = None if quiet in (0, steps) else Resolution(
                spoken=(1 - self.share) / (steps - quiet), silent=self.share / quiet,
                runs=list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True)))
        return self._resolutions[steps]


@dataclass(frozen=True)
class Resolution:
    """A step's weight in the statistics (all of them summing to 1) and the runs [start, stop) of silent steps."""

    spoken: float
    silent: float
    runs: list[tuple[int, int]]


class WindowNorm(nn.InstanceNorm1d):
    """nn.InstanceNorm1d (kokoro's, affine), whose statistics follow `holder.weights` while a window
    is decoded: the silent steps' moments and the spoken ones' mixed at the piece's share."""

    def __init__(self, norm: nn.InstanceNorm1d, holder: WeightsHolder):
        super().__init__(norm.num_features, eps=norm.eps, momentum=norm.momentum, affine=norm.affine,
                         track_running_stats=norm.track_running_stats)
        self.load_state_dict(norm.state_dict())
        self.holder = holder

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        window = self.holder.weights
        steps = None if window is None else window.at(x.shape[-1])
        if steps is None:
            return super().forward(x)
        # Sums over every step and over the few runs of silent ones: torch's var_mean, a gather of
        # the silent steps or a weighted matrix-vector product each cost more than the stock norm.
        square = x * x
        extra = steps.silent - steps.spoken  # a silent step's weight over a spoken one's
        mean = steps.spoken * x.sum(-1, keepdim=True)
        moment = steps.spoken * square.sum(-1, keepdim=True)
        for start, stop in steps.runs:
            mean = mean + extra * x[..., start:stop].sum(-1, keepdim=True)
            moment = moment + extra * square[..., start:stop].sum(-1, keepdim=True)
        scale = torch.rsqrt((moment - mean * mean).clamp_min(0) + self.eps)
        if self.affine:
            scale = scale * self.weight[:, None]
        shift = -mean * scale + (self.bias[:, None] if self.affine else 0)
        return torch.addcmul(shift, x, scale)


class WeightsHolder:
    """The weights of the window being decoded, read by every WindowNorm of one model."""

    def __init__(self):
        self.weights: FrameWeights | None = None


def install(decoder: nn.Module) -> WeightsHolder:
    """Replace every InstanceNorm1d of `decoder` by a WindowNorm with its parameters; returns the
    holder through which a decode gives them a window's weights (None: the stock statistics)."""
    holder = WeightsHolder()
    for module in list(decoder.modules()):
        for name, child in list(module.named_children()):
            if type(child) is nn.InstanceNorm1d:
                setattr(module, name, WindowNorm(child, holder))
    return holder
