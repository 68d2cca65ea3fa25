"""Mandarin G2P: misaki's ZHG2P as kokoro's KPipeline builds it for Kokoro-82M v1.0, with offsets.

For v1.0 misaki runs its legacy path: numbers to characters (cn2an), full-width punctuation
to ASCII plus a space, then jieba words read through pypinyin, other runs copied as they
are. The same steps are redone here on an OriginMap so each jieba word (our timestamp unit)
points at the source characters it was read from, "2024" included.
"""

from __future__ import annotations

import logging
import re

from .base import PhonemeSpan
from .spans import OriginMap, separator, settle

_HAN_OR_NOT = re.compile("[\u4e00-\u9fff]+|[^\u4e00-\u9fff]+")
_SPACES_OR_NOT = re.compile(r"\s+|\S+")
_LINES = re.compile(r"[^\n]+")


class ChineseG2P:
    language = "zh"

    def __init__(self) -> None:
        import cn2an
        import jieba
        from misaki import zh

        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()  # builds its dictionary now (about a second), not on the first request
        self._cn2an, self._jieba, self._zh = cn2an, jieba, zh.ZHG2P
        self._reference = zh.ZHG2P(version=None)  # what kokoro speaks; our pieces must spell it
        self._punctuation = _punctuation_table(zh.ZHG2P.map_punctuation)

    def __call__(self, text: str) -> list[PhonemeSpan]:
        pieces: list[PhonemeSpan] = []
        for line in _LINES.finditer(text):  # KPipeline splits on newlines first
            line_pieces = self._line(line.group())
            if pieces and line_pieces:
                pieces.append(separator(pieces))
            pieces += [PhonemeSpan(p.phonemes, p.start + line.start(), p.end + line.start()) for p in line_pieces]
        return settle(pieces, "".join(p.phonemes for p in pieces), text)

    def _line(self, text: str) -> list[PhonemeSpan]:
        if not text.strip():
            return []
        mapped = OriginMap(text)
        mapped.rewrite(self._cn2an.transform(text, "an2cn"))
        mapped.replace_chars(self._punctuation)
        mapped.strip()
        pieces: list[PhonemeSpan] = []
        for run in _HAN_OR_NOT.finditer(mapped.text):
            if "\u4e00" <= run.group()[0] <= "\u9fff":
                cursor = run.start()
                for i, word in enumerate(self._jieba.lcut(run.group(), cut_all=False)):
                    if i:
                        pieces.append(separator(pieces))
                    phonemes = self._zh.word2ipa(word).replace(chr(815), "")
                    pieces.append(PhonemeSpan(phonemes, *mapped.span(cursor, cursor + len(word))))
                    cursor += len(word)
            else:  # copied as it is: spaces become separators, the rest keeps its source
                for part in _SPACES_OR_NOT.finditer(run.group()):
                    a, b = run.start() + part.start(), run.start() + part.end()
                    if part.group().isspace():
                        pieces.append(separator(pieces, part.group()))
                    else:
                        pieces.append(PhonemeSpan(part.group().replace(chr(815), ""), *mapped.span(a, b)))
        return settle(pieces, self._reference(text)[0], text)


def _punctuation_table(map_punctuation) -> dict[str, str]:
    """misaki's map_punctuation is a chain of one-character replaces: read it off per char."""
    marks = "、，。．！：；？«»《》「」【】（）"
    return {c: map_punctuation(f"x{c}x")[1:-1] for c in marks}
