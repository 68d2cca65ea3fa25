"""English G2P (en-US, en-GB): misaki's, built as kokoro's KPipeline builds it, with offsets.

misaki tokenizes with spaCy and returns tokens whose text and whitespace, joined, give back
its (preprocessed) input, so each token's place in the source is found by walking the text.
Phonemes are joined as KPipeline joins them: token, then one space if whitespace followed.
"""

from __future__ import annotations

import re
import threading

from .base import PhonemeSpan
from .spans import separator, settle, whole
from . import spacy_model

_LINES = re.compile(r"[^\n]+")


class EnglishG2P:
    def __init__(self, british: bool = False):
        spacy_model.install()  # before misaki imports spaCy's model: never a download
        from misaki import en, espeak

        self.language = "en-GB" if british else "en-US"
        self._link = en.LINK_REGEX
        self._g2p = en.G2P(trf=False, british=british, fallback=espeak.EspeakFallback(british=british), unk="")
        self._lock = threading.Lock()  # espeak (the fallback) keeps global state

    def __call__(self, text: str) -> list[PhonemeSpan]:
        pieces: list[PhonemeSpan] = []
        # KPipeline strips the whole text, then splits it on newlines: the first and last lines
        # lose their outer blanks, inner ones keep theirs (misaki reads "- " and "-" differently).
        begin, end = len(text) - len(text.lstrip()), len(text.rstrip())
        for line in _LINES.finditer(text, begin, end):
            line_pieces = self._line(line.group(), line.start()) if line.group().strip() else []
            if pieces and line_pieces:
                pieces.append(separator(pieces))
            pieces += line_pieces
        return settle(pieces, "".join(p.phonemes for p in pieces), text)

    def _line(self, line: str, offset: int) -> list[PhonemeSpan]:
        prepared, origin = self._preprocess(line, offset)
        with self._lock:
            _, tokens = self._g2p(line)
        pieces: list[PhonemeSpan] = []
        cursor, glued = 0, None
        for token in tokens:
            place = _locate(prepared, cursor, token.text)
            if place is None:  # misaki rewrote the text beyond recognition: one piece for the line
                phonemes = "".join((t.phonemes or "") + (" " if t.whitespace else "") for t in tokens).strip()
                piece = whole(phonemes, line, 0, len(line))
                return [PhonemeSpan(phonemes, piece.start + offset, piece.end + offset)] if phonemes else []
            start, end = place
            cursor = end
            if token.phonemes:
                first = glued if glued is not None else origin[start]
                pieces.append(PhonemeSpan(token.phonemes, first, origin[end - 1] + 1))
                glued = None
            elif not token.whitespace and glued is None:
                glued = origin[start]  # a silent "$" in "$5": its word starts here
            if token.whitespace:
                pieces.append(separator(pieces))
                glued = None
        while pieces and pieces[0].phonemes == " ":
            pieces.pop(0)
        while pieces and pieces[-1].phonemes == " ":
            pieces.pop()
        return pieces

    def _preprocess(self, line: str, offset: int) -> tuple[str, list[int]]:
        """misaki's G2P.preprocess (strip, markdown links keep their text) with offsets."""
        start = len(line) - len(line.lstrip())
        stripped = line[start:]
        prepared, origin, last = "", [], 0
        for match in self._link.finditer(stripped):
            prepared += stripped[last : match.start()] + match.group(1)
            origin += list(range(last, match.start())) + list(range(match.start(1), match.end(1)))
            last = match.end()
        prepared += stripped[last:]
        origin += list(range(last, len(stripped)))
        return prepared, [offset + start + i for i in origin]


def _locate(text: str, cursor: int, token: str) -> tuple[int, int] | None:
    """Where a token sits at or after cursor: verbatim, or with characters misaki dropped
    from a merged token ("9['b" is read as "9[b"); None when it is not there at all."""
    if not token:
        return None
    while cursor < len(text) and text[cursor].isspace() and not token[:1].isspace():
        cursor += 1
    if text.startswith(token, cursor):
        return cursor, cursor + len(token)
    i, start = cursor, None
    for char in token:
        found = text.find(char, i, i + 8)
        if found < 0:
            return None
        start = found if start is None else start
        i = found + 1
    return (start, i) if start is not None else None
