"""Output processing without a model: a piece assembled from its windows is the piece assembled
whole (same samples, same timestamps), and a merged piece keeps each sentence's timestamps and
puts the configured pause between its sentences."""

from __future__ import annotations

import numpy as np
import pytest

from tts_server.engine.backend import SAMPLES_PER_DURATION_UNIT as UNIT
from tts_server.engine.backend import Inference
from tts_server.engine.g2p.base import PhonemeSpan
from tts_server.engine.output import PieceAssembler
from tts_server.engine.pauses import Pauses
from tts_server.engine.tokens import Job, Piece, Split, Token
from tts_server.engine.windows import MAX_MAKEUP_DB, Loudness, plan

TEXT = "あいうえお。かきくけこ。"


def piece_of(words: list[tuple[int, int]], durations: list[int], breaks=(), split: Split | None = None) -> Piece:
    """One job over TEXT's characters [start, end) per word, one token per character."""
    spans = [PhonemeSpan("a" * (end - start), start, end) for start, end in words]
    tokens = [Token(i, 1) for i, (start, end) in enumerate(words) for _ in range(end - start)]
    assert len(durations) == len(tokens) + 2
    job = Job(tuple(t.id for t in tokens), np.zeros(256, np.float32), 1.0, split)
    return Piece(TEXT, words[0][0], words[-1][1], spans, [tokens], [job], 0.0, tuple(breaks))


def audio_of(durations: list[int], silent_tokens: set[int]) -> np.ndarray:
    """A tone through every token but the pads and the `silent_tokens` (punctuation)."""
    frames = []
    for k, d in enumerate(durations):
        quiet = k in (0, len(durations) - 1) or k - 1 in silent_tokens
        t = np.arange(d * UNIT) / 24000
        frames.append(np.zeros(d * UNIT) if quiet else 0.3 * np.sin(2 * np.pi * (150 + 20 * k) * t))
    return np.concatenate(frames).astype(np.float32)


def records(segments, from_ms=0):
    out, at = [], from_ms
    for segment in segments:
        out += [(a.text, a.start_char, a.end_char, a.start_ms + at, a.end_ms + at) for a in segment.alignments]
        at += segment.duration_ms
    return out


DURATIONS = [12, *[4] * 5, 20, *[3] * 5, 20, 2]  # pad, あいうえお, 。, かきくけこ, 。, pad
WORDS = [(0, 5), (5, 6), (6, 11), (11, 12)]


@pytest.mark.parametrize("rtf", [0.29, 0.8])
def test_a_piece_assembled_window_by_window_is_the_piece_assembled_whole(rtf):
    audio = audio_of(DURATIONS, silent_tokens={5, 11})
    whole = PieceAssembler(piece_of(WORDS, DURATIONS), Pauses()).add([Inference(audio, np.array(DURATIONS))], 0.0)

    split = Split(rtf, windows=plan(np.array(DURATIONS), rtf))
    assert len(split.windows) >= 2
    assembler = PieceAssembler(piece_of(WORDS, DURATIONS, split=split), Pauses())
    parts = []
    for window in split.windows:
        decoded = audio[window.start * UNIT : window.end * UNIT]
        parts.append(assembler.add([Inference(decoded, np.array(DURATIONS), window)], 0.0))
    assert assembler.finished
    assert len(parts[0].audio) > 0, "the first window's audio leaves before the rest is decoded"
    assert all(len(part.audio) % 24 == 0 for part in parts), "whole milliseconds: timestamps stay exact"
    np.testing.assert_allclose(np.concatenate([p.audio for p in parts]), whole.audio, atol=1e-6)
    assert records(parts) == records([whole])


@pytest.mark.parametrize("windowed", [False, True])
def test_a_soft_onset_is_heard_within_50_ms_of_the_first_byte(windowed):
    audio = audio_of(DURATIONS, silent_tokens={5, 11})
    onset = 12 * UNIT  # where the first token starts: its first 60 ms at -41 dBFS, audible but not yet heard
    audio[onset : onset + 60 * 24] *= 10 ** (-41 / 20) / 0.3
    split = Split(0.29, windows=plan(np.array(DURATIONS), 0.29)) if windowed else None
    assembler = PieceAssembler(piece_of(WORDS, DURATIONS, split=split), Pauses())
    if windowed:
        sent = np.concatenate([assembler.add([Inference(audio[w.start * UNIT : w.end * UNIT], np.array(DURATIONS), w)],
                                             0.0).audio for w in split.windows])
    else:
        sent = assembler.add([Inference(audio, np.array(DURATIONS))], 0.0).audio
    assert np.flatnonzero(np.abs(sent) >= 10 ** (-40 / 20))[0] / 24 <= 50


def test_where_a_windowed_piece_is_cut_does_not_follow_the_learned_make_up_gain():
    """The first window comes out with the gain a server has learned from its traffic so far
    (windows.Loudness); the cut is decided on the audio as decoded, so a blip in the model's lead
    silence that only the gain makes audible is cut with the rest of that silence."""
    audio = audio_of(DURATIONS, silent_tokens={5, 11})
    # in the lead the first window decodes (from LEAD_FRAMES before the speech, faded in over its first),
    # 75 ms before the speech, at -45 dBFS: under the -42 dBFS of audible until made up
    blip = 9 * UNIT
    audio[blip : blip + 48] = 10 ** (-45 / 20)
    split = Split(0.29, windows=plan(np.array(DURATIONS), 0.29))
    sent = {}
    for makeup_db in (0.0, MAX_MAKEUP_DB):
        loudness = Loudness()
        loudness.makeup_db = makeup_db
        assembler = PieceAssembler(piece_of(WORDS, DURATIONS, split=split), Pauses(), loudness)
        sent[makeup_db] = np.concatenate([
            assembler.add([Inference(audio[w.start * UNIT : w.end * UNIT], np.array(DURATIONS), w)], 0.0).audio
            for w in split.windows])
    assert len(sent[0.0]) == len(sent[MAX_MAKEUP_DB]), "cut alike whatever the gain learned"
    for makeup_db, audio in sent.items():
        speech_ms = np.flatnonzero(np.abs(audio) >= 10 ** (-20 / 20))[0] / 24
        assert speech_ms <= 50, f"{speech_ms} ms of lead silence kept at {makeup_db} dB of make-up"


def test_a_merged_piece_keeps_its_sentences_timestamps_and_pauses_between_them():
    pauses = Pauses(sentence_ms=300)
    audio = audio_of(DURATIONS, silent_tokens={5, 11})
    merged = PieceAssembler(piece_of(WORDS, DURATIONS, breaks=(6,)), pauses).add(
        [Inference(audio, np.array(DURATIONS))], 0.0)
    found = records([merged])
    assert [r[0] for r in found] == ["あいうえお", "。", "かきくけこ", "。"]
    assert all(TEXT[start:end] == text for text, start, end, _, _ in found)
    assert all(r[3] % 25 == 0 and r[4] % 25 == 0 for r in found), "on the model's 25 ms grid"
    assert all(a[4] <= b[3] for a, b in zip(found, found[1:], strict=False)), "in order, not overlapping"
    first, second = found[0], found[2]
    assert first[4] - first[3] == 5 * 4 * 25 and second[4] - second[3] == 5 * 3 * 25, "timed by their durations"
    loud = np.flatnonzero(np.abs(merged.audio) > 0.01)
    gap = np.diff(loud).max() * 1000 / 24000
    # audible to audible, the cuts on the 25 ms grid: up to a frame more on either side (docs/engines.md)
    assert 295 <= gap <= 350, f"{gap} ms between the sentences"
