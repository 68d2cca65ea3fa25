"""The voice policy alone: aliases, the closest voice by language and gender, strict refusal."""

import logging

import numpy as np
import pytest

from tts_server.engine.voice_policy import VoicePolicy
from tts_server.engine.voices import VoiceBook
from tts_server.wire.errors import FieldError

PACK = np.zeros((510, 256), np.float32)
ENGLISH = VoiceBook({v: PACK for v in ("af_bella", "am_adam", "jf_alpha")}, 510, "a")
JAPANESE = VoiceBook({v: PACK for v in ("jf_alpha", "jm_kumo")}, 510, "j")


@pytest.mark.parametrize("book, asked, voice", [
    (ENGLISH, "af_heart", "af_bella"),  # the same language and gender
    (ENGLISH, "am_michael", "am_adam"),
    (JAPANESE, "af_heart", "jf_alpha"),  # no English here: the same gender in the negotiated language
    (JAPANESE, "am_onyx", "jm_kumo"),
    (JAPANESE, "alloy", "jf_alpha"),  # OpenAI's name -> af_alloy -> the closest
    (JAPANESE, "jm_kumo", "jm_kumo"),  # a voice the engine has is never replaced
    (JAPANESE, "woman-1", "jf_alpha"),
    (JAPANESE, "af_heart:0.6+jm_kumo:0.4", "jf_alpha:0.6+jm_kumo:0.4"),  # each part of a blend
])
def test_the_closest_voice_speaks(book, asked, voice):
    choice = VoicePolicy({"alloy": "af_alloy"}).choose(book, asked)
    assert choice.voice == voice and choice.requested == asked


def test_a_man_with_no_men_in_the_language_gets_its_default():
    women_only = VoiceBook({"jf_alpha": PACK, "jf_nezumi": PACK}, 510, "j")
    assert VoicePolicy().choose(women_only, "jm_kumo").voice == "jf_alpha"


def test_names_that_are_not_voices_are_refused_either_way():
    with pytest.raises(FieldError, match="speaker_id: Input should be 'default'"):
        VoicePolicy().choose(JAPANESE, "bob")


def test_strict_refuses_an_absent_voice_naming_the_voices():
    with pytest.raises(FieldError, match="'jf_alpha' or 'jm_kumo'"):
        VoicePolicy({"alloy": "af_alloy"}, strict=True).choose(JAPANESE, "alloy")


def test_the_substitution_is_logged_once(caplog):
    caplog.set_level(logging.INFO)
    policy = VoicePolicy()
    for _ in range(3):
        policy.choose(JAPANESE, "af_heart")
    assert sum("af_heart" in r.getMessage() for r in caplog.records) == 1
