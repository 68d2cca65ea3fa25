"""Who speaks when a compatibility client does not say, or says it in another system's names.

- Bulbul speaker names map to our speaker ids (a configurable map; by default each name to
  its gender's first preset, `woman-1` or `man-1`, which every language with such a voice has).
- A Kokoro voice id implies its language (`af_heart` is English; engine/languages.py), so a
  client that names only the voice needs no language field.
- The blog's clients default to `af_heart`: it speaks when the engine has it; otherwise the
  language default does.
Decided per request from what the loaded engine offers, so it follows the engine in use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..engine.languages import implied_by_voice
from ..engine.synthesizer import Synthesizer
from ..errors import FieldError

BLOG_VOICE = "af_heart"
_PRESET = re.compile(r"^(default|woman-\d+|man-\d+)$")

# Bulbul v2/v3 speakers by the gender of their voice (Sarvam's speaker list).
_FEMALE = ("anushka", "manisha", "vidya", "arya", "ritu", "priya", "neha", "pooja", "simran", "kavya",
           "ishita", "shreya", "roopa", "tanya", "shruti", "suhani", "kavitha", "rupali")
_MALE = ("abhilash", "karun", "hitesh", "aditya", "rahul", "rohan", "amit", "dev", "ratan", "varun", "manan",
         "sumit", "kabir", "aayan", "shubh", "ashutosh", "advait", "anand", "tarun", "sunny", "mani", "gokul",
         "vijay", "mohit", "rehan", "soham")
BULBUL_SPEAKERS: dict[str, str] = {name: "woman-1" for name in _FEMALE} | {name: "man-1" for name in _MALE}


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
                  speakers: Mapping[str, str] | None = None, blog_default: bool = False) -> tuple[str | None, str]:
    """(language, speaker_id) to negotiate: None for the language leaves it to the voice or the
    default (SessionOptions.negotiate); unknown values pass through for negotiation to refuse."""
    if speaker_id is not None and speakers:
        speaker_id = speakers.get(speaker_id.lower(), speaker_id)
    if speaker_id is None and blog_default:
        blog_language = voice_language(synthesizer, BLOG_VOICE)
        if blog_language is not None and (language is None or _canonical(synthesizer, language) == blog_language):
            return blog_language, BLOG_VOICE
    return language, speaker_id or "default"
