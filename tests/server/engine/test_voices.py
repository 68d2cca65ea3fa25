"""Speaker ids: presets, raw voices, blends and custom style vectors."""

import base64

import numpy as np
import pytest

from tts_server.engine.voices import VoiceBook, presets
from tts_server.wire.errors import FieldError

VOICES = {name: np.full((510, 256), i, np.float32) for i, name in enumerate(["jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo"])}


@pytest.fixture
def book():
    return VoiceBook(VOICES, 510)


def test_presets_map_to_the_languages_voices():
    assert presets(list(VOICES)) == {
        "default": "jf_alpha", "woman-1": "jf_alpha", "woman-2": "jf_gongitsune",
        "woman-3": "jf_nezumi", "woman-4": "jf_tebukuro", "man-1": "jm_kumo",
    }


def test_a_languages_own_voices_are_those_of_its_letter_or_else_all():
    mixed = VOICES | {"af_heart": VOICES["jf_alpha"]}
    assert VoiceBook(mixed, 510, "j").own_voices == list(VOICES)
    assert VoiceBook(mixed, 510, "e").own_voices == sorted(mixed), "none of its own: every voice"


def test_presets_raw_ids_and_blends_resolve(book):
    assert book.resolve("man-1")[0, 0] == 4
    assert book.resolve("jf_nezumi")[0, 0] == 2
    assert book.resolve("jf_alpha:0.7+jf_nezumi:0.3")[0, 0] == pytest.approx(0.6)
    assert book.resolve("woman-2+man-1")[0, 0] == pytest.approx(2.5)  # equal weights by default


@pytest.mark.parametrize("speaker", ["nobody", "jf_alpha:0+jm_kumo", "jf_alpha:x", "jf_alpha:-1"])
def test_bad_speakers_name_the_field_and_choices(book, speaker):
    with pytest.raises(FieldError) as error:
        book.resolve(speaker)
    assert error.value.field == "speaker_id"


def test_unknown_speaker_lists_what_exists(book):
    with pytest.raises(FieldError) as error:
        book.resolve("nobody")
    assert "'default', 'woman-1'" in error.value.message and "'jm_kumo'" in error.value.message


def test_custom_style_vector_one_row_or_a_whole_pack(book):
    row = np.arange(256, dtype="<f4")
    pack = book.custom(base64.b64encode(row.tobytes()).decode())
    assert pack.shape == (510, 256) and np.array_equal(pack[37], row)
    full = np.random.default_rng(0).random((510, 256)).astype("<f4")
    assert np.array_equal(book.custom(base64.b64encode(full.tobytes()).decode()), full)
    with pytest.raises(FieldError) as error:
        book.custom(base64.b64encode(b"\0" * 12).decode())
    assert error.value.field == "spk_ref_audio_tokens"
    with pytest.raises(FieldError):
        book.custom("not base64!!")
