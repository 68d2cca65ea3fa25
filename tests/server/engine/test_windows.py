"""A piece decoded in windows: the plan covers every frame once, and the joins neither click
nor drop or repeat a sample. The join checks run on both real engines, and on test doubles of
the splicer that drop, repeat or hard-cut at a join (over a synthetic decoder and over the real
models' audio), to show they catch each; a window decoded a sample early or late is caught by
its alignment with the whole decode."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from cores import ENGINE_THREADS

from tts_server.engine import speech_span, windows
from tts_server.engine.backend import SAMPLES_PER_DURATION_UNIT as UNIT
from tts_server.engine.factory import build_synthesizer
from tts_server.engine.windows import (CONTEXT_FRAMES, CROSSFADE_SAMPLES, RAMP_SAMPLES, REFERENCE_SHARE, Reference,
                                       Splicer, Window, plan)


def durations(lead=12, speech=60, tail=24):
    return np.array([lead, *([3] * (speech // 3)), tail])


@pytest.mark.parametrize("rtf", [0.05, 0.29, 1.0, 3.0])
@pytest.mark.parametrize("speech", [30, 60, 150, 900])
def test_the_windows_cover_every_frame_and_each_reads_its_context(rtf, speech):
    d = durations(speech=speech)
    frames, found = int(d.sum()), plan(d, rtf)
    assert found[0].start <= d[0] and found[-1].end == frames
    for earlier, later in zip(found, found[1:], strict=False):
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


def test_the_first_window_starts_its_lead_before_the_speech_and_no_earlier_than_the_piece():
    d = durations(lead=12, speech=150)
    assert plan(d, 0.29)[0].start == 12 - windows.LEAD_FRAMES
    assert plan(d, 0.29, lead_frames=8)[0].start == 4
    assert plan(d, 0.29, lead_frames=99)[0].start == 0, "a lead longer than the silence starts at the piece"
    assert [w.join for w in plan(d, 0.29, lead_frames=99)[1:]] == [w.join for w in plan(d, 0.29)[1:]]


def planned_lateness(d: np.ndarray, rtf: float, found: list[Window]) -> float:
    """Frames by which the latest of a piece's later windows is decoded after the audio before its
    join has played, at the planned speed: each decoded right after the one before it, from the
    first audio on (what plays from then on starts at the first token)."""
    decoded, late = 0.0, 0.0
    for window in found[1:]:
        decoded += rtf * (window.end - window.start)
        late = max(late, decoded - (window.join - d[0]))
    return late


@pytest.mark.parametrize("rtf", [0.1, 0.3, 0.37, 0.43, 0.52])
@pytest.mark.parametrize("speech", [60, 100, 150, 220, 300, 450])
def test_each_later_window_is_planned_to_come_before_the_audio_ahead_of_it_plays_out(rtf, speech):
    """At 0.37-0.43 the rest after the first join, too short for a window of the size the first
    allowed and one after it, once went whole into one window planned 6-38 frames late: the
    stream ran dry there (docs/performance.md, "The AVX-512 VM again, on main")."""
    d = durations(speech=speech, tail=30)
    found = plan(d, rtf)
    assert len(found) > 1 and planned_lateness(d, rtf, found) <= windows.LATE_FRAMES, found


def test_a_rest_too_short_for_a_window_of_its_own_is_split_only_when_one_window_would_come_late():
    d = durations(speech=150, tail=30)
    split = plan(d, 0.43)
    assert len(split) == 3 and planned_lateness(d, 0.43, split) <= windows.LATE_FRAMES
    assert len(plan(d, 0.3)) == 2, "in time in one window: not split"
    assert len(plan(d, 1.0)) == 2, "an engine slower than real time: the rest in one, as before"


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
    """Switches to the later window near the nominal join, no level match, no crossfade: where the
    two decodes disagree most within half a crossfade of it (the real model's two decodes can
    agree at one sample, and a hard cut there would be no click to catch)."""

    def _join(self, nominal, at, audio):
        earlier_at, earlier = self._previous
        self.joins.append(nominal)
        near = np.arange(nominal - CROSSFADE_SAMPLES // 2, nominal + CROSSFADE_SAMPLES // 2)
        cut = int(near[np.argmax(np.abs(earlier[near - earlier_at] - audio[near - at]))])
        return np.concatenate([earlier[self._done - earlier_at : cut - earlier_at], audio[cut - at :]])


def test_joins_of_the_splicer_are_clean_on_a_decoder_whose_windows_differ_in_level_and_phase():
    found = plan(durations(speech=240), 0.5)  # a slow engine: three windows
    assert len(found) >= 3
    whole, decode = synthetic_decode(found[-1].end)
    splicer = Splicer(found)
    audio, parts = spliced(splicer, found, decode)
    assert join_faults(audio, found, parts, splicer.joins) == []


BROKEN = [(DroppingSplicer, "not the window's own decode"), (RepeatingSplicer, "not the window's own decode"),
          (HardCutSplicer, "a step of")]


@pytest.mark.parametrize("broken, fault", BROKEN)
def test_the_join_checks_catch_a_splicer_that_drops_repeats_or_clicks(broken, fault):
    found = plan(durations(speech=240), 0.5)  # a slow engine: three windows
    _, decode = synthetic_decode(found[-1].end)
    splicer = broken(found)
    audio, parts = spliced(splicer, found, decode)
    assert any(fault in f for f in join_faults(audio, found, parts, splicer.joins))


# --- the real models ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def synthesizer():
    return build_synthesizer("onnx", "cpu", threads=ENGINE_THREADS, languages=["ja"])


@pytest.fixture(scope="module", params=["onnx", "torch"])
def decoded(request, synthesizer):
    """One sentence on each engine: its front part, windows, each window's decode and the whole decode."""
    text = "今日はいい天気ですね。"
    job = synthesizer.prepare(text, 0, len(text), synthesizer.voice_book("ja").resolve("default"), 1.0, "ja").jobs[0]
    backend = synthesizer.backend
    if request.param == "torch":
        from pathlib import Path

        from tts_server.engine.model_dir import ModelDir
        from tts_server.engine.torch_backend import TorchBackend

        backend = TorchBackend(ModelDir(Path(request.getfixturevalue("model_dir"))), device="cpu", threads=ENGINE_THREADS)
    front = backend.front(job.ids, job.style, job.speed)
    found = plan(front.durations, 0.29, front.energy, backend.first_window_lead)  # as the runner plans
    assert len(found) >= 2
    parts = [backend.decode(front, window.start, window.end) for window in found]
    return SimpleNamespace(engine=request.param, backend=backend, job=job, front=front, windows=found, parts=parts,
                           whole=backend.decode(front, 0, front.frames))


