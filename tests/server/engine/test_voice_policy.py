"""The voice policy alone: a family's names (aliases, default, unknown ids) scoped to it, the
request's language deciding which voice a name stands for, the closest voice, strict refusal."""

import logging

import numpy as np
import pytest

from tts_server.engine.voice_policy import VoiceNames, VoicePolicy
from tts_server.engine.voices import VoiceBook
from tts_server.wire.errors import FieldError

PACK = np.zeros((510, 256), np.float32)
VOICES = {v: PACK for v in ("af_bella", "af_nova", "am_adam", "jf_alpha", "jm_kumo")}
ENGLISH = VoiceBook(VOICES, 510, "a")
JAPANESE = VoiceBook(VOICES, 510, "j")
JAPANESE_ONLY = VoiceBook({v: PACK for v in ("jf_alpha", "jm_kumo")}, 510, "j")
OPENAI = VoiceNames(aliases={"alloy": "af_alloy", "nova": "af_nova", "onyx": "am_onyx"})


@pytest.mark.parametrize("book, language, asked, voice", [
    (ENGLISH, "en-US", "af_heart", "af_bella"),  # absent: the same language and gender
    (ENGLISH, "en-US", "am_michael", "am_adam"),
    (JAPANESE_ONLY, "ja", "af_heart", "jf_alpha"),  # no English voices: the same gender in the language
    (JAPANESE_ONLY, "ja", "am_onyx", "jm_kumo"),
    (JAPANESE, "ja", "af_nova", "af_nova"),  # a voice the client chose by its Kokoro id speaks as chosen
    (JAPANESE, "ja", "woman-1", "jf_alpha"),
    (JAPANESE_ONLY, "ja", "af_heart:0.6+jm_kumo:0.4", "jf_alpha:0.6+jm_kumo:0.4"),  # each part of a blend
])
def test_a_kokoro_voice_speaks_as_named_or_as_the_closest(book, language, asked, voice):
    choice = VoicePolicy().choose(book, language, asked)
    assert choice.voice == voice and choice.requested == asked


@pytest.mark.parametrize("book, language, asked, voice", [
    (ENGLISH, "en-US", "nova", "af_nova"),  # of the language: the voice it stands for
    (JAPANESE, "ja", "nova", "jf_alpha"),  # of another language: the language's voice of that gender
    (JAPANESE, "ja", "onyx", "jm_kumo"),
    (JAPANESE_ONLY, "ja", "alloy", "jf_alpha"),
    (JAPANESE, "ja", "NOVA", "jf_alpha"),  # names are case-blind
])
def test_an_alias_speaks_in_the_requests_language(book, language, asked, voice):
    assert VoicePolicy().choose(book, language, asked, OPENAI).voice == voice


def test_a_familys_names_are_its_own():
    with pytest.raises(FieldError, match="speaker_id: Input should be 'default'"):
        VoicePolicy().choose(JAPANESE, "ja", "alloy")  # OpenAI's name, asked without OpenAI's names


def test_the_default_voice_stands_for_a_voice_too():
    blog = VoiceNames(default="af_bella")
    assert VoicePolicy().choose(ENGLISH, "en-US", None, blog).voice == "af_bella"
    assert VoicePolicy().choose(JAPANESE, "ja", None, blog).voice == "jf_alpha"
    assert VoicePolicy().choose(JAPANESE, "ja", None).voice == "jf_alpha"  # no default: the language's


def test_an_unknown_name_speaks_as_the_familys_unknown_voice_unless_strict():
    vendor = VoiceNames(aliases={"21m00tcm4tlvdq8ikwam": "af_bella"}, unknown="default")
    assert VoicePolicy().choose(ENGLISH, "en-US", "21m00Tcm4TlvDq8ikWAM", vendor).voice == "af_bella"
    assert VoicePolicy().choose(ENGLISH, "en-US", "MyClonedVoice0123456", vendor).voice == "af_bella"
    assert VoicePolicy().choose(ENGLISH, "en-US", "am_adam", vendor).voice == "am_adam"
    with pytest.raises(FieldError):
        VoicePolicy(strict=True).choose(ENGLISH, "en-US", "MyClonedVoice0123456", vendor)


def test_the_operators_aliases_stand_over_every_family():
    policy = VoicePolicy({"narrator": "am_adam", "nova": "af_bella"})
    assert policy.choose(ENGLISH, "en-US", "narrator").voice == "am_adam"
    assert policy.choose(ENGLISH, "en-US", "nova", OPENAI).voice == "af_bella"


def test_a_man_with_no_men_in_the_language_gets_its_default():
    women_only = VoiceBook({"jf_alpha": PACK, "jf_nezumi": PACK}, 510, "j")
    assert VoicePolicy().choose(women_only, "ja", "jm_kumo").voice == "jf_alpha"


def test_names_that_are_not_voices_are_refused_either_way():
    with pytest.raises(FieldError, match="speaker_id: Input should be 'default'"):
        VoicePolicy().choose(JAPANESE, "ja", "bob")


def test_strict_refuses_an_absent_voice_naming_the_voices():
    with pytest.raises(FieldError, match="'jf_alpha' or 'jm_kumo'"):
        VoicePolicy(strict=True).choose(JAPANESE_ONLY, "ja", "alloy", OPENAI)


@pytest.mark.parametrize("asked, hint", [("ef_dora", "es"), ("bf_emma:0.5+af_bella:0.5", "en-GB"), ("nova", None),
                                         ("woman-1", None), (None, None)])
def test_only_a_kokoro_id_the_client_chose_hints_a_language(asked, hint):
    assert VoicePolicy.hint(asked) == hint


def test_the_substitution_is_logged_once(caplog):
    caplog.set_level(logging.INFO)
    policy = VoicePolicy()
    for _ in range(3):
        policy.choose(JAPANESE_ONLY, "ja", "af_heart")
    assert sum("af_heart" in r.getMessage() for r in caplog.records) == 1
