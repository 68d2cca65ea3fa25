"""Text -> tokens with spans: a sentence through its language's G2P, cut into model-sized jobs.

Each token remembers the phoneme piece (and so the characters) it came from, so durations
map back to words after inference. Blocking CPU work: runs in the text pool, not on the loop.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .g2p.base import G2P, PhonemeSpan


@dataclass(frozen=True)
class Token:
    piece: int  # index of the PhonemeSpan it came from
    id: int


@dataclass(frozen=True, eq=False)
class Job:
    """One model call: token ids (pads excluded), the style row for their count, the speed."""

    ids: tuple[int, ...]
    style: np.ndarray  # (256,)
    speed: float


@dataclass(frozen=True, eq=False)
class Piece:
    """One sentence of a response, through G2P, ready for the model."""

    text: str  # the whole request text: spans index it
    start: int
    end: int
    spans: list[PhonemeSpan]
    chunks: list[list[Token]]  # model-sized, one Job each
    jobs: list[Job]
    g2p_seconds: float


class TextFrontend:
    def __init__(self, g2p: Mapping[str, G2P], vocab: Mapping[str, int], max_tokens: int):
        self._g2p = dict(g2p)
        self._vocab = vocab
        self._max_tokens = max_tokens

    @property
    def languages(self) -> list[str]:
        return sorted(self._g2p)

    def tokenize(self, text: str, start: int, end: int, language: str) -> tuple[list[PhonemeSpan], list[Token]]:
        """G2P of text[start:end]: phoneme spans (indexing the whole text) and their token ids."""
        spans = [PhonemeSpan(p.phonemes, p.start + start, p.end + start) for p in self._g2p[language](text[start:end])]
        vocab = self._vocab
        return spans, [Token(i, vocab[c]) for i, p in enumerate(spans) for c in p.phonemes if c in vocab]

    def prepare(self, text: str, start: int, end: int, language: str, style_pack: np.ndarray, speed: float) -> Piece:
        began = time.perf_counter()
        spans, tokens = self.tokenize(text, start, end, language)
        chunks = _chunks(tokens, spans, self._max_tokens)
        jobs = [Job(tuple(t.id for t in chunk), style_pack[min(len(chunk), len(style_pack)) - 1], speed)
                for chunk in chunks]
        return Piece(text, start, end, spans, chunks, jobs, time.perf_counter() - began)


def _chunks(tokens: list[Token], spans: list[PhonemeSpan], limit: int) -> list[list[Token]]:
    """Split tokens into model-sized chunks, preferring to cut after punctuation or a space."""
    chunks = []
    while len(tokens) > limit:
        cut = next(
            (i for i in range(limit, limit // 2, -1) if not spans[tokens[i - 1].piece].phonemes[-1:].isalpha()),
            limit,
        )
        chunks.append(tokens[:cut])
        tokens = tokens[cut:]
    return chunks + [tokens] if tokens else chunks