def test_the_real_models_windows_join_cleanly_and_the_piece_keeps_its_length(decoded):
    splicer = Splicer(decoded.windows)
    audio, _ = spliced(splicer, decoded.windows, lambda _, index: decoded.parts[index])
    assert join_faults(audio, decoded.windows, decoded.parts, splicer.joins) == []
    assert len(audio) == UNIT * int(decoded.front.durations.sum()), "the durations still account for every sample"
    if decoded.engine == "torch":
        job = decoded.job
        expected = decoded.backend.infer(job.ids, job.style, job.speed).durations
        assert np.array_equal(decoded.front.durations, expected), "the front part gives kokoro's durations"


@pytest.mark.parametrize("broken, fault", BROKEN)
def test_the_join_checks_catch_a_broken_join_in_the_real_models_audio(decoded, broken, fault):
    splicer = broken(decoded.windows)
    audio, _ = spliced(splicer, decoded.windows, lambda _, index: decoded.parts[index])
    assert any(fault in f for f in join_faults(audio, decoded.windows, decoded.parts, splicer.joins))


def lag_to_whole(part: np.ndarray, window: Window, whole: np.ndarray, reach: int = 48) -> int:
    """The shift (samples) at which a window's own decode best matches the whole decode, the median
    over stretches of 8 frames, its edges left out: 0 when the window is decoded in place. Stretch
    by stretch, not over the window: the embedded engine's int8 decoder wanders up to 3 samples off
    the whole decode's phase in places (a window of the test sentence from frame 25 to its end
    best matched at -2 overall, at 0 in all but two of its stretches)."""
    inner = slice(CONTEXT_FRAMES * UNIT, len(part) - CONTEXT_FRAMES * UNIT)
    mine, theirs = part[inner], whole[window.start * UNIT + inner.start : window.start * UNIT + inner.stop]
    stretch = min(8 * UNIT, len(mine))  # a window of fewer frames is one stretch (an empty median is nan)
    lags = []
    for begin in range(0, len(mine) - stretch + 1, stretch):
        core = slice(begin + reach, begin + stretch - reach)
        lags.append(max(range(-reach, reach + 1), key=lambda lag: float(np.dot(mine[core], np.roll(theirs, lag)[core]))))
    return int(np.median(lags))


