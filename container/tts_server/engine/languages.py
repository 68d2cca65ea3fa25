"""Kokoro's languages: canonical codes, their aliases, and the voice-id letter of each."""

from __future__ import annotations

from ..errors import FieldError, one_of

# canonical code -> Kokoro's voice prefix letter (af_heart: a = en-US, f = female)
VOICE_LETTERS: dict[str, str] = {
    "en-US": "a", "en-GB": "b", "es": "e", "fr": "f", "hi": "h", "it": "i", "ja": "j", "pt-BR": "p", "zh": "z",
}
DEFAULT_LANGUAGE = "ja"
_ALIASES: dict[str, str] = {
    "en": "en-US", "en-in": "en-GB", "en-au": "en-GB", "en-nz": "en-GB", "en-ie": "en-GB",
    "es-es": "es", "es-mx": "es", "es-419": "es", "es-us": "es",
    "fr-fr": "fr", "fr-ca": "fr", "fr-be": "fr", "fr-ch": "fr",
    "hi-in": "hi", "it-it": "it", "ja-jp": "ja",
    "pt": "pt-BR", "pt-pt": "pt-BR",
    "zh-cn": "zh", "zh-hans": "zh", "zh-sg": "zh", "cmn": "zh",
}
_BY_KEY = {code.lower(): code for code in VOICE_LETTERS} | _ALIASES
_BY_LETTER = {letter: code for code, letter in VOICE_LETTERS.items()}


def canonical(code: str, offered: list[str] | None = None) -> str:
    """'en', 'EN_us', 'hi-IN' ... -> the canonical code; FieldError names the accepted ones."""
    offered = offered if offered is not None else list(VOICE_LETTERS)
    language = _BY_KEY.get(code.strip().replace("_", "-").lower()) if isinstance(code, str) else None
    if language not in offered:
        raise FieldError("language", one_of(offered) + f" (or an alias such as 'en', 'pt', 'hi-IN'), got {code!r}")
    return language


def implied_by_voice(speaker_id: str | None) -> str | None:
    """The language a Kokoro voice id names by its first letter ('af_heart' -> en-US), if any."""
    if not speaker_id:
        return None
    first = speaker_id.split("+")[0].strip()
    if len(first) > 3 and first[2] == "_" and first[1] in "fm":
        return _BY_LETTER.get(first[0])
    return None
