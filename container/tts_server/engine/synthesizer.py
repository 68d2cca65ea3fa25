"""Text segment -> audio and timestamps: G2P, tokenization, the acoustic backend, alignment.

Blocking by design (G2P and inference are CPU work); the session engine calls it from a
worker thread, one segment at a time, so audio leaves as soon as each segment exists.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import FieldError, one_of
from .backend import SAMPLE_RATE, SAMPLES_PER_DURATION_UNIT, AcousticBackend
from .g2p.base import G2P, PhonemeSpan
from .pauses import Pauses
from .languages import DEFAULT_LANGUAGE, VOICE_LETTERS, canonical, implied_by_voice
from .voices import VoiceBook

MS_PER_DURATION_UNIT = SAMPLES_PER_DURATION_UNIT * 1000 // SAMPLE_RATE  # 25
SAMPLES_PER_MS = SAMPLE_RATE // 1000


@dataclass(frozen=True)
class Alignment:
    """request_text[start_char:end_char] is heard from start_ms to end_ms of the segment."""

    text: str
    start_char: int
    end_char: int
    start_ms: int
    end_ms: int

    def shifted(self, ms: int) -> Alignment:
        return Alignment(self.text, self.start_char, self.end_char, self.start_ms + ms, self.end_ms + ms)

    def clipped(self, low: int, high: int) -> Alignment:
        """Times kept inside [low, high]: a word in cut silence shrinks to the cut's edge."""
        start, end = min(max(self.start_ms, low), high), min(max(self.end_ms, low), high)
        return Alignment(self.text, self.start_char, self.end_char, start, end)


@dataclass(frozen=True)
class SegmentAudio:
    audio: np.ndarray  # float32 mono, 24 kHz
    alignments: list[Alignment]
    engine_seconds: float  # wall time spent in G2P and inference

    @property
    def duration_ms(self) -> int:
        return len(self.audio) * 1000 // SAMPLE_RATE


@dataclass
class _Token:
    piece: int  # index of the PhonemeSpan it came from
    id: int


class Synthesizer:
    def __init__(self, backend: AcousticBackend, g2p: Mapping[str, G2P], pauses: Pauses | None = None):
        self.backend = backend
        self.pauses = pauses or Pauses()
        self._g2p = dict(g2p)
        voices, rows = backend.voices, backend.max_tokens
        self._books = {lang: VoiceBook(voices, rows, VOICE_LETTERS.get(lang)) for lang in self._g2p}

    @property
    def languages(self) -> list[str]:
        return sorted(self._g2p)

    def language(self, requested: str | None, speaker_id: str | None = None) -> str:
        """The canonical language: as requested (aliases accepted), else implied by the voice id's
        first letter, else the default; FieldError names the languages this engine speaks."""
        if requested is None:
            implied = implied_by_voice(speaker_id)
            requested = implied if implied in self._g2p else DEFAULT_LANGUAGE
        return canonical(requested, self.languages)

    def voice_book(self, language: str) -> VoiceBook:
        if language not in self._books:
            raise FieldError("language", one_of(self.languages))
        return self._books[language]

    def tokenize(self, text: str, start: int, end: int, language: str) -> tuple[list[PhonemeSpan], list[_Token]]:
        """G2P of text[start:end]: phoneme pieces (spans index the whole text) and their token ids."""
        pieces = [PhonemeSpan(p.phonemes, p.start + start, p.end + start) for p in self._g2p[language](text[start:end])]
        vocab = self.backend.vocab
        return pieces, [_Token(i, vocab[c]) for i, p in enumerate(pieces) for c in p.phonemes if c in vocab]

    def synthesize(self, text: str, start: int, end: int, style: np.ndarray, speed: float, language: str) -> SegmentAudio:
        """Audio for text[start:end]; alignments index the whole text."""
        began = time.perf_counter()
        pieces, tokens = self.tokenize(text, start, end, language)
        audio, alignments, offset = [], [], 0
        batches = _batches(tokens, pieces, self.backend.max_tokens)
        for number, batch in enumerate(batches):
            ids = [t.id for t in batch]
            pack_row = style[min(len(ids), len(style)) - 1]
            result = self.backend.infer(ids, pack_row, speed)
            keep_from, keep_to = self.pauses.trim(result.audio)
            kept_ms = (keep_to - keep_from) // SAMPLES_PER_MS
            records = _align(text, pieces, batch, result.durations, offset - keep_from // SAMPLES_PER_MS)
            records = [a.clipped(offset, offset + kept_ms) for a in records]
            audio.append(result.audio[keep_from:keep_to])
            # The gap after this batch: by the punctuation it ends with (the segment's own end last).
            gap_end = end if number == len(batches) - 1 else pieces[batch[-1].piece].end
            audio.append(self.pauses.padding(self.pauses.gap_after(text, gap_end)))
            offset += kept_ms + len(audio[-1]) // SAMPLES_PER_MS
            alignments += _pause_heard_as_punctuation(records, offset)
        samples = np.concatenate(audio) if audio else np.zeros(0, np.float32)
        return SegmentAudio(samples, _merge_shared_spans(text, alignments), time.perf_counter() - began)


def _batches(tokens: list[_Token], pieces: list[PhonemeSpan], limit: int) -> list[list[_Token]]:
    """Split tokens into model-sized batches, preferring to cut after punctuation or a space."""
    batches = []
    while len(tokens) > limit:
        cut = next(
            (i for i in range(limit, limit // 2, -1) if not pieces[tokens[i - 1].piece].phonemes[-1:].isalpha()),
            limit,
        )
        batches.append(tokens[:cut])
        tokens = tokens[cut:]
    return batches + [tokens] if tokens else batches


def _align(text: str, pieces, batch: list[_Token], durations: np.ndarray, offset_ms: int) -> list[Alignment]:
    """One record per source-backed piece, timed by the durations of its tokens.

    durations[0] is the leading pad (initial silence); token k lasts durations[k + 1].
    """
    ends = np.cumsum(durations) * MS_PER_DURATION_UNIT + offset_ms
    spans: dict[int, list[int]] = {}
    for k, token in enumerate(batch):
        spans.setdefault(token.piece, []).append(k + 1)
    records = []
    for piece_index, positions in spans.items():
        piece = pieces[piece_index]
        if piece.start == piece.end:
            continue
        start_ms = int(ends[positions[0] - 1])
        end_ms = int(ends[positions[-1]])
        records.append(Alignment(text[piece.start : piece.end], piece.start, piece.end, start_ms, end_ms))
    return records


def _pause_heard_as_punctuation(records: list[Alignment], pause_end_ms: int) -> list[Alignment]:
    """The pause after a piece is its closing punctuation's time: "。" lasts until the next word."""
    if records and not any(c.isalnum() for c in records[-1].text):
        last = records[-1]
        records[-1] = Alignment(last.text, last.start_char, last.end_char, last.start_ms, pause_end_ms)
    return records


def _merge_shared_spans(text: str, records: list[Alignment]) -> list[Alignment]:
    """Words read out of one source span ("2026" -> ni sen ni juu roku) become one record."""
    merged: list[Alignment] = []
    for record in records:
        if merged and record.start_char < merged[-1].end_char:
            last = merged.pop()
            end_char = max(last.end_char, record.end_char)
            record = Alignment(text[last.start_char : end_char], last.start_char, end_char, last.start_ms, record.end_ms)
        merged.append(record)
    return merged
