"""The page's agent mode cuts a token stream with a JavaScript port of tts_text.chunker:
run both on the same texts and the same token splits, in the browser, and compare."""

from __future__ import annotations

import random

from tts_text.chunker import SentenceChunker

TEXTS = [
    "Mr. Smith paid $29.50 for it. Then he left... quietly! ",
    "「本当？」と彼は言った。今日はいい天気ですね、散歩に行きましょう。\n",
    "Use e.g. this one. In 1980. Next year was 3.5 times bigger! 終わり？ ok",
    "彼は「行こう。」と言った。「はい！」 次へ。",
    "It cost 1,000 dollars, sadly. Dr. J. Smith, Ph.D. arrived at 5 p.m. today.",
    "今日はいい天気ですね、散歩に行きましょう。明日は、雨です。",
    "Visit example.com now! Really?! Yes… fine.\n\nNew paragraph",
    "絵文字😀も数える。次の文。",
]
# Characters that decide cuts, for random texts.
ALPHABET = list("ab1 .,!?。、「」\n…") + ["Mr", "e.g", "3.5", "😀", "ok"]


def cuts(text: str, pieces: list[str], fast_first_fragment: int | None) -> list[str]:
    chunker = SentenceChunker(fast_first_fragment=fast_first_fragment)
    return [s for piece in pieces for s in chunker.feed(piece)] + chunker.flush()


def split(text: str, rng: random.Random) -> list[str]:
    pieces, i = [], 0
    while i < len(text):
        size = rng.randint(1, 4)
        pieces.append(text[i:i + size])
        i += size
    return pieces


async def test_the_pages_chunker_cuts_token_streams_like_the_python_one(speech_server, open_page):
    rng = random.Random(12)
    texts = TEXTS + ["".join(rng.choices(ALPHABET, k=rng.randint(1, 40))) for _ in range(300)]
    cases = [{"pieces": pieces, "fast": fast}
             for text in texts for pieces in ([text], split(text, rng)) for fast in (None, 10)]
    page = await open_page(speech_server.http_url + "/")
    got = await page.evaluate(
        """async (cases) => {
             const { SentenceChunker } = await import('/demo/chunker.js');
             return cases.map(({pieces, fast}) => {
               const chunker = new SentenceChunker(fast);
               return [...pieces.flatMap(p => chunker.feed(p)), ...chunker.flush()];
             });
           }""",
        cases,
    )
    expected = [cuts("".join(c["pieces"]), c["pieces"], c["fast"]) for c in cases]
    mismatches = [(c, g, e) for c, g, e in zip(cases, got, expected, strict=True) if g != e]
    assert not mismatches, mismatches[:3]
    assert sum(len(e) for e in expected) > len(cases)  # the corpus does cut sentences
