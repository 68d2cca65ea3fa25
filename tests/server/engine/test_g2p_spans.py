"""The guard every G2P ends with: pieces in order, and never a change to what is spoken."""

from tts_server.engine.g2p.base import PhonemeSpan
from tts_server.engine.g2p.spans import OriginMap, settle, trim_marks


def test_overlapping_pieces_merge_into_one_keeping_the_phonemes_verbatim():
    text = "2024年"
    pieces = [PhonemeSpan("ɚli", 0, 3), PhonemeSpan(" ", 3, 3), PhonemeSpan("sɨnjɛn", 2, 5)]
    assert settle(pieces, "ɚli sɨnjɛn", text) == [PhonemeSpan("ɚli sɨnjɛn", 0, 5)]


def test_pieces_that_do_not_spell_the_phonemes_become_one_piece_for_the_text():
    text = "  hola mundo "
    pieces = [PhonemeSpan("ola", 2, 6)]
    assert settle(pieces, "ˈola mˈundo", text) == [PhonemeSpan("ˈola mˈundo", 2, 12)]
    assert settle(pieces, "", text) == []


def test_origin_map_points_rewritten_runs_at_what_they_replaced():
    mapped = OriginMap("湿度50%。")
    mapped.rewrite("湿度百分之五十。")
    assert mapped.text == "湿度百分之五十。"
    assert mapped.span(2, 7) == (2, 5)  # 百分之五十 <- 50%
    mapped.replace_chars({"。": ". "})
    mapped.strip()
    assert mapped.text == "湿度百分之五十."
    assert mapped.span(7, 8) == (5, 6)


def test_trim_marks_keeps_a_word_made_only_of_marks():
    assert trim_marks("«hola»,", 0, 7) == (1, 5)
    assert trim_marks("—", 0, 1) == (0, 1)
