"""Helpers shared by the G2Ps that tie phonemes back to source characters.

Each G2P first computes exactly the phoneme string kokoro's own pipeline would, then cuts it
into pieces. `settle` is the last step of every one of them: it enforces the invariants the
synthesizer relies on (pieces in order, never overlapping, joined they give the phonemes)
and falls back to one piece for the whole text rather than ever changing what is spoken.
"""

from __future__ import annotations

import difflib
import unicodedata

from .base import PhonemeSpan


def separator(pieces: list[PhonemeSpan], phonemes: str = " ") -> PhonemeSpan:
    """A space with no source, placed where the previous word ended."""
    end = pieces[-1].end if pieces else 0
    return PhonemeSpan(phonemes, end, end)


def is_silent_mark(char: str) -> bool:
    """Punctuation and symbols: characters that may be read as nothing."""
    return unicodedata.category(char)[0] in "PSZ"


def trim_marks(text: str, start: int, end: int) -> tuple[int, int]:
    """text[start:end] without leading and trailing punctuation, if any letter remains."""
    a, b = start, end
    while a < b and is_silent_mark(text[a]):
        a += 1
    while b > a and is_silent_mark(text[b - 1]):
        b -= 1
    return (a, b) if a < b else (start, end)


def settle(pieces: list[PhonemeSpan], phonemes: str, text: str, start: int = 0, end: int | None = None) -> list[PhonemeSpan]:
    """Pieces that join to `phonemes`, in order and not overlapping.

    A piece that starts before the previous one ended is merged into it (phonemes kept
    verbatim); if the pieces do not spell `phonemes` at all, one piece covers
    text[start:end] (whitespace trimmed).
    """
    settled: list[PhonemeSpan] = []
    for piece in pieces:
        if not piece.phonemes:
            continue
        if piece.start < piece.end:
            last = next((i for i in range(len(settled) - 1, -1, -1) if settled[i].start < settled[i].end), None)
            if last is not None and piece.start < settled[last].end:
                joined = "".join(p.phonemes for p in settled[last:]) + piece.phonemes
                merged = (settled[last].start, max(settled[last].end, piece.end))
                del settled[last:]
                piece = PhonemeSpan(joined, *merged)
        settled.append(piece)
    if "".join(p.phonemes for p in settled) != phonemes:
        return [whole(phonemes, text, start, len(text) if end is None else end)] if phonemes else []
    return settled


def whole(phonemes: str, text: str, start: int, end: int) -> PhonemeSpan:
    """One piece for text[start:end] without its surrounding whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return PhonemeSpan(phonemes, start, end)


class OriginMap:
    """A rewritten text plus, for each of its characters, the source span it came from."""

    def __init__(self, source: str):
        self.source = source
        self.text = source
        self.origin = [(i, i + 1) for i in range(len(source))]

    def rewrite(self, new: str) -> None:
        """Replace the text by a rewrite of it; changed runs point at what they replaced."""
        origin: list[tuple[int, int]] = []
        matcher = difflib.SequenceMatcher(None, self.text, new, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                origin += self.origin[i1:i2]
            elif j2 > j1:
                if i2 > i1:
                    span = (self.origin[i1][0], self.origin[i2 - 1][1])
                else:  # pure insertion: belongs to the character before it
                    span = origin[-1] if origin else (self.origin[0] if self.origin else (0, 0))
                origin += [span] * (j2 - j1)
        self.text, self.origin = new, origin

    def replace_chars(self, table: dict[str, str]) -> None:
        """Per-character replacements (one char -> a string); offsets follow exactly."""
        text, origin = [], []
        for char, span in zip(self.text, self.origin, strict=True):
            out = table.get(char, char)
            text.append(out)
            origin += [span] * len(out)
        self.text, self.origin = "".join(text), origin

    def strip(self) -> None:
        start = len(self.text) - len(self.text.lstrip())
        end = len(self.text.rstrip())
        self.text, self.origin = self.text[start:end], self.origin[start:end]

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self.origin[start][0], self.origin[end - 1][1]
