"""Default voices and Bulbul speaker names, decided from what the engine offers at request time.
The English path uses an engine double (the embedded engine is Japanese only); the Japanese
fallback also runs for real in tests/server/families/test_blog_http.py."""

import numpy as np
import pytest

from tts_server.engine.languages import VOICE_LETTERS, canonical, implied_by_voice
from tts_server.engine.voices import VoiceBook
from tts_server.families.blog.tokens import DEFAULT_VOICE
from tts_server.families.bulbul.fields import SPEAKERS as BULBUL_SPEAKERS
from tts_server.transport.voice_choice import resolve_voice, voice_language


class Engine:
    """What resolve_voice asks an engine: its languages, their voice books, canonical codes."""

    def __init__(self, languages: list[str], voices: list[str]):
        packs = {v: np.zeros((510, 256), np.float32) for v in voices}
        self.languages = sorted(languages)
        self._books = {lang: VoiceBook(packs, 510, VOICE_LETTERS[lang]) for lang in languages}

    def voice_book(self, language):
        return self._books[language]

    def language(self, requested, speaker_id=None):  # Synthesizer.language's rule
        if requested is None:
            implied = implied_by_voice(speaker_id)
            requested = implied if implied in self.languages else "ja"
        return canonical(requested, self.languages)


JAPANESE = Engine(["ja"], ["jf_alpha", "jf_nezumi", "jm_kumo"])
FULL = Engine(["en-US", "ja", "hi"], ["af_heart", "af_bella", "am_adam", "jf_alpha", "jm_kumo", "hf_alpha", "hm_omega"])


def test_the_blog_default_is_af_heart_in_english_when_the_engine_has_it():
    assert resolve_voice(FULL, None, None, default_voice=DEFAULT_VOICE) == ("en-US", "af_heart")
    assert resolve_voice(FULL, "en", None, default_voice=DEFAULT_VOICE) == ("en-US", "af_heart")


def test_without_af_heart_the_language_default_speaks():
    assert resolve_voice(JAPANESE, None, None, default_voice=DEFAULT_VOICE) == (None, "default")
    # A language asked for that af_heart does not speak keeps its own default.
    assert resolve_voice(FULL, "hi-IN", None, default_voice=DEFAULT_VOICE) == ("hi-IN", "default")


def test_other_surfaces_keep_the_default_speaker():
    assert resolve_voice(FULL, None, None) == (None, "default")


@pytest.mark.parametrize("voice, language", [("af_heart", "en-US"), ("jm_kumo", "ja"), ("hf_alpha:0.5+hm_omega:0.5", "hi"),
                                             ("woman-1", None), ("zf_nobody", None), ("bf_emma", None)])
def test_only_a_voice_the_engine_has_names_a_language(voice, language):
    assert voice_language(FULL, voice) == language


def test_a_named_voice_passes_through():
    assert resolve_voice(FULL, None, "am_adam", default_voice=DEFAULT_VOICE) == (None, "am_adam")
    assert resolve_voice(FULL, "ja", "jm_kumo") == ("ja", "jm_kumo")


def test_bulbul_speakers_map_by_gender_and_the_map_is_replaceable():
    assert resolve_voice(FULL, "hi-IN", "Anushka", BULBUL_SPEAKERS) == ("hi-IN", "woman-1")
    assert resolve_voice(FULL, "hi-IN", "shubh", BULBUL_SPEAKERS) == ("hi-IN", "man-1")
    assert resolve_voice(FULL, None, "anushka", {"anushka": "af_bella"}) == (None, "af_bella")
    # Unmapped names pass through, for negotiation to refuse naming the speakers that exist.
    assert resolve_voice(FULL, "ja", "anushka", {}) == ("ja", "anushka")
