"""The engine as the server sees it: languages, voices, and the three steps of a piece.

    prepare   text -> tokens with spans (tokens.py; G2P, blocking: the text pool); `merge`
              joins prepared sentences into one piece, `windowed` has one decoded in windows
              (given its voice's reference statistics once `learn_norms` recorded them)
    run       a batch of jobs -> audio and durations (runner.py; only the scheduler calls it)
    assemble  durations -> alignments, silence cut, pauses (output.py); a piece run in parts
              (piece.parts()) is assembled part by part, each call returning what it adds

`synthesize` chains them for one piece on the calling thread (warm-up, tests, tools).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Mapping, Sequence

import numpy as np

from ..wire.errors import FieldError, one_of
from .backend import AcousticBackend, Inference
from .g2p.base import G2P, PhonemeSpan
from .languages import VOICE_LETTERS, canonical, default_language, detect
from .output import PieceAssembler, SegmentAudio
from .pauses import Pauses
from .runner import ModelRunner
from .tokens import Piece, TextFrontend, Token, windowed
from .windows import Loudness, Reference
from .voices import VoiceBook


class Synthesizer:
    def __init__(self, backend: AcousticBackend, g2p: Mapping[str, G2P], pauses: Pauses | None = None,
                 max_batch: int | None = None):
        self.backend = backend
        self.pauses = pauses or Pauses()
        self.frontend = TextFrontend(g2p, backend.vocab, backend.max_tokens)
        self.runner = ModelRunner(backend, max_batch)
        voices, rows = backend.voices, backend.max_tokens
        self._books = {lang: VoiceBook(voices, rows, VOICE_LETTERS.get(lang)) for lang in self.frontend.languages}
        self._assemblers: weakref.WeakKeyDictionary[Piece, PieceAssembler] = weakref.WeakKeyDictionary()
        self.loudness = Loudness()  # how much a first window is made up (learned at its joins)
        self.references: dict[str, Reference] = {}  # Kokoro voice -> its reference statistics (learn_norms)

    @property
    def languages(self) -> list[str]:
        return self.frontend.languages

    def language(self, requested: str | None) -> str:
        """The canonical language: as requested (aliases accepted), else the default; FieldError
        names the languages this engine speaks."""
        return canonical(default_language(self.languages) if requested is None else requested, self.languages)

    def detect(self, text: str, hint: str | None = None) -> str:
        """The language `text` is written in, of those this engine speaks (languages.detect)."""
        return detect(text, self.languages, hint)

    def voice_book(self, language: str) -> VoiceBook:
        if language not in self._books:
            raise FieldError("language", one_of(self.languages))
        return self._books[language]

    def tokenize(self, text: str, start: int, end: int, language: str) -> tuple[list[PhonemeSpan], list[Token]]:
        return self.frontend.tokenize(text, start, end, language)

    def prepare(self, text: str, start: int, end: int, style: np.ndarray, speed: float, language: str) -> Piece:
        return self.frontend.prepare(text, start, end, language, style, speed)

    def merge(self, pieces: Sequence[Piece], style: np.ndarray, speed: float) -> Piece:
        return pieces[0] if len(pieces) == 1 else self.frontend.merge(pieces, style, speed)

    def windowed(self, piece: Piece, rtf: float, voice: str | None = None) -> Piece:
        """The piece decoded in windows, given the reference statistics of `voice` (a Kokoro voice
        id) where they were learned and fit the piece (windows.Reference.fits); a blend or a custom
        style has none: its windows keep their own statistics, made up for level (windows.Loudness)."""
        return windowed(piece, rtf, self.references.get(voice))

    def learn_norms(self, voice: str, piece: Piece) -> list[Inference]:
        """Record `voice`'s reference statistics, those of the whole decode of `piece` (one job, in
        the voice's style); returns that decode, as runner.run would."""
        job = piece.jobs[0]
        front = self.backend.front(job.ids, job.style, job.speed)
        audio, statistics = self.backend.statistics(front)
        self.references[voice] = Reference(statistics, front.frames)
        return [Inference(audio=audio, durations=front.durations)]

    def assemble(self, piece: Piece, results, engine_seconds: float) -> SegmentAudio:
        """What these results (the piece's next part) add to its audio as sent."""
        assembler = self._assemblers.get(piece)
        if assembler is None:
            assembler = self._assemblers[piece] = PieceAssembler(piece, self.pauses, self.loudness)
        segment = assembler.add(results, engine_seconds)
        if assembler.finished:
            del self._assemblers[piece]
        return segment

    def synthesize(self, text: str, start: int, end: int, style: np.ndarray, speed: float, language: str,
                   rtf: float | None = None, voice: str | None = None) -> SegmentAudio:
        """Audio for text[start:end]; alignments index the whole text. With `rtf`, decoded in
        windows sized for that speed, as a response's first piece is (windows.py), in `voice`
        (the Kokoro voice id of `style`, whose reference statistics the windows are given)."""
        began = time.perf_counter()
        piece = self.prepare(text, start, end, style, speed, language)
        if rtf is not None:
            piece = self.windowed(piece, rtf, voice)
        segments = [self.assemble(piece, self.runner.run(jobs), 0.0) for jobs in piece.parts()]
        audio = np.concatenate([segment.audio for segment in segments])
        alignments, at = [], 0
        for segment in segments:
            alignments += [a.shifted(at) for a in segment.alignments]
            at += segment.duration_ms
        return SegmentAudio(audio, alignments, time.perf_counter() - began)
