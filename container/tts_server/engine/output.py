"""Output processing: a piece's inference results -> the audio as sent and its word timestamps.

Per sentence of a model call (a merged piece holds several): cut the model's own silence
(pauses.py), time each source span by its tokens' predicted durations, then append the pause
its punctuation asks for. Results may come in parts (a windowed job's windows, in order):
`PieceAssembler` returns what each part makes final, so first audio leaves with the first
window; a sentence's timestamps go with the part that ends it. Pure numpy, cheap.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np

from .backend import MS_PER_DURATION_UNIT, SAMPLE_RATE, SAMPLES_PER_DURATION_UNIT, SAMPLES_PER_MS, Inference
from .pauses import Pauses
from .tokens import Piece, Token
from .windows import Loudness, Splicer

PAUSE_SEARCH_FRAMES = 24  # how far before a merged sentence's end its pause is looked for


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
    """Audio as sent and the alignments that part makes final, timed from its first sample (a
    word that began in an earlier part of the same piece starts before 0)."""

    audio: np.ndarray  # float32 mono, 24 kHz
    alignments: list[Alignment]
    engine_seconds: float  # wall time spent in G2P and inference

    @property
    def duration_ms(self) -> int:
        return len(self.audio) * 1000 // SAMPLE_RATE


@dataclass
class _Sentence:
    """Tokens [first, last) of a job, heard in its samples [begin, end), then `gap_ms` of pause."""

    first: int
    last: int
    begin: int
    end: int
    gap_ms: int
    cut_from: int | None = None  # its first sample kept (on the frame grid)
    audible: tuple[int, int] | None = None  # first and last sample above the threshold so far
    scanned: int = 0  # samples of it looked at
    out_at: int = 0  # where its kept audio starts in the piece's audio as sent


@dataclass
class PieceAssembler:
    """A piece's results, as they come (whole jobs, or a windowed job's windows in order)."""

    piece: Piece
    pauses: Pauses
    loudness: Loudness | None = None  # first windows' make-up gain (windows.py)
    _job: int = 0
    _audio: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))  # the current job's so far
    _splicer: Splicer | None = None
    _sentences: list[_Sentence] = field(default_factory=list)  # the current job's, not yet done
    _out: int = 0  # samples of the piece as sent so far (handed out or held below)
    _held: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))  # under 1 ms, for the next part
    _records: list[Alignment] = field(default_factory=list)  # the last one waits: a shared span may continue
    _durations: np.ndarray | None = None  # the current job's

    @property
    def finished(self) -> bool:
        return self._job == len(self.piece.jobs)

    def add(self, results: list[Inference], engine_seconds: float) -> SegmentAudio:
        """The audio these results make final and the alignments that go with it."""
        begin_ms = (self._out - len(self._held)) // SAMPLES_PER_MS
        parts = [self._held]
        for result in results:
            parts += self._take(result)
        audio = np.concatenate(parts)
        whole = len(audio) if self.finished else len(audio) - len(audio) % SAMPLES_PER_MS
        audio, self._held = audio[:whole], audio[whole:]
        ready = self._records if self.finished else self._records[:-1]
        self._records = [] if self.finished else self._records[-1:]
        return SegmentAudio(audio, [a.shifted(-begin_ms) for a in ready], engine_seconds)

    def _take(self, result: Inference) -> list[np.ndarray]:
        job = self._job
        if not self._sentences:
            self._sentences = self._sentences_of(job, result.durations, result.audio)
        if result.window is None:
            self._audio, complete = result.audio, True
        else:
            split = self.piece.jobs[job].split
            # Windows given their voice's statistics come out at its level: no make-up to apply or learn.
            self._splicer = self._splicer or Splicer(split.windows, self.loudness if split.reference is None else None)
            self._audio = np.concatenate([self._audio, self._splicer.add(result.audio)])
            complete = self._splicer.finished
        out = []
        while self._sentences:
            done = self._advance(self._sentences[0], out, complete)
            if not done:
                break
            self._sentences.pop(0)
        if complete:
            self._job, self._audio, self._splicer = job + 1, np.zeros(0, np.float32), None
        return out

    def _advance(self, sentence: _Sentence, out: list[np.ndarray], complete: bool) -> bool:
        """Hand out what is certain of this sentence's audio; True once it is done, pause included."""
        audio, unit, ms = self._audio, SAMPLES_PER_DURATION_UNIT, SAMPLES_PER_MS
        available = sentence.end if complete else min(sentence.end, len(audio))
        looked = max(sentence.begin, sentence.scanned)
        loud = np.flatnonzero(np.abs(self._level(looked, available)) >= 10 ** (self.pauses.audible_db / 20)) + looked
        if loud.size:
            first = sentence.audible[0] if sentence.audible else int(loud[0])
            sentence.audible = (first, int(loud[-1]))
        sentence.scanned = available
        finished = available >= sentence.end
        if sentence.cut_from is None:
            if not finished and (sentence.audible is None
                                 or self.pauses.first_heard(self._level(sentence.audible[0], available)) is None):
                return False  # where the cut goes is known once a sample is heard (Pauses.cut)
            if sentence.audible is None:  # silence only: nothing of it is heard
                sentence.cut_from = sentence.end
            else:
                cut = self.pauses.cut(self._level(sentence.begin, available), sentence.audible[0] - sentence.begin)
                sentence.cut_from = sentence.begin + cut
            sentence.out_at = self._out
        emitted = sentence.cut_from + self._out - sentence.out_at
        if finished:
            last = sentence.audible[1] if sentence.audible else sentence.end - 1
            until = max(emitted, min(sentence.end, -(-(last + 1 + self.pauses.trail_ms * ms) // unit) * unit))
        else:
            until = max(emitted, sentence.audible[1] + 1)
        out.append(audio[emitted:until])
        self._out += until - emitted
        if not finished:
            return False
        kept_ms = (until - sentence.cut_from) // ms
        out.append(self.pauses.padding(sentence.gap_ms))
        self._out += len(out[-1])
        self._finish_records(sentence, kept_ms, self._out // ms)
        return True

    def _level(self, start: int, stop: int) -> np.ndarray:
        """The current job's samples [start, stop) at the level the engine decoded them: the first
        window's make-up undone, so where a sentence is cut does not follow the gain a server has
        learned from its traffic (windows.Loudness), only the audio of this request."""
        level = self._audio[start:stop]
        return level if self._splicer is None else level / self._splicer.made_up(start, start + len(level))

    def _sentences_of(self, job: int, durations: np.ndarray, audio: np.ndarray) -> list[_Sentence]:
        """The job's tokens by the sentence they belong to (a merged piece's breaks), in samples;
        two sentences meet in the middle of the model's pause between them (a merged piece is
        decoded whole, so its audio is all there)."""
        piece, chunk = self.piece, self.piece.chunks[job]
        bounds = np.cumsum(durations) * SAMPLES_PER_DURATION_UNIT  # token k ends at bounds[k + 1]
        which = [bisect.bisect_right(piece.breaks, piece.spans[token.piece].start) for token in chunk]
        job_end = piece.end if job == len(piece.jobs) - 1 else piece.spans[chunk[-1].piece].end
        sentences, first = [], 0
        for k in range(1, len(chunk) + 1):
            if k < len(chunk) and which[k] == which[first]:
                continue
            last_one = k == len(chunk)
            gap_end = job_end if last_one else piece.breaks[which[first]]
            begin = sentences[-1].end if sentences else 0
            end = int(bounds[-1]) if last_one else self._pause_near(audio, int(bounds[k]), begin)
            sentences.append(_Sentence(first, k, begin, end, self.pauses.gap_after(piece.text, gap_end)))
            first = k
        self._durations = durations
        return sentences

    def _pause_near(self, audio: np.ndarray, boundary: int, floor: int) -> int:
        """The middle of the longest silence within PAUSE_SEARCH_FRAMES before `boundary` (the model
        often holds a sentence's pause on its last vowel, before the mark) or a frame after it,
        on the frame grid; `boundary` where there is none."""
        unit = SAMPLES_PER_DURATION_UNIT
        low, high = max(floor, boundary - PAUSE_SEARCH_FRAMES * unit), min(len(audio), boundary + unit)
        step = 5 * SAMPLES_PER_MS
        peaks = np.abs(audio[low : low + (high - low) // step * step]).reshape(-1, step).max(axis=1)
        quiet = np.concatenate([[False], peaks < 10 ** (self.pauses.audible_db / 20), [False]])
        edges = np.flatnonzero(np.diff(quiet.astype(np.int8)))
        runs = list(zip(edges[::2], edges[1::2], strict=False))
        if not runs:
            return boundary
        start, stop = max(runs, key=lambda run: run[1] - run[0])
        middle = low + (start + stop) * step // 2
        return max(floor + unit, round(middle / unit) * unit)

    def _finish_records(self, sentence: _Sentence, kept_ms: int, pause_end_ms: int) -> None:
        piece = self.piece
        chunk = piece.chunks[self._job][sentence.first : sentence.last]
        offset = sentence.out_at // SAMPLES_PER_MS - sentence.cut_from // SAMPLES_PER_MS
        durations = self._durations[sentence.first :]  # the token before `first` ends where it starts
        start_ms = int(np.sum(self._durations[: sentence.first])) * MS_PER_DURATION_UNIT
        records = _align(piece.text, piece.spans, chunk, durations, offset + start_ms)
        low = sentence.out_at // SAMPLES_PER_MS
        records = [a.clipped(low, low + kept_ms) for a in records]
        self._records = _merge_shared_spans(piece.text, self._records + _pause_heard_as_punctuation(records, pause_end_ms))


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