def test_a_later_window_is_decoded_in_place_and_one_off_by_a_sample_is_caught(decoded):
    """The decoder over a window continues the whole decode's phase (the harmonic source's slice):
    its samples line up with the whole decode's, so a window that starts a sample early or late
    (a dropped or repeated sample at its edge) shows up as a shift. The first window reads the
    model's onset without its left context, so it is checked by its joins only."""
    for window, part in zip(decoded.windows[1:], decoded.parts[1:], strict=False):
        assert lag_to_whole(part, window, decoded.whole) == 0
        late = np.concatenate([part[:1], part[:-1]])  # a sample repeated: every later one a sample late
        early = np.concatenate([part[1:], part[-1:]])  # a sample dropped
        assert lag_to_whole(late, window, decoded.whole) == 1 and lag_to_whole(early, window, decoded.whole) == -1


@pytest.fixture(scope="module")
def reference(decoded, synthesizer):
    """The default voice's reference statistics on the fixture's engine, recorded as the warm-up
    records them (the whole decode of its sentence: runtime.learn_norms)."""
    from tts_server.runtime import WARMUP_TEXTS

    text = WARMUP_TEXTS["ja"]
    job = synthesizer.prepare(text, 0, len(text), synthesizer.voice_book("ja").resolve("default"), 1.0, "ja").jobs[0]
    front = decoded.backend.front(job.ids, job.style, job.speed)
    audio, statistics = decoded.backend.statistics(front)
    assert len(audio) > 24000, "the reference's whole decode comes with its statistics"
    return Reference(statistics, front.frames)


def test_windows_given_their_voices_statistics_join_cleanly_in_place(decoded, reference):
    """A first piece's windows each given the voice's reference statistics (span_norm.py): joins
    with no click and no dropped or repeated sample, every later window decoded in place, and
    the piece its length."""
    parts = [decoded.backend.decode(decoded.front, w.start, w.end, None, reference.statistics) for w in decoded.windows]
    splicer = Splicer(decoded.windows)
    audio, _ = spliced(splicer, decoded.windows, lambda _, index: parts[index])
    assert join_faults(audio, decoded.windows, parts, splicer.joins) == []
    assert len(audio) == UNIT * decoded.front.frames
    for window, part in zip(decoded.windows[1:], parts[1:], strict=False):
        assert lag_to_whole(part, window, decoded.whole) == 0


def test_a_decode_given_statistics_normalises_with_them(decoded, reference):
    """The whole decode given the statistics it records is the whole decode (the recorded ones are
    what its norms used); given another sentence's, it is another decode."""
    audio, own = decoded.backend.statistics(decoded.front)
    np.testing.assert_allclose(audio, decoded.whole, atol=1e-5)
    again = decoded.backend.decode(decoded.front, 0, decoded.front.frames, None, own)
    np.testing.assert_allclose(again, decoded.whole, atol=1e-4)
    other = decoded.backend.decode(decoded.front, 0, decoded.front.frames, None, reference.statistics)
    assert np.abs(other - decoded.whole).max() > 1e-2


def test_the_runner_gives_a_splits_statistics_to_each_of_its_windows_only(decoded, reference):
    """Each window of a first piece gets its voice's statistics; a piece decoded in one window (too
    short for two) keeps its own, as a whole decode does, and so does a piece well short of the
    reference's frames (Reference.fits), whose split then says it has none."""
    from tts_server.engine.runner import ModelRunner
    from tts_server.engine.tokens import Job, Split

    given = []

    class Recording:
        def __getattr__(self, name):
            return getattr(decoded.backend, name)

        def decode(self, front, start, end, control=None, norms=None):
            given.append(norms)
            return decoded.backend.decode(front, start, end, control, norms)

    runner, job = ModelRunner(Recording()), decoded.job
    reference = Reference(reference.statistics, decoded.front.frames)  # recorded from a piece as long
    split = Split(0.29, reference)
    windowed = Job(job.ids, job.style, job.speed, split)
    runner.run([windowed])
    for index in range(1, len(split.windows)):
        runner.run([Job(job.ids, job.style, job.speed, split, index)])
    assert len(given) == len(decoded.windows) >= 2 and all(norms is reference.statistics for norms in given)
    assert split.reference is reference
    given.clear()
    short = Split(0.29, reference)
    runner.run([Job(job.ids[:3], job.style, job.speed, short)])
    assert len(short.windows) == 1 and given == [None]
    given.clear()
    longer = Reference(reference.statistics, int(decoded.front.frames / REFERENCE_SHARE) + 1)
    unfit = Split(0.29, longer)
    for index in range(len(decoded.windows)):
        runner.run([Job(job.ids, job.style, job.speed, unfit, index)])
    assert len(unfit.windows) >= 2 and given == [None] * len(unfit.windows) and unfit.reference is None


