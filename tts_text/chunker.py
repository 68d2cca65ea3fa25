"""Sentence chunker: a whole string or a live token stream in, the same sentences out.

Used by voice agents to feed LLM tokens into a session sentence by sentence, and by the
server to split a response's text, so both ends agree on where sentences end.

A boundary is only released once the text after it proves it: "1980." followed by "5"
is a decimal, followed by " Next" a sentence end. `flush()` releases the remainder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .punctuation import (
    CLAUSE_MARKS,
    CLOSERS,
    INLINE_SPACES,
    INVERTED_OPENERS,
    SENTENCE_ENDS,
    SPACED_CLAUSE_MARKS,
)

# Words that end in a period without ending a sentence (compared lower-case, without the dot):
# English, then Spanish, French, Italian and Portuguese.
ABBREVIATIONS = frozenset(
    """mr mrs ms mx dr prof sr jr st mt vs etc e.g i.e a.m p.m cf al approx dept est fig
    inc ltd co corp no vol ed eds gen gov lt col sgt capt rev jan feb mar apr jun jul aug
    sep sept oct nov dec u.s u.k u.n ph.d
    sra srta dra ud uds vd vds pág págs núm tel av avda admón atte
    mme mlle mgr me env ex éd
    sig sig.ra sig.na dott ecc pag pagg
    exmo exma""".split()
)
_LATIN = "A-Za-zÀ-ÖØ-öø-ɏ"
WORD_BEFORE_DOT = re.compile(rf"([{_LATIN}][{_LATIN}.]*)$")
# Hindi writes titles with a period too (डॉ. शर्मा); its sentences end with a danda.
DEVANAGARI_ABBREVIATIONS = frozenset("डॉ प्रो श्री श्रीमती सुश्री कु पं मो".split())
DEVANAGARI_BEFORE_DOT = re.compile("([\u0900-\u0963\u0966-\u097f]+)$")


def _is_abbreviation(text: str, dot: int) -> bool:
    devanagari = DEVANAGARI_BEFORE_DOT.search(text, 0, dot)
    if devanagari:
        return devanagari.group(1) in DEVANAGARI_ABBREVIATIONS
    match = WORD_BEFORE_DOT.search(text, 0, dot)
    if not match:
        return False
    word = match.group(1).lower()
    # Single letters are initials ("J. Smith"), dotted words are acronyms ("e.g.").
    return word in ABBREVIATIONS or len(word) == 1 or ("." in word and len(word) <= 5)


def _is_hiragana(char: str) -> bool:
    return "\u3041" <= char <= "\u309f"


class _Undecided(Exception):
    """The text ends where the next character would decide whether a sentence ended."""


def _continues_after_quote(text: str, i: int, final: bool) -> bool:
    if i < len(text) and _is_hiragana(text[i]):
        return True
    j = i
    while j < len(text) and text[j] in INLINE_SPACES:
        j += 1
    if j == len(text):
        if not final and j > i:
            raise _Undecided  # the next word decides
        return False
    return j > i and text[j].islower()


def _skip_closers(text: str, i: int, final: bool) -> int:
    while i < len(text):
        if text[i] in CLOSERS:
            i += 1
        elif text[i] in INLINE_SPACES and text.count("«", 0, i) > text.count("»", 0, i):
            # French spacing: « Viens. » — the space and » still belong to this sentence.
            j = i
            while j < len(text) and text[j] in INLINE_SPACES:
                j += 1
            if j == len(text) and not final:
                raise _Undecided
            if j == len(text) or text[j] != "»":
                break
            i = j + 1
        else:
            break
    if i == len(text) and not final:
        raise _Undecided
    return i


def _inside_inverted_question(text: str, i: int) -> bool:
    """Whether text[i] lies between a Spanish ¿ or ¡ and the mark that closes it."""
    return any(text.count(opener, 0, i) > text.count(closer, 0, i) for opener, closer in INVERTED_OPENERS.items())


def _end_after_period(text: str, i: int, final: bool) -> int | None:
    """Where a sentence ending with the '.' at i ends, or None when the dot ends nothing."""
    n = len(text)
    if i + 1 < n and text[i + 1] == ".":  # "..." ellipsis: a pause, not an end
        return None
    if i > 0 and text[i - 1] == ".":
        return None
    if i + 1 == n and not final:
        raise _Undecided
    if i + 1 < n and text[i - 1 : i].isdecimal() and text[i + 1].isdecimal():  # "29.50"
        return None
    if _is_abbreviation(text, i):
        return None
    end = _skip_closers(text, i + 1, final)
    if end < n and not text[end].isspace() and text[end] not in INVERTED_OPENERS:  # "a.b", "example.com"
        return None
    return end


def _sentence_end(text: str, i: int, final: bool) -> int | None:
    """If text[i] ends a sentence, the index just past it (terminators and closers)."""
    char = text[i]
    if char == "\n":
        return i + 1
    if char in SENTENCE_ENDS:
        end = i
        while end < len(text) and text[end] in SENTENCE_ENDS:
            end += 1
        closed = _skip_closers(text, end, final)
        # 「本当？」と言った: a quoted exclamation followed by a particle goes on;
        # so does « Bonjour ! » dit-elle / "Stop!" he said.
        if closed > end and _continues_after_quote(text, closed, final):
            return None
        return closed
    if char == ".":
        return _end_after_period(text, i, final)
    return None


def _clause_end(text: str, i: int, final: bool) -> int | None:
    """If text[i] is a clause mark a fragment may end at, the index just past it."""
    char = text[i]
    if char not in CLAUSE_MARKS or _inside_inverted_question(text, i):
        return None
    if char in SPACED_CLAUSE_MARKS:  # "1,000" is a number
        if i + 1 == len(text):
            if not final:
                raise _Undecided
            return None
        if not text[i + 1].isspace():
            return None
    return _skip_closers(text, i + 1, final)


@dataclass
class SentenceChunker:
    """Feed fragments, get complete sentences; `flush()` at the end of input.

    fast_first_fragment: when set, the first sentence is released early at its first
    clause mark (、 , ; —) found at or beyond this many characters, so speech starts sooner.
    """

    fast_first_fragment: int | None = None
    _buffer: str = ""
    _offset: int = 0  # absolute position of _buffer[0] in everything fed so far
    _scanned: int = 0  # buffer positions before this need no second look
    _released: int = 0

    def feed(self, fragment: str) -> list[str]:
        return [text for _, text in self.feed_spans(fragment)]

    def flush(self) -> list[str]:
        return [text for _, text in self.flush_spans()]

    def feed_spans(self, fragment: str) -> list[tuple[tuple[int, int], str]]:
        """Like feed(), each sentence with its (start, end) in everything fed so far."""
        self._buffer += fragment
        return self._cut(final=False)

    def flush_spans(self) -> list[tuple[tuple[int, int], str]]:
        sentences = self._cut(final=True)
        self._release(len(self._buffer), sentences)
        return sentences

    def _cut(self, final: bool) -> list[tuple[tuple[int, int], str]]:
        sentences: list[tuple[tuple[int, int], str]] = []
        i = self._scanned
        while i < len(self._buffer):
            try:
                end = _sentence_end(self._buffer, i, final)
                if end is None and self._wants_fast_fragment(i):
                    end = _clause_end(self._buffer, i, final)
            except _Undecided:
                break
            if end is None:
                i += 1
                self._scanned = i
            else:
                self._release(end, sentences)
                i = 0
        return sentences

    def _wants_fast_fragment(self, i: int) -> bool:
        return (
            self.fast_first_fragment is not None
            and self._released == 0
            and self._offset + i >= self.fast_first_fragment
        )

    def _release(self, end: int, into: list[tuple[tuple[int, int], str]]) -> None:
        """Take buffer[:end] off the buffer; a non-blank remainder of it is a sentence."""
        span = _strip_span(self._buffer, 0, end)
        if span:
            start, stop = span
            into.append(((self._offset + start, self._offset + stop), self._buffer[start:stop]))
            self._released += 1
        self._buffer = self._buffer[end:]
        self._offset += end
        self._scanned = 0


def _strip_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def split_sentences(text: str, fast_first_fragment: int | None = None) -> list[tuple[int, int]]:
    """(start, end) spans of the sentences of a whole text, whitespace trimmed."""
    chunker = SentenceChunker(fast_first_fragment=fast_first_fragment)
    return [span for span, _ in chunker.feed_spans(text) + chunker.flush_spans()]
