"""espeak-ng G2P for es, fr, hi, it and pt-BR, as kokoro's KPipeline runs it, with offsets.

espeak reads a whole sentence at once (French liaison, stress and numbers depend on the
neighbours), so the phonemes come from one call on the whole text, exactly as kokoro makes
them. espeak does not say which word produced which phonemes: its output words are matched
to the source words by a small alignment, guided by how each source word reads on its own
("2024" reads as three words, a Hindi danda as none).
"""

from __future__ import annotations

import difflib
import re
import threading

from .base import PhonemeSpan
from .spans import separator, settle, trim_marks

# Our language code -> espeak-ng voice, as kokoro's LANG_CODES names them.
VOICES = {"es": "es", "fr": "fr-fr", "hi": "hi", "it": "it", "pt-BR": "pt-br"}

_WORDS = re.compile(r"\S+")
_LINES = re.compile(r"[^\n]+")
_STRESS = str.maketrans("", "", "ˈˌː")
# Marks phonemizer keeps (preserve_punctuation) and kokoro's rewrites of them.
_PUNCTUATION = set(';:,.!?¡¿—…"«»“”(){}[]')


class EspeakG2P:
    def __init__(self, language: str):
        from misaki import espeak

        self.language = language
        self._g2p = espeak.EspeakG2P(language=VOICES[language])
        self._lock = threading.Lock()  # one espeak instance: calls must not interleave

    def __call__(self, text: str) -> list[PhonemeSpan]:
        pieces: list[PhonemeSpan] = []
        for line in _LINES.finditer(text):  # KPipeline splits on newlines first
            if not line.group().strip():
                continue
            line_pieces = self._line(text, line.start(), line.end())
            if pieces and line_pieces:
                pieces.append(separator(pieces))
            pieces += line_pieces
        return settle(pieces, "".join(p.phonemes for p in pieces), text)

    def _line(self, text: str, start: int, end: int) -> list[PhonemeSpan]:
        words = [m.span() for m in _WORDS.finditer(text, start, end)]
        with self._lock:
            phonemes = self._g2p(text[start:end].strip())[0]
            alone = [self._g2p(text[a:b])[0] for a, b in words]
        heard = phonemes.split(" ")
        try:
            groups = _align([a.split() for a in alone], heard)
        except ValueError:
            return settle([], phonemes, text, start, end)
        pieces: list[PhonemeSpan] = []
        for (a, b), group in zip(words, groups, strict=True):
            if group:
                if pieces:
                    pieces.append(separator(pieces))
                pieces += _word_pieces(text, a, b, " ".join(group))
        return settle(pieces, phonemes, text, start, end)


def _cost(expected: str, heard: str) -> int:
    """Characters of either side left unmatched (stress and length marks ignored)."""
    a, b = expected.translate(_STRESS), heard.translate(_STRESS)
    matched = sum(block.size for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
    return len(a) + len(b) - 2 * matched


def _align(alone: list[list[str]], heard: list[str]) -> list[list[str]]:
    """Give each source word a run (maybe empty) of the heard words, all used, in order."""
    n, m = len(alone), len(heard)
    if sum(map(len, alone)) == m:  # each word reads the same number of words in context
        groups, k = [], 0
        for words in alone:
            groups.append(heard[k : k + len(words)])
            k += len(words)
        return groups
    # Dynamic programming over a band around where each word is expected to end.
    inf = float("inf")
    ends = [0]
    for words in alone:
        ends.append(ends[-1] + len(words))
    slack = abs(m - ends[-1]) + 3
    best = [[inf] * (m + 1) for _ in range(n + 1)]
    choice = [[0] * (m + 1) for _ in range(n + 1)]
    best[0][0] = 0
    for i in range(1, n + 1):
        expected, count = " ".join(alone[i - 1]), len(alone[i - 1])
        for j in range(max(0, ends[i] - slack), min(m, ends[i] + slack) + 1):
            for k in range(max(0, count - 2), min(j, count + 2) + 1):
                if best[i - 1][j - k] == inf:
                    continue
                cost = best[i - 1][j - k] + _cost(expected, " ".join(heard[j - k : j]))
                if cost < best[i][j]:
                    best[i][j], choice[i][j] = cost, k
    if best[n][m] == inf:
        raise ValueError("no alignment")  # settle() falls back to one piece
    groups, j = [], m
    for i in range(n, 0, -1):
        k = choice[i][j]
        groups.append(heard[j - k : j])
        j -= k
    return groups[::-1]


def _word_pieces(text: str, start: int, end: int, phonemes: str) -> list[PhonemeSpan]:
    """The word, with leading and trailing punctuation as pieces of their own when read."""
    core_start, core_end = trim_marks(text, start, end)
    lead = len(phonemes) - len(phonemes.lstrip("".join(_PUNCTUATION)))
    trail = len(phonemes) - len(phonemes.rstrip("".join(_PUNCTUATION)))
    if lead + trail >= len(phonemes) or core_start == start and core_end == end:
        return [PhonemeSpan(phonemes, start, end)]
    pieces = []
    if lead and core_start > start:
        pieces.append(PhonemeSpan(phonemes[:lead], start, core_start))
    else:
        lead = 0
    if not (trail and core_end < end):
        trail = 0
    pieces.append(PhonemeSpan(phonemes[lead : len(phonemes) - trail], core_start, core_end))
    if trail:
        pieces.append(PhonemeSpan(phonemes[len(phonemes) - trail :], core_end, end))
    return pieces
