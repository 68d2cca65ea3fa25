"""The chunker yields the same sentences for a whole string and for any token stream, and the
shared case table's (tests/text/chunker_cases.json, which the page's copy runs too)."""

import json
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tts_text.chunker import SentenceChunker, split_sentences

CASES = json.loads((Path(__file__).parent / "chunker_cases.json").read_text())

MIXED = (
    "Mr. Smith paid $29.50 for it. Then he left... quietly! "
    "「本当？」と彼は言った。今日はいい天気ですね、散歩に行きましょう。\n"
    "Use e.g. this one. In 1980. Next year was 3.5 times bigger! 終わり？ ok"
)


def sentences(text: str, **options) -> list[str]:
    return [text[start:end] for start, end in split_sentences(text, **options)]


def stream(fragments: list[str], **options) -> list[str]:
    chunker = SentenceChunker(**options)
    out = []
    for fragment in fragments:
        out += chunker.feed(fragment)
    return out + chunker.flush()


@pytest.mark.parametrize("case", CASES, ids=[f"{c['language']}: {c['rule']}" for c in CASES])
def test_the_shared_case(case):
    fast = case.get("fast_first_fragment")
    assert sentences(case["text"], fast_first_fragment=fast) == case["sentences"]
    assert stream(list(case["text"]), fast_first_fragment=fast) == case["sentences"]  # one character at a time


def test_the_shared_cases_cover_every_language_the_engines_speak():
    from tts_server.engine.languages import CODES

    assert {code.split("-")[0] for code in CODES} <= {c["language"] for c in CASES}


def test_sentence_ending_at_a_token_boundary_waits_for_the_next_token():
    chunker = SentenceChunker()
    assert chunker.feed("In 1980.") == []
    assert chunker.feed(" Next") == ["In 1980."]
    assert chunker.feed(" it was 3.") == []
    assert chunker.feed("5 times more.") == []
    assert chunker.flush() == ["Next it was 3.5 times more."]


def test_japanese_terminator_waits_for_a_possible_closing_quote():
    chunker = SentenceChunker()
    assert chunker.feed("「行こう。") == []
    assert chunker.feed("」") == []
    assert chunker.feed("次") == ["「行こう。」"]


def test_spans_index_the_fed_text():
    chunker = SentenceChunker()
    spans = chunker.feed_spans("  Hi there. ") + chunker.feed_spans("Bye.") + chunker.flush_spans()
    assert spans == [((2, 11), "Hi there."), ((12, 16), "Bye.")]


@st.composite
def splits(draw, text: str):
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=len(text))))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in pairwise(bounds)]


@settings(max_examples=300, deadline=None)
@given(st.data(), st.sampled_from([None, 6, 20]))
def test_any_split_of_a_text_yields_the_same_sentences(data, fast):
    fragments = data.draw(splits(MIXED))
    assert stream(fragments, fast_first_fragment=fast) == sentences(MIXED, fast_first_fragment=fast)


ALPHABET = st.sampled_from(list("ab1 .,!?。、「」\n…\"¿¡«»।，\u00a0—") + ["Mr", "e.g", "です", "Sra", "pág"])


@settings(max_examples=300, deadline=None)
@given(st.lists(ALPHABET, max_size=40).map("".join), st.data())
def test_any_split_of_any_text_yields_the_same_sentences(text, data):
    fragments = data.draw(splits(text))
    whole = sentences(text)
    assert stream(fragments) == whole
    # Nothing is lost or invented: the sentences are the text minus whitespace between them.
    assert "".join("".join(whole).split()) == "".join(text.split())


def test_a_space_before_a_closing_guillemet_waits_for_it():
    chunker = SentenceChunker()
    assert chunker.feed("« Viens. ") == []  # a » may still follow the space
    assert chunker.feed("» Puis") == ["« Viens. »"]


MULTILINGUAL = next(c["text"] for c in CASES if c["language"] == "multi")


@settings(max_examples=200, deadline=None)
@given(st.data(), st.sampled_from([None, 4, 12]))
def test_any_split_of_a_multilingual_text_yields_the_same_sentences(data, fast):
    fragments = data.draw(splits(MULTILINGUAL))
    assert stream(fragments, fast_first_fragment=fast) == sentences(MULTILINGUAL, fast_first_fragment=fast)
