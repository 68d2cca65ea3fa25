"""A decode of a piece's speech with less of its silence, its instance-norm statistics weighted to
the piece's share of silence (PyTorch engine).

Kokoro's decoder normalises each channel over the frames it is given (AdaIN). The speech span of
a response's later pieces (speech_span.py) holds less of the model's silence than its piece (8
frames a side, against the piece's 25-35%), and statistics taken over mostly speech bring it out
about a dB quieter than the whole decode, its spectrum further from it than the decoder's own
noise. Here its silent and spoken frames each count for their piece's share in those statistics:
the same frames decoded, at the whole decode's level. A first piece's windows, which hold part of
the speech, keep their statistics: weighted to the piece's share, their first word came out at
the whole decode's level but their joins stepped harder (measurements: docs/performance.md, "A
decode's statistics weighted to its piece's silence"). Except a first window decoded with less
of the lead silence than windows.LEAD_FRAMES (the PyTorch engine's): its silence counts as that
whole lead's would, the statistics the windows were measured on, for fewer frames decoded.

A decode can also record its statistics (`Statistics`: a voice's reference, recorded from one
whole decode at warm-up) or be given them instead of its own: a first piece's windows each given
their voice's read within 0.01 of the whole decode's CER in each voice of the speech corpus, where
their own (made up for level) lost up to 0.024 (docs/performance.md, "What the windows cost the
listener, found: their statistics").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from . import speech_span


@dataclass
class FrameWeights:
    """Which of a decode's frames are the model's silence, and the silence's share of its piece."""

    silent: np.ndarray  # bool per frame decoded
    share: float  # the piece's frames that are silent, over its frames
    _resolutions: dict[int, Resolution | None] = field(default_factory=dict)

    @classmethod
    def for_frames(cls, energy: np.ndarray | None, frames: int, start: int, end: int,
                   lead_from: int | None = None) -> FrameWeights | None:
        """A speech span's weights (its silence at the piece's share), and those of a first window
        (a decode from the model's lead silence into the speech, `lead_from` given) that starts
        after `lead_from`: its silence at its share of the frames from `lead_from` to its end, what
        a first window with the lead from there holds. None where the stock statistics already
        are the piece's (the whole piece), where there is nothing to weight (no energy, or a decode
        or piece all silence or all speech), and for any other decode of part of the speech (a
        later window, a first window from `lead_from`: joins and make-up were measured on them)."""
        if energy is None or (start, end) == (0, frames):
            return None
        silent = ~speech_span.speech(energy, frames)
        share, decoded = float(silent.mean()), silent[start:end]
        if not (0 < share < 1) or decoded.all() or not decoded.any():
            return None
        spoken = np.flatnonzero(~silent)
        if spoken[-1] >= end:  # part of the speech: a first piece's window
            if lead_from is None or lead_from >= start:
                return None
            return cls(decoded, float(silent[lead_from:end].mean()))
        if spoken[0] < start:  # a last window
            return None
        return cls(decoded, share)

    def at(self, steps: int) -> Resolution | None:
        """The weights at a tensor of `steps` time steps over the frames decoded (each frame spans
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


@dataclass(frozen=True, eq=False)
class Statistics:
    """One whole decode's instance-norm statistics: (mean, variance) per channel, (1, C, 1) each,
    per norm of the decoder in the order install() numbered them."""

    moments: tuple[tuple[torch.Tensor, torch.Tensor], ...]


class SpanNorm(nn.InstanceNorm1d):
    """nn.InstanceNorm1d (kokoro's, affine), whose statistics follow `holder.weights` while a speech
    span is decoded (the silent steps' moments and the spoken ones' mixed at the piece's share),
    are `holder.given`'s while a decode is given them, and go to `holder.recording` while recorded."""

    def __init__(self, norm: nn.InstanceNorm1d, holder: WeightsHolder, index: int):
        super().__init__(norm.num_features, eps=norm.eps, momentum=norm.momentum, affine=norm.affine,
                         track_running_stats=norm.track_running_stats)
        self.load_state_dict(norm.state_dict())
        self.holder = holder
        self.index = index

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        holder = self.holder
        if holder.given is not None:
            return self._normalised(x, *holder.given.moments[self.index])
        if holder.recording is not None:
            variance, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
            holder.recording[self.index] = (mean, variance)
            return self._normalised(x, mean, variance)
        weights = holder.weights
        steps = None if weights is None else weights.at(x.shape[-1])
        if steps is None:
            return super().forward(x)
        # Sums over every step and over the few runs of silent ones, the variance as E[x^2] - mean^2
        # (tests/server/engine/test_span_norm.py holds it to the two-pass one): torch's var_mean, a
        # gather of the silent steps or a weighted matrix-vector product each cost more than the
        # stock norm.
        square = x * x
        extra = steps.silent - steps.spoken  # what a silent step weighs more than a spoken one
        mean = steps.spoken * x.sum(-1, keepdim=True)
        moment = steps.spoken * square.sum(-1, keepdim=True)
        for start, stop in steps.runs:
            mean = mean + extra * x[..., start:stop].sum(-1, keepdim=True)
            moment = moment + extra * square[..., start:stop].sum(-1, keepdim=True)
        return self._normalised(x, mean, (moment - mean * mean).clamp_min(0))

    def _normalised(self, x: torch.Tensor, mean: torch.Tensor, variance: torch.Tensor) -> torch.Tensor:
        scale = torch.rsqrt(variance + self.eps)
        if self.affine:
            scale = scale * self.weight[:, None]
        shift = -mean * scale + (self.bias[:, None] if self.affine else 0)
        return torch.addcmul(shift, x, scale)


class WeightsHolder:
    """What the decode in progress asks of every SpanNorm of one model: its frames' weights, the
    statistics it is given, or a list (one slot per norm) to record its own in."""

    def __init__(self):
        self.norms = 0  # SpanNorms installed
        self.weights: FrameWeights | None = None
        self.given: Statistics | None = None
        self.recording: list | None = None


def install(decoder: nn.Module) -> WeightsHolder:
    """Replace every InstanceNorm1d of `decoder` by a SpanNorm with its parameters; returns the
    holder through which a decode gives them its weights or statistics (None: the stock ones)."""
    holder = WeightsHolder()
    for module in list(decoder.modules()):
        for name, child in list(module.named_children()):
            if type(child) is nn.InstanceNorm1d:
                setattr(module, name, SpanNorm(child, holder, holder.norms))
                holder.norms += 1
    return holder
