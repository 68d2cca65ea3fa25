"""Output processing: a piece's inference results -> the audio as sent and its word timestamps.

Per model call: cut the model's own silence (pauses.py), time each source span by its tokens'
predicted durations, then append the pause its punctuation asks for. Pure numpy, cheap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .backend import MS_PER_DURATION_UNIT, SAMPLE_RATE, SAMPLES_PER_MS, Inference
from .pauses import Pauses
from .tokens import Piece, Token


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


def assemble(piece: Piece, results: list[Inference], pauses: Pauses, engine_seconds: float) -> SegmentAudio:
    """The piece's audio as sent (trimmed, with its pauses) and its alignments into the whole text."""
    text, spans = piece.text, piece.spans
    audio, alignments, offset = [], [], 0
    for number, (chunk, result) in enumerate(zip(piece.chunks, results, strict=True)):
        keep_from, keep_to = pauses.trim(result.audio)
        kept_ms = (keep_to - keep_from) // SAMPLES_PER_MS
        records = _align(text, spans, chunk, result.durations, offset - keep_from // SAMPLES_PER_MS)
        records = [a.clipped(offset, offset + kept_ms) for a in records]
        audio.append(result.audio[keep_from:keep_to])
        # The gap after this chunk: by the punctuation it ends with (the piece's own end last).
        gap_end = piece.end if number == len(piece.chunks) - 1 else spans[chunk[-1].piece].end
        audio.append(pauses.padding(pauses.gap_after(text, gap_end)))
        offset += kept_ms + len(audio[-1]) // SAMPLES_PER_MS
        alignments += _pause_heard_as_punctuation(records, offset)
    samples = np.concatenate(audio) if audio else np.zeros(0, np.float32)
    return SegmentAudio(samples, _merge_shared_spans(text, alignments), engine_seconds)


def _align(text: str, spans, chunk: list[Token], durations: np.ndarray, offset_ms: int) -> list[Alignment]:
    """One record per source-backed span, timed by the durations of its tokens.

    durations[0] is the leading pad (initial silence); token k lasts durations[k + 1].
    """
    ends = np.cumsum(durations) * MS_PER_DURATION_UNIT + offset_ms
    positions_of: dict[int, list[int]] = {}
    for k, token in enumerate(chunk):
        positions_of.setdefault(token.piece, []).append(k + 1)
    records = []
    for span_index, positions in positions_of.items():
        span = spans[span_index]
        if span.start == span.end:
            continue
        start_ms = int(ends[positions[0] - 1])
        end_ms = int(ends[positions[-1]])
        records.append(Alignment(text[span.start : span.end], span.start, span.end, start_ms, end_ms))
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
