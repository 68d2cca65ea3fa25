"""The chunker yields the same sentences for a whole string and for any token stream."""

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from tts_text.chunker import SentenceChunker, split_sentences

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


def test_whole_text_sentences():
    assert sentences(MIXED) == [
        "Mr. Smith paid $29.50 for it.",
        "Then he left... quietly!",
        "「本当？」と彼は言った。",
        "今日はいい天気ですね、散歩に行きましょう。",
        "Use e.g. this one.",
        "In 1980.",
        "Next year was 3.5 times bigger!",
        "終わり？",
        "ok",
    ]


def test_closing_quote_belongs_to_its_sentence():
    assert sentences("彼は「行こう。」と言った。「はい！」 次へ。") == [
        "彼は「行こう。」と言った。",
        "「はい！」",
        "次へ。",
    ]


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


def test_newlines_end_sentences_and_blank_lines_vanish():
    assert sentences("一行目\n\n二行目\n  three  ") == ["一行目", "二行目", "three"]


def test_flush_releases_text_without_punctuation():
    assert stream(["hello", " world"]) == ["hello world"]


def test_fast_first_fragment_cuts_only_the_first_long_sentence():
    text = "今日はいい天気ですね、散歩に行きましょう。明日は、雨です。"
    assert sentences(text, fast_first_fragment=8) == [
        "今日はいい天気ですね、",
        "散歩に行きましょう。",
        "明日は、雨です。",
    ]
    # A clause mark before the threshold does not cut.
    assert sentences("はい、そうです。", fast_first_fragment=8) == ["はい、そうです。"]
    # Latin commas cut only before a space, never inside a number.
    assert sentences("It cost 1,000 dollars, sadly.", fast_first_fragment=5) == [
        "It cost 1,000 dollars,",
        "sadly.",
    ]


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


ALPHABET = st.sampled_from(list("ab1 .,!?。、「」\n…\"¿¡«»।，\u00a0") + ["Mr", "e.g", "です", "Sra", "pág"])


@settings(max_examples=300, deadline=None)
@given(st.lists(ALPHABET, max_size=40).map("".join), st.data())
def test_any_split_of_any_text_yields_the_same_sentences(text, data):
    fragments = data.draw(splits(text))
    whole = sentences(text)
    assert stream(fragments) == whole
    # Nothing is lost or invented: the sentences are the text minus whitespace between them.
    assert "".join("".join(whole).split()) == "".join(text.split())


def test_latin_abbreviations_initials_and_decimals_do_not_end_sentences():
    assert sentences("Dr. Smith met Mr. J. Doe in the U.S. on Jan. 5, e.g. at 3.30 p.m. sharp. Then lunch.") == [
        "Dr. Smith met Mr. J. Doe in the U.S. on Jan. 5, e.g. at 3.30 p.m. sharp.",
        "Then lunch.",
    ]
    assert sentences("La Sra. Pérez vive en la pág. 12. Mme. Roux aussi.") == [
        "La Sra. Pérez vive en la pág. 12.",
        "Mme. Roux aussi.",
    ]


def test_chinese_terminators_and_comma_for_the_fast_first_fragment():
    assert sentences("你好！今天天气很好。我们去公园吧？好的") == ["你好！", "今天天气很好。", "我们去公园吧？", "好的"]
    assert sentences("今天天气很好，我们去公园吧。明天呢，下雨。", fast_first_fragment=4) == [
        "今天天气很好，",
        "我们去公园吧。",
        "明天呢，下雨。",
    ]


def test_devanagari_danda_and_double_danda_end_sentences():
    assert sentences("मेरा नाम राम है। मैं दिल्ली में रहता हूँ।भारत महान है॥ अंत") == [
        "मेरा नाम राम है।",
        "मैं दिल्ली में रहता हूँ।",
        "भारत महान है॥",
        "अंत",
    ]
    assert sentences("डॉ. शर्मा आए। वे खुश थे. फिर गए।") == ["डॉ. शर्मा आए।", "वे खुश थे.", "फिर गए।"]


def test_spanish_inverted_marks_open_a_sentence_and_are_never_cut_inside():
    assert sentences("¡Hola! ¿Cómo estás? Bien.¿Y tú?¡Genial!") == ["¡Hola!", "¿Cómo estás?", "Bien.", "¿Y tú?", "¡Genial!"]
    # A clause mark inside ¿...? does not cut the question in two, even for the first fragment.
    text = "¿Sabes, amigo mío, qué hora es? Son las tres, creo."
    assert sentences(text, fast_first_fragment=3) == ["¿Sabes, amigo mío, qué hora es?", "Son las tres, creo."]
    assert sentences("¡Hola, amigo! Adiós.", fast_first_fragment=3) == ["¡Hola, amigo!", "Adiós."]


def test_french_guillemets_with_spaces_stay_with_their_sentence():
    assert sentences("Il a dit : « Viens. » Puis il est parti ! « Bonjour ! » dit-elle.") == [
        "Il a dit : « Viens. »",
        "Puis il est parti !",
        "« Bonjour ! » dit-elle.",
    ]
    # The same in English: a quoted exclamation followed by a lower-case word goes on.
    assert sentences('"Stop!" he said. "Why?" She left.') == ['"Stop!" he said.', '"Why?"', "She left."]
    chunker = SentenceChunker()
    assert chunker.feed("« Viens. ") == []  # a » may still follow the space
    assert chunker.feed("» Puis") == ["« Viens. »"]


MULTILINGUAL = (
    "¡Hola! ¿Qué tal, Sra. Pérez? Muy bien.¿Y usted? "
    "« Bonjour ! » dit-il. Il a 3,5 ans. "
    "डॉ. राम यहाँ है। मैं ठीक हूँ॥ "
    "你好，世界！今天很好。"
)


@settings(max_examples=200, deadline=None)
@given(st.data(), st.sampled_from([None, 4, 12]))
def test_any_split_of_a_multilingual_text_yields_the_same_sentences(data, fast):
    fragments = data.draw(splits(MULTILINGUAL))
    assert stream(fragments, fast_first_fragment=fast) == sentences(MULTILINGUAL, fast_first_fragment=fast)
