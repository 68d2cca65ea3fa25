"""The one voice negotiation: the language is the client's where it names one, else each text's
own (never a voice's); who speaks follows that language; errors name the client's fields.
An engine double stands in for the synthesizer (the real ones run in tests/server/families/)."""

import numpy as np
import pytest

from tts_server.engine.languages import VOICE_LETTERS, canonical, default_language, detect
from tts_server.engine.voice_policy import VoiceNames, VoicePolicy
from tts_server.engine.voices import VoiceBook
from tts_server.session.options import SessionOptions
from tts_server.wire.errors import FieldError


class Engine:
    """What negotiation asks an engine: its languages, their voice books, codes, detection."""

    def __init__(self, languages: list[str], voices: list[str]):
        packs = {v: np.zeros((510, 256), np.float32) for v in voices}
        self.languages = sorted(languages)
        self._books = {lang: VoiceBook(packs, 510, VOICE_LETTERS[lang]) for lang in languages}

    def voice_book(self, language):
        return self._books[language]

    def language(self, requested):
        return canonical(default_language(self.languages) if requested is None else requested, self.languages)

    def detect(self, text, hint=None):
        return detect(text, self.languages, hint)


FULL = Engine(["en-US", "es", "ja", "zh"], ["af_heart", "af_bella", "am_adam", "ef_dora", "jf_alpha", "jm_kumo", "zf_xiaobei"])
JAPANESE = "こんにちは。今日はいい天気ですね。"


def negotiate(engine=FULL, **asked) -> SessionOptions:
    return SessionOptions.negotiate(engine, policy=VoicePolicy(), **asked)


@pytest.mark.parametrize("text, language", [(JAPANESE, "ja"), ("Hello there.", "en-US"), ("今天天气很好。", "zh"),
                                            ("123", "ja")])
def test_without_a_language_the_text_decides(text, language):
    assert negotiate().request(text).voice.language == language


def test_a_named_language_wins_over_the_text():
    assert negotiate(language="en").request(JAPANESE).voice.language == "en-US"


def test_a_voice_never_decides_the_language_only_picks_among_its_scripts():
    assert negotiate(speaker_id="af_heart").request(JAPANESE).voice.language == "ja"
    assert negotiate(speaker_id="ef_dora").request("Hola, ¿qué tal?").voice.language == "es"
    assert negotiate(speaker_id="jf_alpha").request("東京").voice.language == "ja"  # Han alone: the voice's pick
    assert negotiate().request("東京").voice.language == "zh"


def test_a_familys_default_voice_speaks_in_the_texts_language():
    blog = VoiceNames(default="af_heart")
    options = negotiate(names=blog)
    assert options.request("Good morning.").voice.name == "af_heart"
    assert options.request(JAPANESE).voice.name == "jf_alpha"


def test_an_alias_speaks_as_a_voice_of_the_texts_language():
    options = negotiate(speaker_id="nova", names=VoiceNames(aliases={"nova": "af_bella"}))
    assert (options.request(JAPANESE).voice.name, options.request("Hi.").voice.name) == ("jf_alpha", "af_bella")


def test_a_per_response_voice_follows_the_text_too():
    options = negotiate()
    assert options.request(JAPANESE, speaker_id="man-1").voice.name == "jm_kumo"
    assert options.request("Hi.", speaker_id="man-1").voice.name == "am_adam"


def test_errors_name_the_field_as_the_client_spells_it():
    fields = {"speaker_id": "voice", "language": "lang_code", "format": "response_format"}
    with pytest.raises(FieldError) as bad_voice:
        negotiate(speaker_id="bob", fields=fields)
    assert bad_voice.value.field == "voice" and bad_voice.value.message.endswith(", got 'bob'")
    with pytest.raises(FieldError) as bad_format:
        negotiate(format="ogg", fields=fields)
    assert bad_format.value.field == "response_format"
    with pytest.raises(FieldError) as bad_script:
        negotiate(fields=fields).request("안녕하세요")
    assert bad_script.value.field == "lang_code" and "Kokoro has no language for" in bad_script.value.message


def test_a_text_in_a_script_the_engine_lacks_is_refused_naming_what_it_speaks():
    with pytest.raises(FieldError, match=r"latin script, which none of the languages this engine speaks \(ja\)"):
        negotiate(Engine(["ja"], ["jf_alpha"])).request("Hello there.")


def test_the_request_carries_the_clients_field_names_for_its_no_speech_error():
    assert negotiate(fields={"language": "lang_code"}).request(JAPANESE).field_names["language"] == "lang_code"
