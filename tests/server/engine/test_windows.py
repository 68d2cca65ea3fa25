"""A piece decoded in windows: the plan covers every frame once, and the joins neither click
nor drop or repeat a sample. The join checks run on the real embedded model, and on test
doubles of the splicer that drop, repeat or hard-cut at a join, to show they catch each."""

from __future__ import annotations

import numpy as np
import pytest

from tts_server.engine import windows
from tts_server.engine.backend import SAMPLES_PER_DURATION_UNIT as UNIT
from tts_server.engine.factory import embedded_synthesizer
from tts_server.engine.windows import CONTEXT_FRAMES, CROSSFADE_SAMPLES, RAMP_SAMPLES, Splicer, Window, plan


def durations(lead=12, speech=60, tail=24):
    return np.array([lead, *([3] * (speech // 3)), tail])


@pytest.mark.parametrize("rtf", [0.05, 0.29, 1.0, 3.0])
@pytest.mark.parametrize("speech", [30, 60, 150, 900])
def test_the_windows_cover_every_frame_and_each_reads_its_context(rtf, speech):
    d = durations(speech=speech)
    frames, found = int(d.sum()), plan(d, rtf)
    assert found[0].start <= d[0] and found[-1].end == frames
    for earlier, later in zip(found, found[1:]):
        assert later.start == later.join - CONTEXT_FRAMES and earlier.end == later.join + CONTEXT_FRAMES
        assert earlier.join < later.join
    if len(found) > 1:
        first_audio = found[1].join - d[0]
        assert windows.MIN_WINDOW_FRAMES <= first_audio <= max(windows.MIN_WINDOW_FRAMES,
                                                               windows.FIRST_WINDOW_SHARE * (frames - d[0]))


def test_a_faster_engine_gets_a_smaller_first_window_and_a_short_piece_none():
    d = durations(speech=150)
    first = {rtf: plan(d, rtf)[1].join for rtf in (0.05, 0.29)}
    assert first[0.05] < first[0.29], "a faster engine needs less audio ahead while the rest is decoded"
    short = durations(speech=6, tail=6)
    assert plan(short, 0.29) == [Window(0, int(short.sum()), 0)], "too short for two windows: decoded whole"


# --- the join checks, on a synthetic decoder whose windows differ like the model's -------------------

def synthetic_decode(frames: int):
    """Speech-like audio for the whole piece, and a decoder of windows that come out at a level and
    phase of their own (as the model's instance norms and vocoder phase make them)."""
    t = np.arange(frames * UNIT) / 24000
    envelope = 0.3 * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t))
    whole = (envelope * np.sin(2 * np.pi * 180 * t)).astype(np.float32)

    def decode(window: Window, index: int) -> np.ndarray:
        at = np.arange(window.start * UNIT, window.end * UNIT) / 24000
        level = 0.7 if index == 0 else 1.0
        return (level * envelope[window.start * UNIT : window.end * UNIT]
                * np.sin(2 * np.pi * 180 * at + 0.3 * index)).astype(np.float32)

    return whole, decode


def spliced(splicer: Splicer, found: list[Window], decode) -> tuple[np.ndarray, list[np.ndarray]]:
    parts = [decode(window, index) for index, window in enumerate(found)]
    return np.concatenate([splicer.add(audio) for audio in parts]), parts


def join_faults(audio: np.ndarray, found: list[Window], parts: list[np.ndarray], joins: list[int]) -> list[str]:
    """What is wrong at the joins of `audio`, spliced from `parts` (the windows' own decodes):
    - a click: a step between neighbouring samples within a crossfade of the join larger than the
      decodes themselves make there;
    - a dropped or repeated sample: past the join (once its level ramp is over) the audio is not
      the later window's own decode, sample for sample, at the same position in the piece."""
    faults = []
    if len(audio) != found[-1].end * UNIT:
        faults.append(f"{len(audio)} samples for {found[-1].end} frames")
    for k, join in enumerate(joins, start=1):
        near = slice(join - CROSSFADE_SAMPLES, join + CROSSFADE_SAMPLES)
        own = max(np.abs(np.diff(part[near.start - w.start * UNIT : near.stop - w.start * UNIT])).max()
                  for part, w in ((parts[k - 1], found[k - 1]), (parts[k], found[k])))
        step = np.abs(np.diff(audio[near])).max()
        if step > 1.5 * own + 1e-3:
            faults.append(f"join {k}: a step of {step:.3f} where the decodes step {own:.3f} at most")
        until = joins[k] - CROSSFADE_SAMPLES if k < len(joins) else len(audio)  # the next join takes over
        after = slice(join + CROSSFADE_SAMPLES + RAMP_SAMPLES, until)
        assert after.stop > after.start, "a window too short to check"
        mine = parts[k][after.start - found[k].start * UNIT : after.stop - found[k].start * UNIT]
        if not np.array_equal(audio[after], mine):
            faults.append(f"join {k}: past it the audio is not the window's own decode in place")
    return faults


class DroppingSplicer(Splicer):
    """Loses the sample at each join (every later sample moves one earlier)."""

    def _join(self, nominal, at, audio):
        joined = super()._join(nominal, at, audio)
        cut = self.joins[-1] - self._done
        return np.concatenate([joined[:cut], joined[cut + 1 :], joined[-1:]])


class RepeatingSplicer(Splicer):
    """Plays the sample at each join twice (every later sample moves one later)."""

    def _join(self, nominal, at, audio):
        joined = super()._join(nominal, at, audio)
        cut = self.joins[-1] - self._done
        return np.concatenate([joined[: cut + 1], joined[cut:-1]])


class HardCutSplicer(Splicer):
    """Switches to the later window at the nominal join: no level match, no crossfade."""

    def _join(self, nominal, at, audio):
        earlier_at, earlier = self._previous
        self.joins.append(nominal)
        return np.concatenate([earlier[self._done - earlier_at : nominal - earlier_at], audio[nominal - at :]])


def test_joins_of_the_splicer_are_clean_on_a_decoder_whose_windows_differ_in_level_and_phase():
    found = plan(durations(speech=240), 0.8)  # a slow engine: three windows
    assert len(found) >= 3
    whole, decode = synthetic_decode(found[-1].end)
    splicer = Splicer(found)
    audio, parts = spliced(splicer, found, decode)
    assert join_faults(audio, found, parts, splicer.joins) == []


@pytest.mark.parametrize("broken, fault", [(DroppingSplicer, "not the window's own decode"),
                                           (RepeatingSplicer, "not the window's own decode"),
                                           (HardCutSplicer, "a step of")])
def test_the_join_checks_catch_a_splicer_that_drops_repeats_or_clicks(broken, fault):
    found = plan(durations(speech=240), 0.8)  # a slow engine: three windows
    _, decode = synthetic_decode(found[-1].end)
    splicer = broken(found)
    audio, parts = spliced(splicer, found, decode)
    assert any(fault in f for f in join_faults(audio, found, parts, splicer.joins))


# --- the real embedded model ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def synthesizer():
    return embedded_synthesizer(threads=2, languages=["ja"])


def test_the_real_models_windows_join_cleanly_and_the_piece_keeps_its_length(synthesizer):
    text = "今日はいい天気ですね。"
    style = synthesizer.voice_book("ja").resolve("default")
    job = synthesizer.prepare(text, 0, len(text), style, 1.0, "ja").jobs[0]
    backend = synthesizer.backend
    front = backend.front(job.ids, job.style, job.speed)
    found = plan(front.durations, 0.29, front.energy)
    assert len(found) >= 2
    splicer = Splicer(found)
    audio, parts = spliced(splicer, found, lambda window, _: backend.decode(front, window.start, window.end))
    assert join_faults(audio, found, parts, splicer.joins) == []
    assert len(audio) == UNIT * int(front.durations.sum()), "the durations still account for every sample"


def test_a_first_window_is_made_up_by_the_level_deficit_its_joins_show():
    from tts_server.engine.windows import MAX_MAKEUP_DB, Loudness

    loudness = Loudness()
    for _ in range(30):  # first windows that come out 4 dB under the rest of their piece
        loudness.observe(10 ** ((-4 + loudness.makeup_db) / 20))
    assert abs(loudness.makeup_db - 4) < 0.1
    for _ in range(30):
        loudness.observe(0.01)  # a wild one cannot push it past the cap
    assert loudness.makeup_db == MAX_MAKEUP_DB
    found = plan(durations(speech=240), 0.29)
    _, decode = synthetic_decode(found[-1].end)  # its first window is 0.7 (-3.1 dB) of the rest
    learned = Loudness()
    for _ in range(20):
        splicer = Splicer(found, learned)
        spliced(splicer, found, decode)
    assert abs(learned.makeup_db + 20 * np.log10(0.7)) < 0.3, "learned from the splicer's own joins"


def test_the_torch_engines_front_part_gives_kokoros_durations_and_its_windows_join_cleanly(model_dir):
    from pathlib import Path

    from tts_server.engine.model_dir import ModelDir
    from tts_server.engine.torch_backend import TorchBackend

    backend = TorchBackend(ModelDir(Path(model_dir)), device="cpu", threads=2)
    ids = [backend.vocab[c] for c in "koɲɲiʨiβa."]
    style = backend.voices[sorted(backend.voices)[0]][len(ids) - 1]
    front = backend.front(ids, style, 1.0)
    assert np.array_equal(front.durations, backend.infer(ids, style, 1.0).durations)
    found = plan(front.durations, 0.29, front.energy)
    splicer = Splicer(found)
    audio, parts = spliced(splicer, found, lambda window, _: backend.decode(front, window.start, window.end))
    assert len(found) >= 2 and join_faults(audio, found, parts, splicer.joins) == []
