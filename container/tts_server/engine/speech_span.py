"""Decode a piece's speech, not the silence the model pads it with (SPEC §7: long text).

Kokoro pads every piece with silence (~290 ms before its first token, ~770 ms after its
speech, most of that inside the last phoneme's duration), which pauses.py cuts off anyway.
Decoding it cost about a tenth of each piece's model time, a fixed cost a piece that long text
paid once per sentence. The front part predicts each frame's energy, so the decoder runs from
MARGIN_FRAMES before the first token to MARGIN_FRAMES after the last frame of speech energy
(its onset's context, its decay), and the frames outside are zeros: every sample keeps its
place in the piece, so its durations, trims and timestamps hold.

Only a response's later pieces (tokens.later): its first piece's cost is first audio's, and its
windows (windows.py) and their make-up were measured against the whole decode. The decoder's
instance norms take their statistics over the frames they are given, so speech decoded without
the silence comes out about a dB quieter than the whole decode (0.6-1.6 over the speech
corpus) on the embedded engine; the PyTorch engine weights the span's silence to its piece's
share (span_norm.py). Measurements: docs/performance.md ("The model's silence is not
decoded", "A decode's statistics weighted to its piece's silence").
"""

from __future__ import annotations

import numpy as np

from .backend import SAMPLES_PER_DURATION_UNIT as UNIT
from .backend import AcousticBackend, Front, RunControl

SPEECH_ENERGY = -5.0  # predicted energy above which a frame is speech: the model's silence sits near -9, speech at 2-6
MARGIN_FRAMES = 8  # decoded before the first token and after the last frame of speech


def speech(energy: np.ndarray, frames: int) -> np.ndarray:
    """Per frame of the piece: whether its predicted energy is speech's (the rest is the model's silence)."""
    return energy[:frames] > SPEECH_ENERGY


def span(front: Front) -> tuple[int, int]:
    """The frames [start, end) of the piece worth decoding; the whole piece when no frame is
    predicted to be speech (nothing to tell its silence by)."""
    frames = front.frames
    if front.energy is None or not speech(front.energy, frames).any():
        return 0, frames
    return max(0, int(front.durations[0]) - MARGIN_FRAMES), span_end(front.energy, frames)


def span_end(energy: np.ndarray, frames: int) -> int:
    """MARGIN_FRAMES past the last frame predicted to be speech; `frames` when none is."""
    loud = np.flatnonzero(speech(energy, frames))
    return frames if loud.size == 0 else min(frames, int(loud[-1]) + 1 + MARGIN_FRAMES)


def decode(backend: AcousticBackend, front: Front, control: RunControl | None = None) -> np.ndarray:
    """The piece's audio, the decoder run over its speech span only (zeros elsewhere)."""
    low, high = span(front)
    if (low, high) == (0, front.frames):
        return backend.decode(front, 0, front.frames, control)
    audio = np.zeros(front.frames * UNIT, np.float32)
    decoded = backend.decode(front, low, high, control)
    if low > 0:  # the cut edges fall in the model's silence: ramp them over a frame so that no
        decoded[:UNIT] *= np.linspace(0.0, 1.0, UNIT, dtype=np.float32)  # edge transient counts as sound
    if high < front.frames:
        decoded[-UNIT:] *= np.linspace(1.0, 0.0, UNIT, dtype=np.float32)
    audio[low * UNIT : high * UNIT] = decoded
    return audio
