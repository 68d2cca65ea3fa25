"""Silence trimming and punctuation pauses, on synthetic audio: the rules behind "no dead air"."""

import numpy as np
import pytest

from tts_server.engine.pauses import Pauses

RATE = 24000
P = Pauses(clause_ms=200, sentence_ms=300, paragraph_ms=450, lead_ms=10, trail_ms=40)


def tone(ms: int, level: float = 0.3) -> np.ndarray:
    t = np.arange(ms * RATE // 1000) / RATE
    return (level * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


def silence(ms: int) -> np.ndarray:
    return np.zeros(ms * RATE // 1000, np.float32)


def test_trim_keeps_the_sound_and_a_frame_aligned_margin():
    audio = np.concatenate([silence(300), tone(500), silence(750)])  # 1550 ms: a whole number of 25 ms frames
    start, end = P.trim(audio)
    assert start % 600 == 0 and end % 600 == 0, "cuts fall on the model's 25 ms frames"
    first_sound, last_sound = 300 * 24, 800 * 24
    assert 10 * 24 <= first_sound - start <= 35 * 24
    assert 40 * 24 <= end - last_sound <= 65 * 24
    assert np.abs(audio[start:end]).max() == np.abs(audio).max()


def soft_onset(ms: int) -> np.ndarray:
    """`ms` of a tone at -41 dBFS: audible to the trim, not yet heard (SPEC §6 counts -40 dBFS)."""
    return tone(ms, level=10 ** (-41 / 20))


def test_a_soft_onset_is_cut_so_the_first_heard_sample_comes_within_50_ms():
    audio = np.concatenate([silence(300), soft_onset(60), tone(500), silence(750)])
    start, _ = P.trim(audio)
    first_heard = np.flatnonzero(np.abs(audio) >= 10 ** (-40 / 20))[0]
    assert start % 600 == 0
    assert (first_heard - start) / 24 <= P.onset_ms
    assert (first_heard - start) / 24 > P.onset_ms - 25, "no more of the onset is cut than the rule needs"


def test_trim_of_silence_keeps_nothing():
    assert P.trim(silence(500)) == (0, 0)


def test_quiet_noise_below_the_threshold_is_silence():
    audio = np.concatenate([np.full(24000, 10 ** (-50 / 20), np.float32), tone(100)])
    start, _ = P.trim(audio)
    assert start >= 24000 - 35 * 24


@pytest.mark.parametrize(
    "text, end, gap",
    [
        ("今日は晴れ。明日は雨。", 6, 300),
        ("Hello there. Next", 12, 300),
        ("Well, then", 5, 200),
        ("こんにちは、世界", 6, 200),
        ("First paragraph.\n\nSecond", 16, 450),
        ("「晴れです。」次", 7, 300),
        ("He said «oui», then", 14, 200),
        ("He said «oui». Then", 13, 300),
        ("no punctuation at the end", 25, 300),
        ("नमस्ते। आगे", 7, 300),
    ],
)
def test_the_gap_follows_the_punctuation(text, end, gap):
    assert P.gap_after(text, end) == gap


def test_padding_makes_the_gap_between_audible_samples():
    pad = P.padding(300)
    assert len(pad) == (300 - 10 - 40) * 24 and not pad.any()
    assert len(P.padding(20)) == 0
