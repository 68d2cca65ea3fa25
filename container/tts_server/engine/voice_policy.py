"""Which voice speaks for the name a client sent, in the language of its text (SPEC §12).

Clients written for other systems name voices in their own words: OpenAI's `alloy`, Bulbul's
speakers, ElevenLabs' voice ids. Each family says what its names stand for (`VoiceNames`,
scoped to that family), and the operator's VOICE_ALIASES stand over every family. The rules:
- A name the client chose from Kokoro's own (`jf_alpha`, a preset, a blend) speaks as named.
- A name that stands for a Kokoro voice (an alias, a family's default voice) speaks in the
  request's language: that voice where it is of the language, else the language's voice of
  the same gender (`af_nova` for a Japanese text speaks as `woman-1`: `jf_alpha`). A voice's
  language never decides the text's.
- A Kokoro voice the engine lacks speaks as the closest it has: the same gender in the
  request's language, else that language's default.
- A name a family does not know speaks as its `unknown` voice where it has one (an ElevenLabs
  id of a cloned voice), else it is refused naming the speakers there are.
Substitutions are reported (the voice that spoke) and logged once. With VOICE_FALLBACK=strict
nothing is substituted: an absent voice or an unknown name is refused.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .languages import implied_by_voice
from .voices import VoiceBook

log = logging.getLogger(__name__)
KOKORO_VOICE = re.compile(r"^[a-z][fm]_[a-z0-9]+$")
LOGGED_AT_MOST = 1024  # substitutions logged (once each): clients choose the names, so the set is bounded


@dataclass(frozen=True)
class VoiceNames:
    """One family's names for voices."""

    aliases: Mapping[str, str] = field(default_factory=dict)  # its name -> a Kokoro voice id or preset
    default: str | None = None  # speaks when the client names none (the blog's `af_heart`)
    unknown: str | None = None  # speaks for a name it does not know; None: such a name is refused

    def __post_init__(self) -> None:  # names are case-blind
        object.__setattr__(self, "aliases", {name.lower(): voice for name, voice in self.aliases.items()})


NO_NAMES = VoiceNames()  # a family with no names of its own


@dataclass(frozen=True)
class VoiceChoice:
    requested: str  # what the client named ("" for none)
    speaker_id: str  # what the book resolves: the request, its alias, or the substitute
    voice: str  # the Kokoro voice (or blend) that speaks
    style: np.ndarray  # its style pack (rows, 256), resolved once


class VoicePolicy:
    def __init__(self, aliases: Mapping[str, str] | None = None, strict: bool = False):
        self.aliases = {name.lower(): voice for name, voice in (aliases or {}).items()}  # the operator's, over all
        self.strict = strict
        self._logged: set[tuple[str, str]] = set()

    def choose(self, book: VoiceBook, language: str, speaker_id: str | None,
               names: VoiceNames = NO_NAMES) -> VoiceChoice:
        """What speaks for `speaker_id` (None: the family's default) in `language`'s book; a
        FieldError (from the book) for a name it cannot serve."""
        requested = speaker_id or ""
        if speaker_id is None:
            parts = [self._stands_for(book, language, names.default, "") if names.default else "default"]
        else:
            parts = [self._part(book, language, part.strip(), names) for part in speaker_id.split("+")]
        chosen = "+".join(parts)
        style = book.resolve(chosen)  # raises FieldError naming the speakers for anything still unknown
        voice = "+".join(book.voice_of(name) + colon + weight
                         for name, colon, weight in (part.partition(":") for part in parts))
        if speaker_id is not None and chosen != speaker_id:
            self._log(speaker_id, voice)
        return VoiceChoice(requested, chosen, voice, style)

    @staticmethod
    def hint(speaker_id: str | None) -> str | None:
        """The language a Kokoro voice id the client chose implies (`ef_dora`: Spanish), which picks
        among the languages of a text's script; aliases and defaults imply none."""
        first = (speaker_id or "").split("+")[0].split(":")[0].strip()
        return implied_by_voice(first) if KOKORO_VOICE.match(first) else None

    def _part(self, book: VoiceBook, language: str, part: str, names: VoiceNames) -> str:
        name, colon, weight = part.partition(":")
        key = name.lower()
        target = self.aliases.get(key) or names.aliases.get(key)
        if target is None and names.unknown and not self.strict and not (KOKORO_VOICE.match(name) or book.knows(name)):
            target = names.unknown
        if target is not None:
            return self._stands_for(book, language, target, colon + weight)
        if self.strict or book.has(name) or not KOKORO_VOICE.match(name):
            return part
        return self._closest(book, name) + colon + weight

    def _stands_for(self, book: VoiceBook, language: str, target: str, weight: str) -> str:
        """A voice the client did not choose itself: of the request's language where it can be."""
        if self.strict or not KOKORO_VOICE.match(target):
            return target + weight
        if not book.has(target) or (book.native and implied_by_voice(target) != language):
            return self._closest(book, target) + weight
        return target + weight

    @staticmethod
    def _closest(book: VoiceBook, voice: str) -> str:
        gender = "woman-1" if voice[1] == "f" else "man-1"
        return gender if book.knows(gender) else "default"

    def _log(self, speaker_id: str, voice: str) -> None:
        if (speaker_id, voice) not in self._logged and len(self._logged) < LOGGED_AT_MOST:
            self._logged.add((speaker_id, voice))
            log.info("voice %r speaks as %r here (VOICE_FALLBACK=strict refuses substitutes)", speaker_id, voice)
