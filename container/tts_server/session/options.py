"""The one voice negotiation of every surface: a session's (or one HTTP request's) negotiated
defaults, and the requests built from them with per-response overrides.

The language is the client's where its protocol names one; else each text's own (its script,
then the engine's languages: engine/languages.py), never a voice's. Who speaks is decided per
language by the voice policy, with the family's names (engine/voice_policy.py). Errors name
each field as the family's clients spell it (`fields`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..audio.formats import OutputSpec, negotiate
from ..engine.languages import default_language
from ..engine.synthesizer import Synthesizer
from ..engine.voice_policy import NO_NAMES, VoiceChoice, VoiceNames, VoicePolicy
from ..wire.errors import FieldError
from .request import ResponseRequest, Voice


@dataclass(frozen=True)
class SessionOptions:
    synthesizer: Synthesizer
    policy: VoicePolicy
    names: VoiceNames  # the family's voice names
    language: str | None  # the client's (canonical); None: each text's own
    speaker_id: str | None  # as the client named it; None: the family's default voice
    speed: float
    output: OutputSpec
    custom_style: str | None = None  # spk_ref_audio_tokens
    fields: Mapping[str, str] = field(default_factory=dict)  # our field names -> the client's
    _voices: dict[str, VoiceChoice] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def negotiate(
        cls,
        synthesizer: Synthesizer,
        *,
        language: str | None = None,
        speaker_id: str | None = None,
        format: str = "pcm_f32",
        sample_rate: int | None = None,
        speed: float = 1.0,
        custom_style: str | None = None,
        policy: VoicePolicy | None = None,
        names: VoiceNames = NO_NAMES,
        fields: Mapping[str, str] | None = None,
    ) -> SessionOptions:
        """Raises FieldError naming the first field the server cannot serve, as the client spells it.
        The voice is checked now in the language it would most likely speak, so a name no book
        knows is refused at once rather than on every response."""
        fields = dict(fields or {})
        with _named(fields, speaker_id):
            output = negotiate(format, sample_rate)
            fixed = None if language is None else synthesizer.language(language)
            options = cls(synthesizer, policy or VoicePolicy(), names, fixed, speaker_id, speed, output, custom_style,
                          fields)
            options.voice_for(options.likely_language)
        return options

    @property
    def likely_language(self) -> str:
        """The client's language, else the one the voice it named implies, else the default."""
        hint = self.policy.hint(self.speaker_id)
        offered = self.synthesizer.languages
        return self.language or (hint if hint in offered else default_language(offered))

    def language_of(self, text: str) -> str:
        if self.language is not None:
            return self.language
        with _named(self.fields, self.speaker_id):
            return self.synthesizer.detect(text, self.policy.hint(self.speaker_id))

    def voice_for(self, language: str, speaker_id: str | None = None) -> VoiceChoice:
        """Who speaks in `language`: the session's voice, or a per-response `speaker_id`."""
        if speaker_id is None and language in self._voices:
            return self._voices[language]
        book = self.synthesizer.voice_book(language)
        with _named(self.fields, speaker_id or self.speaker_id):
            if self.custom_style and speaker_id is None:
                choice = VoiceChoice("custom", "custom", "custom", book.custom(self.custom_style))
            else:
                choice = self.policy.choose(book, language, speaker_id or self.speaker_id, self.names)
        if speaker_id is None:
            self._voices[language] = choice
        return choice

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
        language = self.language_of(text)
        choice = self.voice_for(language, speaker_id)
        voice = Voice(language, choice.style, self.speed if speed is None else speed, choice.voice)
        extra = {"response_id": response_id} if response_id else {}
        return ResponseRequest(text, voice, self.output, with_timestamps, max_length_ms, field_names=self.fields, **extra)


@contextmanager
def _named(fields: Mapping[str, str], speaker_id: str | None) -> Iterator[None]:
    """A FieldError names the field as the client spelt it (and, for the voice, what it sent)."""
    try:
        yield
    except FieldError as error:
        message = error.message + (f", got {speaker_id!r}" if error.field == "speaker_id" and speaker_id else "")
        raise FieldError(fields.get(error.field, error.field), message) from None