def level_db(audio: np.ndarray) -> float:
    """Mean power in dB."""
    return 10 * np.log10(np.mean(np.square(audio, dtype=np.float64)))


@pytest.mark.parametrize("decoded", ["torch"], indirect=True)  # the embedded engine's export keeps the stock norms
def test_the_pytorch_engines_speech_span_speaks_at_the_whole_decodes_level(decoded, monkeypatch):
    """A later piece's speech span (speech_span.py), its norms weighting its silence to the piece's
    share (engine/span_norm.py): within 0.5 dB of the whole decode, where the stock statistics
    leave it more than a dB low and spectrally further from it; a later window keeps the stock ones."""
    from tts_server.engine import span_norm
    from tts_server.engine.pauses import Pauses

    start, end = Pauses().trim(decoded.whole)

    def below_whole(audio: np.ndarray) -> float:
        return level_db(decoded.whole[start:end]) - level_db(audio[start:end])

    weighted = speech_span.decode(decoded.backend, decoded.front)
    later = decoded.windows[1]
    monkeypatch.setattr(span_norm.FrameWeights, "for_frames", classmethod(lambda cls, *args: None))
    assert np.array_equal(decoded.parts[1], decoded.backend.decode(decoded.front, later.start, later.end)), \
        "a later window decodes alike with the weighting off: it keeps the stock statistics"
    stock = speech_span.decode(decoded.backend, decoded.front)
    assert abs(below_whole(weighted)) < 0.5 and below_whole(stock) > 1.0


