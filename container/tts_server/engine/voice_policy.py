"""Which voice speaks when a client names one this engine lacks (SPEC §12).

Clients written for other systems name voices we may not have: OpenAI's (`alloy`, `nova`, ...,
aliases its family registers), the AWS sample's `af_heart`, any Kokoro voice absent from
MODEL_DIR. By default the closest voice the engine has speaks instead: the same gender in the
negotiated language (a Kokoro id's letters say both: `af_heart` is an American English woman),
else that language's default. The choice is reported (the voice that spoke) and logged once.
With VOICE_FALLBACK=strict such a request is refused instead, naming the voices there are.
Names that are not Kokoro voice ids and not aliases are refused either way.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .voices import VoiceBook

log = logging.getLogger(__name__)
KOKORO_VOICE = re.compile(r"^[a-z][fm]_[a-z0-9]+$")
LOGGED_AT_MOST = 1024  # substitutions logged (once each): clients choose the names, so the set is bounded


@dataclass(frozen=True)
class VoiceChoice:
    requested: str  # what the client named
    speaker_id: str  # what the book resolves: the request, its alias, or the substitute
    voice: str  # the Kokoro voice (or blend) that speaks
    style: np.ndarray  # its style pack (rows, 256), resolved once


class VoicePolicy:
    def __init__(self, aliases: Mapping[str, str] | None = None, strict: bool = False):
        self.aliases = {name.lower(): voice for name, voice in (aliases or {}).items()}
        self.strict = strict
        self._logged: set[tuple[str, str]] = set()

    def alias(self, speaker_id: str) -> str:
        """Another system's name for a voice, as a Kokoro voice id (each part of a blend)."""
        return "+".join(self._alias_part(part) for part in speaker_id.split("+"))

    def _alias_part(self, part: str) -> str:
        name, colon, weight = part.strip().partition(":")
        return self.aliases.get(name.lower(), name) + colon + weight

    def choose(self, book: VoiceBook, speaker_id: str) -> VoiceChoice:
        """What speaks for `speaker_id` in this language's book; a FieldError (from the book)
        for names it cannot serve, and for absent voices too when strict."""
        aliased = self.alias(speaker_id)
        parts = [self._part(book, part) for part in aliased.split("+")]
        chosen = "+".join(parts)
        style = book.resolve(chosen)  # raises FieldError naming the speakers for anything still unknown
        voice = "+".join(book.voice_of(name) + colon + weight
                         for name, colon, weight in (part.partition(":") for part in parts))
        if chosen != aliased and (speaker_id, voice) not in self._logged and len(self._logged) < LOGGED_AT_MOST:
            self._logged.add((speaker_id, voice))
            log.info("voice %r is not in this engine: %r speaks instead (VOICE_FALLBACK=strict refuses)",
                     speaker_id, voice)
        return VoiceChoice(speaker_id, chosen, voice, style)

    def _part(self, book: VoiceBook, part: str) -> str:
        name, colon, weight = part.strip().partition(":")
        if self.strict or book.has(name) or not KOKORO_VOICE.match(name):
            return part.strip()
        gender = "woman-1" if name[1] == "f" else "man-1"
        return (gender if book.knows(gender) else "default") + colon + weight
