"""First audio before the first piece is synthesized: a piece's decoder run in windows of frames.

The front part runs over the whole piece; the decoder and vocoder (~90% of the work) then run
over a first window of frames, so first audio leaves after a fraction of the piece's work, and
over the rest after it. Each window is decoded with CONTEXT_FRAMES of its neighbours' frames
on either side (what its convolutions read across the join) and the two decodes are joined
in that overlap:
- where they agree best within SEARCH_SAMPLES of the join (the decoder's output phase is
  not stable under small changes, so two decodes of the same frames differ sample by sample);
- with the later window's level matched to the earlier one's there and brought back to its
  own over RAMP_SAMPLES: the decoder's instance norms take their statistics over the frames
  they are given, so a short window comes out a few dB quieter than the whole decode (2-6 dB
  on the speech corpus). `Loudness` learns that from the first joins it sees and makes a
  first window up by it, so what is left for the ramp is the piece-to-piece spread;
- by an equal-gain crossfade of CROSSFADE_SAMPLES.
Every sample keeps its position in the piece: nothing is dropped or repeated, so the
durations, trims and timestamps of the whole piece hold (tests/server/engine/test_windows.py).
Measurements behind these figures: docs/engines.md ("First audio from a first window").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import speech_span
from .backend import SAMPLES_PER_DURATION_UNIT as UNIT

CONTEXT_FRAMES = 8  # decoded past each side of a join
# A first window's statistics need this much of the silence before the first token (the PyTorch
# engine decodes half of it and counts that as all of it: its first_window_lead, span_norm.py).
LEAD_FRAMES = 8
MIN_WINDOW_FRAMES = 8  # audible frames of a first window at least; a piece shorter than two is decoded whole
FIRST_WINDOW_SHARE = 0.25  # a first window holds at most this share of the piece's frames past its lead
CROSSFADE_SAMPLES = 240  # 10 ms
SEARCH_SAMPLES = 150  # the join moves at most this far to where the two decodes agree best
LEVEL_FRAMES = 4  # either side of the join: where the two decodes' levels are compared
RAMP_SAMPLES = 14400  # 600 ms: the later window returns from the earlier one's level to its own
SILENT_RMS = 10 ** (-50 / 20)  # below this the level of a join is not compared
LEARNING_RATE = 0.3  # weight of the latest first join in the first window's make-up gain
MAX_MAKEUP_DB = 6.0
LATE_FRAMES = 1  # a rest planned at most this late (25 ms) in one window stays one: not worth a join
# A voice's reference statistics stand in for a piece's own only where the piece has at least this
# share of the reference decode's frames: Kokoro's fixed ~0.5 s of padding weighs more in a shorter
# piece's own statistics, and given the reference's its speech comes out quieter, down to silence
# (embedded engine, jf_alpha, reference 173 frames, against the whole decode: 157 frames 0 dB, 110
# -2 dB, 96 -5 dB, 70 -12 dB, 49 silent; docs/performance.md).
REFERENCE_SHARE = 0.65


@dataclass(frozen=True)
class Window:
    """Frames [start, end) decoded together; the window's audio takes over at frame `join`."""

    start: int
    end: int
    join: int


@dataclass(frozen=True)
class Reference:
    """A voice's reference statistics (the backend's: what its decode takes in place of a window's
    own) and the frames of the whole decode they were recorded from."""

    statistics: object
    frames: int

    def fits(self, frames: int, windows: int) -> bool:
        """Whether a piece of `frames` decoded in `windows` windows is given these: one window is a
        whole decode (its own statistics are exact), and a short piece's differ (REFERENCE_SHARE)."""
        return windows > 1 and frames >= REFERENCE_SHARE * self.frames


