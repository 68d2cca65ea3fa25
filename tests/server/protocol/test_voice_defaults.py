"""Default voices and Bulbul speaker names, decided from what the engine offers at request time.
The English path uses an engine double (the embedded engine is Japanese only); the Japanese
fallback also runs for real in tests/server/http/test_http_blog.py."""

import pytest

from tts_server.engine.voices import presets
from tts_server.protocol.voice_defaults import BULBUL_SPEAKERS, language_of_voice, resolve_voice


class Book:
    def __init__(self, voices):
        self.speakers = [*presets(voices), *sorted(voices)]


class Engine:
    """What resolve_voice asks an engine: its languages and each one's speakers."""

    def __init__(self, voices: dict[str, list[str]]):
        self._books = {lang: Book(v) for lang, v in voices.items()}
        self.languages = sorted(voices)

    def voice_book(self, language):
        return self._books[language]


JAPANESE = Engine({"ja": ["jf_alpha", "jf_nezumi", "jm_kumo"]})
FULL = Engine({"en": ["af_heart", "af_bella", "am_adam"], "ja": ["jf_alpha", "jm_kumo"], "hi": ["hf_alpha", "hm_omega"]})


def test_the_blog_default_is_af_heart_in_english_when_the_engine_has_it():
    assert resolve_voice(FULL, None, None, blog_default=True) == ("en", "af_heart")
    assert resolve_voice(FULL, "en", None, blog_default=True) == ("en", "af_heart")


def test_without_af_heart_the_language_default_speaks():
    assert resolve_voice(JAPANESE, None, None, blog_default=True) == ("ja", "default")
    # A language asked for that af_heart does not speak keeps its own default.
    assert resolve_voice(FULL, "hi", None, blog_default=True) == ("hi", "default")


def test_other_surfaces_keep_the_language_default():
    assert resolve_voice(FULL, None, None) == ("ja", "default")


@pytest.mark.parametrize("voice, language", [("af_heart", "en"), ("jm_kumo", "ja"), ("hf_alpha:0.5+hm_omega:0.5", "hi"),
                                             ("woman-1", None), ("zz_nobody", None)])
def test_a_kokoro_voice_implies_its_language(voice, language):
    assert language_of_voice(FULL, voice) == language


def test_a_named_voice_speaks_its_own_language_unless_one_is_given():
    assert resolve_voice(FULL, None, "am_adam", blog_default=True) == ("en", "am_adam")
    assert resolve_voice(FULL, "ja", "jm_kumo") == ("ja", "jm_kumo")
    assert resolve_voice(FULL, None, "woman-2") == ("ja", "woman-2")  # a preset names no language


def test_bulbul_speakers_map_by_gender_and_the_map_is_replaceable():
    assert resolve_voice(FULL, "hi", "Anushka", BULBUL_SPEAKERS) == ("hi", "woman-1")
    assert resolve_voice(FULL, "hi", "shubh", BULBUL_SPEAKERS) == ("hi", "man-1")
    assert resolve_voice(FULL, None, "anushka", {"anushka": "af_bella"}) == ("en", "af_bella")
    # Unmapped names pass through, for negotiation to refuse naming the speakers that exist.
    assert resolve_voice(FULL, "ja", "anushka", {}) == ("ja", "anushka")
