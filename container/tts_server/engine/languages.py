"""Kokoro's languages: canonical codes, their aliases, the voice-id letter of each, and their
G2P, built lazily.

`canonical("en_us")` -> "en-US"; `implied_by_voice("af_heart")` -> "en-US";
`detect("こんにちは", offered)` -> "ja" (the text's script decides, among the languages offered);
`G2PCache().get("en-GB")` builds misaki's English G2P once (spaCy takes seconds) and keeps it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..wire.errors import FieldError, one_of
from .g2p.base import G2P


@dataclass(frozen=True)
class Language:
    code: str  # canonical, as the protocol reports it
    voice_letter: str  # first letter of Kokoro's voice ids (af_heart, jf_alpha)
    name: str
    aliases: tuple[str, ...] = ()


LANGUAGES = (
    Language("en-US", "a", "American English", ("en", "en-CA")),
    Language("en-GB", "b", "British English", ("en-UK", "en-IN", "en-AU", "en-NZ", "en-IE", "en-ZA", "en-SG")),
    Language("es", "e", "Spanish", ("es-ES", "es-MX", "es-US", "es-AR", "es-CO", "es-CL", "es-419")),
    Language("fr", "f", "French", ("fr-FR", "fr-CA", "fr-BE", "fr-CH")),
    Language("hi", "h", "Hindi", ("hi-IN",)),
    Language("it", "i", "Italian", ("it-IT", "it-CH")),
    Language("ja", "j", "Japanese", ("ja-JP",)),
    Language("pt-BR", "p", "Brazilian Portuguese", ("pt", "pt-PT")),
    Language("zh", "z", "Mandarin Chinese", ("zh-CN", "zh-Hans", "zh-Hans-CN", "zh-SG", "zh-TW", "zh-Hant", "cmn")),
)
CODES = tuple(language.code for language in LANGUAGES)
BY_CODE = {language.code: language for language in LANGUAGES}
# canonical code -> Kokoro's voice prefix letter (af_heart: a = en-US, f = female)
VOICE_LETTERS: dict[str, str] = {language.code: language.voice_letter for language in LANGUAGES}
DEFAULT_LANGUAGE = "ja"


def _key(value: str) -> str:
    return value.strip().replace("_", "-").lower()


_BY_KEY = {_key(alias): language.code for language in LANGUAGES for alias in (language.code, *language.aliases)}
_BY_LETTER = {letter: code for code, letter in VOICE_LETTERS.items()}


def canonical(code: str, offered: Iterable[str] | None = None) -> str:
    """'en', 'EN_us', 'hi-IN' ... -> the canonical code (case and `_`/`-` insensitive).

    FieldError("language", ...) names the accepted codes: all of CODES, or only `offered`
    (the ones the loaded engine speaks) when given.
    """
    offered = list(CODES if offered is None else offered)
    language = _BY_KEY.get(_key(code)) if isinstance(code, str) else None
    if language not in offered:
        raise FieldError("language", one_of(offered) + f" (or an alias such as 'en', 'pt', 'hi-IN'), got {code!r}")
    return language


def implied_by_voice(speaker_id: str | None) -> str | None:
    """The language a Kokoro voice id names by its first letter ('af_heart' -> en-US), if any;
    for a blend ('jf_alpha:0.7+jm_kumo:0.3') its first voice decides."""
    if not speaker_id:
        return None
    first = speaker_id.split("+")[0].strip()
    if len(first) > 3 and first[2] == "_" and first[1] in "fm":
        return _BY_LETTER.get(first[0])
    return None


# Which languages write each script, the usual one first. Kana is Japanese alone; Han is Chinese
# unless kana says Japanese (or only Japanese is offered); Latin is English unless a hint says
# which other Latin-script language.
_SCRIPT_LANGUAGES: dict[str, tuple[str, ...]] = {
    "kana": ("ja",),
    "han": ("zh", "ja"),
    "devanagari": ("hi",),
    "latin": ("en-US", "en-GB", "es", "fr", "it", "pt-BR"),
}
_SCRIPT_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x41, 0x5A, "latin"), (0x61, 0x7A, "latin"), (0xC0, 0x24F, "latin"), (0x1E00, 0x1EFF, "latin"),
    (0x900, 0x97F, "devanagari"),
    (0x3040, 0x30FF, "kana"), (0x31F0, 0x31FF, "kana"), (0xFF66, 0xFF9F, "kana"),
    (0x3400, 0x4DBF, "han"), (0x4E00, 0x9FFF, "han"), (0xF900, 0xFAFF, "han"), (0x20000, 0x2FA1F, "han"),
)


def _script(char: str) -> str | None:
    point = ord(char)
    if not char.isalpha():
        return None
    return next((name for low, high, name in _SCRIPT_RANGES if low <= point <= high), "other")


def scripts(text: str) -> dict[str, int]:
    """Letters per script in `text` (digits, punctuation and spaces count for none)."""
    counts: dict[str, int] = {}
    for char in text:
        script = _script(char)
        if script:
            counts[script] = counts.get(script, 0) + 1
    return counts


def detect(text: str, offered: Iterable[str], hint: str | None = None) -> str:
    """The language to read `text` in, when the client named none: the script with the most
    letters decides (kanji beside kana count as Japanese), then the languages `offered` (the
    engine's): of those that write that script, `hint` (a voice the client named implies it)
    where it is one of them, else the script's usual one. Text without letters takes `hint`,
    else the default. FieldError("language") when the script is one no offered language writes."""
    offered = list(offered)
    counts = scripts(text)
    if not counts:
        return hint if hint in offered else default_language(offered)
    if "kana" in counts:  # Han written beside kana is Japanese kanji
        counts["kana"] += counts.pop("han", 0)
    script = max(counts, key=counts.get)
    candidates = [code for code in _SCRIPT_LANGUAGES.get(script, ()) if code in offered]
    if not candidates:
        letters = "in a script Kokoro has no language for" if script == "other" else f"in {script} script"
        raise FieldError("language", f"the text is written {letters}, which none of the languages this engine "
                                     f"speaks ({', '.join(offered)}) is written in; set this field to one of them")
    return hint if hint in candidates else candidates[0]


def default_language(offered: Iterable[str]) -> str:
    offered = list(offered)
    return DEFAULT_LANGUAGE if DEFAULT_LANGUAGE in offered else offered[0]


def _english(british: bool) -> G2P:
    from .g2p.english import EnglishG2P

    return EnglishG2P(british=british)


def _espeak(code: str) -> G2P:
    from .g2p.espeak import EspeakG2P

    return EspeakG2P(code)


def _japanese() -> G2P:
    from .g2p.japanese import JapaneseG2P

    return JapaneseG2P()


def _chinese() -> G2P:
    from .g2p.chinese import ChineseG2P

    return ChineseG2P()


_FACTORIES: dict[str, Callable[[], G2P]] = {
    "en-US": lambda: _english(british=False),
    "en-GB": lambda: _english(british=True),
    "es": lambda: _espeak("es"),
    "fr": lambda: _espeak("fr"),
    "hi": lambda: _espeak("hi"),
    "it": lambda: _espeak("it"),
    "ja": _japanese,
    "pt-BR": lambda: _espeak("pt-BR"),
    "zh": _chinese,
}


class G2PCache:
    """One G2P per language, built on first use; concurrent first uses build it once.

    A lock per language, so loading English (seconds) never holds up a Spanish request.
    """

    def __init__(self, factories: dict[str, Callable[[], G2P]] | None = None):
        self._factories = dict(_FACTORIES if factories is None else factories)
        self._built: dict[str, G2P] = {}
        self._locks = {code: threading.Lock() for code in self._factories}

    def get(self, code: str) -> G2P:
        g2p = self._built.get(code)
        if g2p is not None:
            return g2p
        if code not in self._factories:
            raise FieldError("language", one_of(list(self._factories)))
        with self._locks[code]:
            if code not in self._built:
                self._built[code] = self._factories[code]()
            return self._built[code]

    def preload(self, codes: Iterable[str]) -> None:
        """Build these now (the image build does, so a language that cannot load fails the build)."""
        for code in codes:
            self.get(code)

    def loaded(self) -> list[str]:
        return sorted(self._built)