def plan(durations: np.ndarray, rtf: float, energy: np.ndarray | None = None,
         lead_frames: int = LEAD_FRAMES) -> list[Window]:
    """The windows of one piece for an engine of real-time factor `rtf` (engine seconds per audio
    second): a first window just big enough that the next one is decoded while it plays, then
    windows that grow by 1 / rtf each (an engine slower than real time gets the rest in one; a
    rest too short to grow into but too long to decode while the audio ahead plays is split in
    two: _in_time); one window (the whole piece) when that would not pay. With the predicted
    energy per frame, a later window's frames after its join are counted to the end of the speech
    (speech_span.span_end), not of the piece: given mostly the model's silence, the decoder's
    instance norms scale its near-zero features up into noise (the last 10 frames of a piece
    decoded alone peak at +10 dBFS), so no join goes into that silence. A join stays where the
    sizes put it: moved to the quietest frame near it, it fell mostly in a consonant's closure,
    just before the burst ("tenki" heard as "tanki"), and read no better to the listener over the
    speech corpus (docs/performance.md, "Where a first piece's joins fall").
    `lead_frames`: how far before the first token the first window starts (the backend's
    first_window_lead; scripts/bench_windows.py --lead-frames tries others)."""
    frames, lead = int(durations.sum()), int(durations[0])
    spoken = frames if energy is None else speech_span.span_end(energy, frames)
    speech = frames - lead
    needed = rtf * (speech + CONTEXT_FRAMES) / (1 + rtf)  # audio of the first window covers the rest's run
    first = int(np.clip(np.ceil(needed), MIN_WINDOW_FRAMES, max(MIN_WINDOW_FRAMES, FIRST_WINDOW_SHARE * speech)))
    if speech < 2 * first + CONTEXT_FRAMES:
        return [Window(0, frames, 0)]
    joins, ahead = [lead + first], first
    while True:  # each window as long as the one before it plays for; the rest whole once that stops growing
        size = int(ahead / max(rtf, 1e-3)) - 2 * CONTEXT_FRAMES
        following = joins[-1] + size
        if size <= ahead or spoken - following < _last_speech(size):
            break
        joins.append(following)
        ahead = size
    if size > ahead:
        joins += _in_time(frames, spoken, joins[-1], ahead, size, rtf)
    starts = [max(0, lead - lead_frames)] + [join - CONTEXT_FRAMES for join in joins]
    ends = [join + CONTEXT_FRAMES for join in joins] + [frames]
    return [Window(start, end, join) for start, end, join in zip(starts, ends, [starts[0], *joins], strict=True)]


