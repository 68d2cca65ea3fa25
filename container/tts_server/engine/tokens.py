"""Text -> tokens with spans: a sentence through its language's G2P, cut into model-sized jobs.

Each token remembers the phoneme piece (and so the characters) it came from, so durations
map back to words after inference. Blocking CPU work: runs in the text pool, not on the loop.
Sentences already through G2P merge into one piece (`merge`) without running G2P again, so a
longer piece has exactly the tokens, and so the timestamps, of its sentences.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from . import windows
from .backend import Front
from .g2p.base import G2P, PhonemeSpan

PAD_FRAMES = 36  # frames of a piece's leading pad and final punctuation, about (for estimates)
FRAMES_PER_TOKEN = 3  # frames a token lasts, about (for estimates until the durations are known)


@dataclass(frozen=True)
class Token:
    piece: int  # index of the PhonemeSpan it came from
    id: int


@dataclass(eq=False)
class Split:
    """A job decoded in windows: its front part's result and windows once the first run made them."""

    rtf: float  # the engine's speed the windows are sized for (windows.plan)
    reference: windows.Reference | None = None  # its voice's, for each window; None once the piece proves unfit
    front: Front | None = None
    windows: list[windows.Window] | None = None
    front_seconds: float = 0.0  # the front part's model time


@dataclass(frozen=True, eq=False)
class Job:
    """One model call: token ids (pads excluded), the style row for their count, the speed; for a
    windowed job, one window of its split."""

    ids: tuple[int, ...]
    style: np.ndarray  # (256,)
    speed: float
    split: Split | None = None
    window: int = 0
    later: bool = False  # a response's later piece: decoded over its speech only (speech_span.py)

    @property
    def work(self) -> int:
        """Frames to decode: what the run's model time scales with (an estimate until known)."""
        split = self.split
        if split is not None and split.windows is not None:
            window = split.windows[self.window]
            return window.end - window.start
        frames = PAD_FRAMES + FRAMES_PER_TOKEN * len(self.ids)
        if split is None:
            return frames
        first = windows.plan(np.array([PAD_FRAMES // 3, frames - PAD_FRAMES // 3]), split.rtf)[0]
        return first.end - first.start


@dataclass(frozen=True, eq=False)
class Piece:
    """One sentence of a response (or several, merged), through G2P, ready for the model."""

    text: str  # the whole request text: spans index it
    start: int
    end: int
    spans: list[PhonemeSpan]
    chunks: list[list[Token]]  # model-sized, one Job each
    jobs: list[Job]
    g2p_seconds: float
    breaks: tuple[int, ...] = field(default=())  # where sentences end inside it (text offsets), merged ones

    def parts(self) -> Iterator[list[Job]]:
        """Its model runs in order: all its jobs together, or a windowed job's windows one by one
        (how many is known once the first has run)."""
        split = self.jobs[0].split if self.jobs else None
        if split is None:
            yield self.jobs
            return
        yield self.jobs[:1]
        for index in range(1, len(split.windows or ())):
            yield [replace(self.jobs[0], window=index)]


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
        return self._piece(text, start, end, spans, tokens, style_pack, speed, time.perf_counter() - began)

    def merge(self, pieces: Sequence[Piece], style_pack: np.ndarray, speed: float) -> Piece:
        """Consecutive pieces of one text as one: their spans and tokens in order, cut anew into jobs."""
        spans, tokens = [], []
        for piece in pieces:
            tokens += [Token(len(spans) + t.piece, t.id) for chunk in piece.chunks for t in chunk]
            spans += piece.spans
        first, last = pieces[0], pieces[-1]
        breaks = tuple(b for p in pieces for b in (*p.breaks, p.end))[:-1]
        return self._piece(first.text, first.start, last.end, spans, tokens, style_pack, speed,
                           sum(p.g2p_seconds for p in pieces), breaks)

    def _piece(self, text, start, end, spans, tokens, style_pack, speed, seconds, breaks=()) -> Piece:
        chunks = _chunks(tokens, spans, self._max_tokens)
        jobs = [Job(tuple(t.id for t in chunk), style_pack[min(len(chunk), len(style_pack)) - 1], speed)
                for chunk in chunks]
        return Piece(text, start, end, spans, chunks, jobs, seconds, breaks)


def windowed(piece: Piece, rtf: float, reference: windows.Reference | None = None) -> Piece:
    """The piece with its one job decoded in windows sized for an engine of real-time factor rtf,
    each window given its voice's `reference` statistics where they fit it (Reference.fits; a piece
    of several jobs, more than the model's context, stays as it is)."""
    if len(piece.jobs) != 1:
        return piece
    return replace(piece, jobs=[replace(piece.jobs[0], split=Split(rtf, reference))])


def later(piece: Piece) -> Piece:
    """The piece as a response's later piece: decoded over its speech only where the runner does
    that (runner.py); a first piece is decoded whole, in windows or not (its first audio, and the
    windows' make-up, are measured against that)."""
    return replace(piece, jobs=[replace(job, later=True) for job in piece.jobs])


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
