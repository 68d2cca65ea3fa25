"""The engine as the server sees it: languages, voices, and the three steps of a piece.

    prepare   text -> tokens with spans (tokens.py; G2P, blocking: the text pool)
    run       a batch of jobs -> audio and durations (runner.py; only the scheduler calls it)
    assemble  durations -> alignments, silence cut, pauses (output.py)

`synthesize` chains them for one piece on the calling thread (warm-up, tests, tools).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np

from ..wire.errors import FieldError, one_of
from .backend import AcousticBackend
from .g2p.base import G2P, PhonemeSpan
from .languages import VOICE_LETTERS, canonical, default_language, detect
from .output import SegmentAudio, assemble
from .pauses import Pauses
from .runner import ModelRunner
from .tokens import Piece, TextFrontend, Token
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

    def assemble(self, piece: Piece, results, engine_seconds: float) -> SegmentAudio:
        return assemble(piece, results, self.pauses, engine_seconds)

    def synthesize(self, text: str, start: int, end: int, style: np.ndarray, speed: float, language: str) -> SegmentAudio:
        """Audio for text[start:end]; alignments index the whole text."""
        began = time.perf_counter()
        piece = self.prepare(text, start, end, style, speed, language)
        results = self.runner.run(piece.jobs)
        return self.assemble(piece, results, time.perf_counter() - began)