def test_the_runner_starts_a_first_window_its_engines_lead_before_the_speech(decoded):
    """The embedded engine decodes the whole LEAD_FRAMES before a first window's speech, the
    PyTorch engine half of them (counted as the whole lead, below)."""
    from tts_server.engine.runner import ModelRunner
    from tts_server.engine.tokens import Job, Split

    job = Job(decoded.job.ids, decoded.job.style, decoded.job.speed, Split(0.29))
    [first] = ModelRunner(decoded.backend).run([job])
    lead = {"onnx": windows.LEAD_FRAMES, "torch": windows.LEAD_FRAMES // 2}[decoded.engine]
    assert first.window == decoded.windows[0] and first.window.start == int(decoded.front.durations[0]) - lead
    assert len(first.audio) == UNIT * (first.window.end - first.window.start)


@pytest.mark.parametrize("decoded", ["torch"], indirect=True)
def test_the_pytorch_engines_short_lead_sounds_as_the_whole_lead(decoded, monkeypatch):
    """The PyTorch engine's first window starts first_window_lead frames before the first token,
    half of LEAD_FRAMES, and counts that silence as the whole lead's in its statistics
    (span_norm.py): over its speech it comes out at the level of the same window from the whole
    lead (0.0 dB on this sentence), where with the stock statistics it is about 2 dB quieter."""
    from tts_server.engine import span_norm

    first, lead = decoded.windows[0], int(decoded.front.durations[0])
    assert decoded.backend.first_window_lead < windows.LEAD_FRAMES and first.start == lead - decoded.backend.first_window_lead
    speech = slice(lead * UNIT, (decoded.windows[1].join - CONTEXT_FRAMES) * UNIT)  # to the next window's start

    def over_speech(audio: np.ndarray, start: int) -> np.ndarray:
        return audio[speech.start - start * UNIT : speech.stop - start * UNIT]

    monkeypatch.setattr(span_norm.FrameWeights, "for_frames", classmethod(lambda cls, *args: None))
    full_lead = over_speech(decoded.backend.decode(decoded.front, lead - windows.LEAD_FRAMES, first.end),
                            lead - windows.LEAD_FRAMES)
    stock = over_speech(decoded.backend.decode(decoded.front, first.start, first.end), first.start)
    served = over_speech(decoded.parts[0], first.start)
    assert abs(level_db(served) - level_db(full_lead)) < 0.5 and level_db(stock) < level_db(full_lead) - 1.0


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




def test_the_make_up_a_splice_reports_is_the_make_up_it_added():
    from tts_server.engine.windows import Loudness

    found = plan(durations(speech=240), 0.29)
    _, decode = synthetic_decode(found[-1].end)  # its first window comes out at 0.7 of the rest
    plain = Splicer(found, Loudness())  # no make-up learned yet
    as_decoded, _ = spliced(plain, found, decode)
    assert np.all(plain.made_up(0, len(as_decoded)) == 1.0)
    learned = Loudness()
    learned.makeup_db = 3.0
    splicer = Splicer(found, learned)
    made_up, _ = spliced(splicer, found, decode)
    factor = splicer.made_up(0, len(made_up))
    assert factor[0] == pytest.approx(10 ** (3 / 20)) and factor[-1] == 1.0
    np.testing.assert_allclose(made_up, as_decoded * factor, atol=1e-4)


def test_the_real_models_piece_is_cut_alike_whatever_make_up_its_server_has_learned(synthesizer):
    """A server's first-window make-up gain follows its traffic (windows.Loudness); where a piece
    starts and ends does not, so one text has one length from no make-up to the most."""
    from tts_server.engine.windows import MAX_MAKEUP_DB

    style = synthesizer.voice_book("ja").resolve("default")
    learned = synthesizer.loudness.makeup_db
    try:
        for text in ("はい。", "今日はいい天気ですね。"):
            lengths = set()
            for makeup_db in (0.0, MAX_MAKEUP_DB / 2, MAX_MAKEUP_DB):
                synthesizer.loudness.makeup_db = makeup_db
                lengths.add(len(synthesizer.synthesize(text, 0, len(text), style, 1.0, "ja", rtf=0.3).audio))
            assert len(lengths) == 1, f"{text}: {sorted(lengths)} samples"
    finally:
        synthesizer.loudness.makeup_db = learned


def test_a_voices_first_piece_gets_its_statistics_and_no_make_up_and_a_blends_neither(synthesizer):
    """Once a voice's reference statistics are learned, its first pieces' windows are given them
    and come out as decoded, whatever make-up the server has learned; a blend has none: its
    windows keep their own statistics and the make-up."""
    from tts_server.engine.windows import MAX_MAKEUP_DB

    text, blend = "今日はいい天気ですね。", "jf_alpha:0.5+jf_nezumi:0.5"
    book = synthesizer.voice_book("ja")
    synthesizer.learn_norms("jf_alpha", synthesizer.prepare(text, 0, len(text), book.resolve("jf_alpha"), 1.0, "ja"))
    piece = synthesizer.prepare(text, 0, len(text), book.resolve("jf_alpha"), 1.0, "ja")
    assert synthesizer.windowed(piece, 0.3, "jf_alpha").jobs[0].split.reference is synthesizer.references["jf_alpha"]
    assert synthesizer.windowed(piece, 0.3, blend).jobs[0].split.reference is None
    learned = synthesizer.loudness.makeup_db
    try:
        heard = {}
        for voice in ("jf_alpha", blend):
            for makeup_db in (0.0, MAX_MAKEUP_DB):
                synthesizer.loudness.makeup_db = makeup_db
                style = book.resolve(voice)
                heard[voice, makeup_db] = synthesizer.synthesize(text, 0, len(text), style, 1.0, "ja", rtf=0.3,
                                                                 voice=voice).audio
        np.testing.assert_array_equal(heard["jf_alpha", 0.0], heard["jf_alpha", MAX_MAKEUP_DB])
        assert level_db(heard[blend, MAX_MAKEUP_DB]) > level_db(heard[blend, 0.0]) + 1
    finally:
        synthesizer.loudness.makeup_db = learned
        synthesizer.references.pop("jf_alpha")


def test_a_short_reply_keeps_its_own_statistics_and_is_heard_whole(synthesizer):
    """A reply well short of its voice's reference sentence is decoded as if no statistics were
    learned (windows.REFERENCE_SHARE): given the reference's, "はい。" came out silent and
    "こんにちは。" 12 dB quiet. It keeps most of its whole decode's length and level."""
    from tts_server.engine.windows import MAX_MAKEUP_DB
    from tts_server.runtime import WARMUP_TEXTS

    book, rtf, sentence = synthesizer.voice_book("ja"), 0.74, WARMUP_TEXTS["ja"]
    style = book.resolve("jf_alpha")
    learned = synthesizer.loudness.makeup_db
    try:
        for text in ("はい。", "こんにちは。"):
            job = synthesizer.prepare(text, 0, len(text), style, 1.0, "ja").jobs[0]
            front = synthesizer.backend.front(job.ids, job.style, job.speed)
            assert len(plan(front.durations, rtf, front.energy, synthesizer.backend.first_window_lead)) >= 2, text
            heard = []
            for learn in (False, True):
                if learn:
                    synthesizer.learn_norms("jf_alpha", synthesizer.prepare(sentence, 0, len(sentence), style, 1.0, "ja"))
                synthesizer.loudness.makeup_db = MAX_MAKEUP_DB / 2  # the same make-up for both
                heard.append(synthesizer.synthesize(text, 0, len(text), style, 1.0, "ja", rtf=rtf, voice="jf_alpha").audio)
                synthesizer.references.pop("jf_alpha", None)
            np.testing.assert_array_equal(heard[1], heard[0], err_msg=text)
            whole = synthesizer.synthesize(text, 0, len(text), style, 1.0, "ja").audio
            assert len(heard[1]) >= 0.8 * len(whole) and level_db(heard[1]) > level_db(whole) - MAX_MAKEUP_DB, text
    finally:
        synthesizer.loudness.makeup_db = learned
        synthesizer.references.pop("jf_alpha", None)


def test_no_join_falls_in_the_silence_after_the_speech():
    """A later window needs speech past its join: given mostly the model's silence, the decoder's
    instance norms scale it up into noise."""
    d = durations(speech=90, tail=30)
    energy = np.full(int(d.sum()), 3.0, np.float32)
    energy[12 + 40 :] = -9.0  # speech ends 40 frames in: the rest is the model's silence
    spoken = speech_span.span_end(energy, len(energy))
    for rtf in (0.3, 0.45, 0.6, 0.8):
        found = plan(d, rtf, energy)
        assert all(spoken - w.join >= windows.MIN_WINDOW_FRAMES + CONTEXT_FRAMES for w in found[1:]), (rtf, found)
    assert len(plan(d, 0.6)) > len(plan(d, 0.6, energy)), "without the energy the frames past the speech count"


def test_the_real_models_last_window_keeps_the_silence_after_the_speech_silent(synthesizer):
    """The plans that once put a join past this sentence's last frame of speech (at 0.6: 4 frames
    before the end of its span), whose last window then decoded the model's silence into noise
    up to -23 dBFS, kept as sound after the sentence."""
    text = "駅までの道を教えてください。"
    job = synthesizer.prepare(text, 0, len(text), synthesizer.voice_book("ja").resolve("default"), 1.0, "ja").jobs[0]
    backend = synthesizer.backend
    front = backend.front(job.ids, job.style, job.speed)
    spoken = speech_span.span_end(front.energy, front.frames)
    for rtf in (0.4, 0.6):
        found = plan(front.durations, rtf, front.energy)
        audio, _ = spliced(Splicer(found), found, lambda window, _: backend.decode(front, window.start, window.end))
        after = audio[spoken * UNIT :]
        assert 20 * np.log10(np.abs(after).max()) < -50, (rtf, found)


@pytest.mark.parametrize("decoded", ["torch"], indirect=True)
def test_a_first_window_draws_its_own_part_of_the_pieces_source(decoded, monkeypatch):
    """The PyTorch engine's first window draws the harmonic source over its own samples only, and a
    later window the rest after them: together the source one draw over the piece gives (its noise
    set aside here), so no window's phase jumps at the end of what the first one drew."""
    import torch

    from tts_server.engine import torch_backend

    monkeypatch.setattr(torch, "randn_like", torch.zeros_like)
    generator = decoded.backend.model.decoder.generator
    given = decoded.front.features
    features = torch_backend._Features(given.asr, given.f0, given.energy, given.style)
    first = decoded.windows[0].end * UNIT
    with torch.inference_mode():
        features.source = torch_backend._source(generator, features, first)
        assert features.source.shape[1] == first < UNIT * decoded.front.frames
        in_two = torch_backend._source(generator, features, None)
        features.source = None
        in_one = torch_backend._source(generator, features, None)
    assert in_two.shape == in_one.shape == (1, UNIT * decoded.front.frames, 1)
    torch.testing.assert_close(in_two, in_one, rtol=0, atol=1e-6)
