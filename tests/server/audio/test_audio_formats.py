"""negotiate() / OutputSpec: exactly the format and sample_rate rules of SPEC §3."""

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tts_server.audio import AUDIO_FORMATS, OutputSpec, UnsupportedAudio, negotiate

VARIABLE_RATE = ("pcm_f32", "pcm_16", "wav", "flac", "mp3", "aac")
FIXED_RATE = {"mulaw": 8000, "alaw": 8000, "opus": 24000}
RATES = (8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000)

RATE_MESSAGE = "sample_rate: Input should be 8000, 11025, 16000, 22050, 24000, 32000, 44100 or 48000"
FORMAT_MESSAGE = ("format: Input should be 'pcm_f32', 'pcm_16', 'mulaw', 'alaw', 'opus', "
                  "'mp3', 'wav', 'flac' or 'aac'")


def test_the_formats_are_those_of_the_spec():
    assert set(AUDIO_FORMATS) == set(VARIABLE_RATE) | set(FIXED_RATE)
    assert AUDIO_FORMATS[0] == "pcm_f32"


def test_defaults_are_float_pcm_at_24k():
    assert negotiate() == OutputSpec("pcm_f32", 24000)


@pytest.mark.parametrize("fmt", VARIABLE_RATE)
@pytest.mark.parametrize("rate", RATES)
def test_variable_rate_formats_take_each_spec_rate(fmt, rate):
    assert negotiate(fmt, rate) == OutputSpec(fmt, rate)


@pytest.mark.parametrize("fmt", VARIABLE_RATE)
def test_variable_rate_formats_default_to_24k(fmt):
    assert negotiate(fmt).sample_rate == 24000
    assert negotiate(fmt, None).sample_rate == 24000


@pytest.mark.parametrize("fmt", FIXED_RATE)
@pytest.mark.parametrize("requested", [None, 8000, 16000, 24000, 44100, 0])
def test_fixed_rate_formats_ignore_the_requested_rate(fmt, requested):
    assert negotiate(fmt, requested) == OutputSpec(fmt, FIXED_RATE[fmt])


@pytest.mark.parametrize("fmt", VARIABLE_RATE)
@pytest.mark.parametrize("rate", [12000, 96000, 22051, 44, 0, -24000, 24001, True, "24000"])
def test_other_rates_are_rejected_naming_the_field_and_accepted_values(fmt, rate):
    with pytest.raises(UnsupportedAudio) as caught:
        negotiate(fmt, rate)
    assert str(caught.value) == RATE_MESSAGE
    assert caught.value.field == "sample_rate"
    assert caught.value.message == "Input should be 8000, 11025, 16000, 22050, 24000, 32000, 44100 or 48000"


@given(st.integers().filter(lambda r: r not in RATES))
def test_any_other_integer_rate_is_rejected(rate):
    with pytest.raises(UnsupportedAudio, match="^sample_rate: "):
        negotiate("pcm_16", rate)


@pytest.mark.parametrize("fmt", ["ogg", "PCM_16", "linear16", "pcm", "", " mp3", None, 3])
def test_unknown_formats_are_rejected_naming_the_field_and_accepted_values(fmt):
    with pytest.raises(UnsupportedAudio) as caught:
        negotiate(fmt, 24000)
    assert str(caught.value) == FORMAT_MESSAGE
    assert caught.value.field == "format"


@given(st.text(max_size=12).filter(lambda f: f not in AUDIO_FORMATS))
def test_any_other_format_name_is_rejected(fmt):
    with pytest.raises(UnsupportedAudio, match="^format: "):
        negotiate(fmt)


def test_the_error_is_a_value_error():
    with pytest.raises(ValueError):
        negotiate("mp3", 44101)


def test_a_spec_built_directly_is_checked_too():
    with pytest.raises(UnsupportedAudio, match="^sample_rate: "):
        OutputSpec("opus", 16000)
    with pytest.raises(UnsupportedAudio, match="^format: "):
        OutputSpec("ogg", 24000)


def test_a_spec_is_an_immutable_value():
    spec = negotiate("mp3", 16000)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.sample_rate = 8000
    assert {spec, negotiate("mp3", 16000)} == {spec}


@pytest.mark.parametrize("fmt, rate, media_type", [
    ("mp3", 24000, "audio/mpeg"),
    ("opus", 24000, "audio/ogg"),
    ("wav", 16000, "audio/wav"),
    ("flac", 8000, "audio/flac"),
    ("aac", 24000, "audio/aac"),
    ("mulaw", 8000, "audio/basic"),
    ("alaw", 8000, "audio/x-alaw-basic"),
    ("pcm_16", 16000, "audio/L16;rate=16000"),
    ("pcm_f32", 8000, "audio/pcm;rate=8000;encoding=float;bits=32"),
])
def test_media_types(fmt, rate, media_type):
    assert negotiate(fmt, rate).media_type == media_type
