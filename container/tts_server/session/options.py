"""A session's negotiated defaults, and the requests built from them with per-response overrides."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..audio.formats import OutputSpec, negotiate
from ..engine.synthesizer import Synthesizer
from ..engine.voice_policy import VoicePolicy
from ..engine.voices import VoiceBook
from .request import ResponseRequest, Voice


@dataclass(frozen=True)
class SessionOptions:
    language: str
    speaker_id: str
    speed: float
    output: OutputSpec
    book: VoiceBook
    style: np.ndarray  # the session speaker's style pack (custom vector or resolved speaker_id)
    voice: str  # the Kokoro voice (or blend) that speaks: what the client named, or the closest one
    policy: VoicePolicy

    @classmethod
    def negotiate(
        cls,
        synthesizer: Synthesizer,
        *,
        language: str | None = None,
        speaker_id: str = "default",
        format: str = "pcm_f32",
        sample_rate: int | None = None,
        speed: float = 1.0,
        custom_style: str | None = None,
        policy: VoicePolicy | None = None,
    ) -> SessionOptions:
        """Raises FieldError naming the first field the server cannot serve. Without a language,
        a Kokoro voice id implies its own ('af_heart' -> en-US); else the default (ja). A voice
        the engine lacks speaks as the policy decides (engine/voice_policy.py)."""
        policy = policy or VoicePolicy()
        language = synthesizer.language(language, policy.alias(speaker_id))
        book = synthesizer.voice_book(language)
        output = negotiate(format, sample_rate)
        if custom_style:
            return cls(language, speaker_id, speed, output, book, book.custom(custom_style), "custom", policy)
        choice = policy.choose(book, speaker_id)
        return cls(language, speaker_id, speed, output, book, choice.style, choice.voice, policy)

    def request(
        self,
        text: str,
        *,
        response_id: str | None = None,
        speaker_id: str | None = None,
        speed: float | None = None,
        with_timestamps: bool = False,
        max_length_ms: int | None = None,
    ) -> ResponseRequest:
        style = self.policy.choose(self.book, speaker_id).style if speaker_id else self.style
        voice = Voice(self.language, style, self.speed if speed is None else speed)
        extra = {"response_id": response_id} if response_id else {}
        return ResponseRequest(text, voice, self.output, with_timestamps, max_length_ms, **extra)