def _last_speech(size: int) -> int:
    """Frames of speech a window after a join of `size` frames needs past its own join."""
    return max(MIN_WINDOW_FRAMES, size // 2) + CONTEXT_FRAMES


def _in_time(frames: int, spoken: int, join: int, ahead: int, size: int, rtf: float) -> list[int]:
    """One more join where the rest after `join`, decoded as one window while the `ahead` frames
    before it play, would come more than LATE_FRAMES late (a rest too short for a window of
    `size` frames and one after it): the next window then holds `a` frames, decoded while those
    play, and the last the rest, decoded while they and the next window's play:
    rtf (a + 2 C) <= ahead and rtf (rest + 3 C) <= ahead + a, C the CONTEXT_FRAMES. `a` lies
    midway between the least that keeps the last window in time and the most that leaves it its
    speech, so both have some margin, and is no shorter than the later window's level ramp
    (RAMP_SAMPLES), which would otherwise run on into the next join; no join where no `a` does
    all that."""
    rest = frames - join
    if rtf * (rest + CONTEXT_FRAMES) <= ahead + LATE_FRAMES:
        return []
    least = max(RAMP_SAMPLES // UNIT, int(np.ceil(rtf * (rest + 3 * CONTEXT_FRAMES) - ahead)))
    most = size
    while most >= least and spoken - (join + most) < _last_speech(most):
        most -= 1
    return [join + (least + most + 1) // 2] if most >= least else []


class Loudness:
    """How much quieter than the rest of its piece a first window comes out (dB), learned from
    the first joins: each observes the level of the first window (made up already) against the
    next window's over the same frames. Shared by every piece an engine decodes."""

    def __init__(self):
        self.makeup_db = 0.0

    @property
    def gain(self) -> float:
        return 10 ** (self.makeup_db / 20)

    def observe(self, ratio: float) -> None:
        """ratio: the made-up first window's level over the next window's at their join."""
        residual_db = -20 * np.log10(ratio)
        self.makeup_db = float(np.clip(self.makeup_db + LEARNING_RATE * residual_db, 0.0, MAX_MAKEUP_DB))


class Splicer:
    """A piece's windows, decoded in order, as one audio: `add` returns the samples that are
    final (the last SEARCH + CROSSFADE / 2 samples before the next join wait for the next window)."""

    def __init__(self, windows: list[Window], loudness: Loudness | None = None):
        self._windows = windows
        self._loudness = loudness
        self._next = 0
        self._previous: tuple[int, np.ndarray] | None = None  # (first sample, audio) of the last window
        self._done = 0  # samples returned so far
        self.joins: list[int] = []  # where each join fell (sample index into the piece)
        self._makeup = 1.0  # the learned gain the first window came out with
        self._eased: tuple[int, np.ndarray] | None = None  # from the first join: (its first sample, made_up's factors)

    @property
    def finished(self) -> bool:
        return self._next == len(self._windows)

    def add(self, audio: np.ndarray) -> np.ndarray:
        window = self._windows[self._next]
        assert len(audio) == (window.end - window.start) * UNIT, "a window's audio has the wrong length"
        self._next += 1
        at = window.start * UNIT
        if self._previous is None:  # the first window: its lead before `start` is the model's silence
            makeup = self._loudness.gain if self._loudness is not None and len(self._windows) > 1 else 1.0
            self._makeup = makeup
            audio, at = np.concatenate([np.zeros(at, np.float32), _fade_in(audio) * np.float32(makeup)]), 0
        else:
            audio, at = self._join(window.join * UNIT, at, audio), self._done
        self._previous = (at, audio)
        until = at + len(audio)
        if not self.finished:
            until = self._windows[self._next].join * UNIT - SEARCH_SAMPLES - CROSSFADE_SAMPLES // 2
        out = audio[self._done - at : until - at]
        self._done = until
        return out

    def made_up(self, start: int, stop: int) -> np.ndarray:
        """How many times louder samples [start, stop) of the piece came out for the first window's
        make-up: `makeup` up to the first join, then easing to 1 with the later window's ramp (the
        ramp from its gain to 1 over the ramp from what that gain would be without the make-up; a
        second join inside that ramp inherits a little of it, not counted)."""
        factor = np.full(stop - start, self._makeup, np.float32)
        if self._makeup == 1.0 or self._eased is None:
            return factor
        begin, eased = self._eased
        index = np.arange(start, stop) - begin
        later = index >= 0
        factor[later] = eased[np.minimum(index[later], RAMP_SAMPLES)]
        return factor

    def _join(self, nominal: int, at: int, audio: np.ndarray) -> np.ndarray:
        """The later window (audio, from sample `at`) taking over from the earlier one near `nominal`:
        from self._done to the later window's end."""
        earlier_at, earlier = self._previous
        gain = _level_ratio(earlier, earlier_at, audio, at, nominal)
        if self._loudness is not None and not self.joins and gain != 1.0:
            self._loudness.observe(gain)
        join = _best_join(earlier, earlier_at, audio * gain, at, nominal)
        self.joins.append(join)
        begin = join - CROSSFADE_SAMPLES // 2  # the crossfade's first sample
        if len(self.joins) == 1 and self._makeup != 1.0:  # made_up's factors, once per piece
            alone = gain / self._makeup if gain != 1.0 else 1.0  # 1.0: a silent join, the later window as decoded
            rise = _rise(RAMP_SAMPLES)
            eased = (gain + (1 - gain) * rise) / (alone + (1 - alone) * rise)
            self._eased = begin, np.concatenate([eased, [1.0]]).astype(np.float32)
        ramp = np.ones(len(audio), np.float32)
        ramp[: begin - at] = gain
        rise = ramp[begin - at : begin - at + RAMP_SAMPLES]
        rise[:] = gain + (1 - gain) * _rise(len(rise))
        later = audio * ramp
        fade = np.linspace(0.0, 1.0, CROSSFADE_SAMPLES, dtype=np.float32)
        mixed = (earlier[begin - earlier_at : begin + CROSSFADE_SAMPLES - earlier_at] * (1 - fade)
                 + later[begin - at : begin + CROSSFADE_SAMPLES - at] * fade)
        before = earlier[self._done - earlier_at : begin - earlier_at]
        return np.concatenate([before, mixed, later[begin + CROSSFADE_SAMPLES - at :]])


def _rise(count: int) -> np.ndarray:
    """The first `count` samples of the later window's return from the earlier one's level: 0 to 1
    over RAMP_SAMPLES, raised cosine."""
    return 0.5 - 0.5 * np.cos(np.pi * np.arange(count) / RAMP_SAMPLES)


def _fade_in(audio: np.ndarray) -> np.ndarray:
    """A first window's left edge (zero padding, reflected STFT) falls in the model's lead silence:
    ramp it in over a frame so that no edge transient counts as sound."""
    audio = audio.copy()
    audio[:UNIT] *= np.linspace(0.0, 1.0, UNIT, dtype=np.float32)
    return audio


def _level_ratio(held: np.ndarray, held_at: int, audio: np.ndarray, audio_at: int, join: int) -> float:
    span = slice(join - LEVEL_FRAMES * UNIT, join + LEVEL_FRAMES * UNIT)
    earlier = _rms(held[span.start - held_at : span.stop - held_at])
    later = _rms(audio[span.start - audio_at : span.stop - audio_at])
    if earlier < SILENT_RMS or later < SILENT_RMS:
        return 1.0
    return float(np.clip(earlier / later, 0.25, 4.0))


def _best_join(held: np.ndarray, held_at: int, audio: np.ndarray, audio_at: int, join: int) -> int:
    """The sample near `join` where a crossfade mixes the two decodes where they differ least."""
    half = CROSSFADE_SAMPLES // 2
    first = join - SEARCH_SAMPLES - half
    a = held[first - held_at : join + SEARCH_SAMPLES + half - held_at]
    b = audio[first - audio_at : join + SEARCH_SAMPLES + half - audio_at]
    energy = np.concatenate([[0.0], np.cumsum((a.astype(np.float64) - b) ** 2)])
    errors = energy[CROSSFADE_SAMPLES:] - energy[:-CROSSFADE_SAMPLES]  # per crossfade start
    return first + half + int(np.argmin(errors))


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if len(x) else 0.0
