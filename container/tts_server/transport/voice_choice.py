"""Who speaks when a client does not say, or says it in another system's names.

- Another system's speaker names map to our speaker ids through the table its family passes
  (Bulbul's speakers by gender, families/bulbul/fields.py).
- A Kokoro voice id implies its language (`af_heart` is English; engine/languages.py), so a
  client that names only the voice needs no language field.
- A family's default voice (the blog's `af_heart`) speaks when the engine has it; otherwise
  the language default does.
Decided per request from what the loaded engine offers, so it follows the engine in use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..engine.languages import implied_by_voice
from ..engine.synthesizer import Synthesizer
from ..wire.errors import FieldError

_PRESET = re.compile(r"^(default|woman-\d+|man-\d+)$")


def voice_language(synthesizer: Synthesizer, speaker_id: str) -> str | None:
    """The language of a Kokoro voice id this engine has; None for presets and unknown ids."""
    name = speaker_id.split("+")[0].split(":")[0].strip()
    language = None if _PRESET.match(name) else implied_by_voice(name)
    if language in synthesizer.languages and synthesizer.voice_book(language).has(name):
        return language
    return None


def _canonical(synthesizer: Synthesizer, language: str) -> str | None:
    try:
        return synthesizer.language(language)
    except FieldError:
        return None  # negotiation refuses it, naming the languages there are


def resolve_voice(synthesizer: Synthesizer, language: str | None, speaker_id: str | None,
                  speakers: Mapping[str, str] | None = None, default_voice: str | None = None) -> tuple[str | None, str]:
    """(language, speaker_id) to negotiate: None for the language leaves it to the voice or the
    default (SessionOptions.negotiate); unknown values pass through for negotiation to refuse."""
    if speaker_id is not None and speakers:
        speaker_id = speakers.get(speaker_id.lower(), speaker_id)
    if speaker_id is None and default_voice:
        voice_lang = voice_language(synthesizer, default_voice)
        if voice_lang is not None and (language is None or _canonical(synthesizer, language) == voice_lang):
            return voice_lang, default_voice
    return language, speaker_id or "default"
