"""Settings from the environment, with clear errors naming the variable."""

import pytest

from tts_server.app import create_app
from tts_server.families.blog.settings import BlogSettings
from tts_server.families.bulbul.settings import BulbulSettings
from tts_server.settings import Settings
from tts_server.transport.state import app_state


def test_defaults_accept_bulbuls_model_ids_beside_the_served_one(monkeypatch):
    for name in ("MODEL_ID", "MODEL_ALIASES", "BULBUL_SPEAKER_MAP", "MAX_REQUEST_AGE_S", "API_KEYS"):
        monkeypatch.delenv(name, raising=False)
    state = app_state(create_app(Settings.from_env()))
    settings = state.settings  # the app adds the client families' model ids
    assert settings.accepted_models == ("kokoro-82m", "bulbul:v3", "bulbul:v2", "bulbul:v4-flash")
    assert settings.api_keys is None  # off unless set: no surface asks for a key
    # Each family's own settings, read from the environment with the app.
    assert state.family(BulbulSettings).bulbul_speaker_map is None and state.family(BlogSettings).max_request_age_s == 56


def test_aliases_speaker_map_and_age_are_configurable(monkeypatch):
    monkeypatch.setenv("MODEL_ID", "bulbul:v3")
    monkeypatch.setenv("MODEL_ALIASES", "")  # the seed's contract: bulbul:v3 only
    monkeypatch.setenv("BULBUL_SPEAKER_MAP", '{"Anushka": "jf_nezumi"}')
    monkeypatch.setenv("MAX_REQUEST_AGE_S", "10.5")
    monkeypatch.setenv("API_KEYS", "key-one, key-two")
    app = create_app(Settings.from_env())
    state = app_state(app)
    assert state.settings.accepted_models == ("bulbul:v3",)
    assert state.settings.api_keys == ("key-one", "key-two")
    assert state.family(BulbulSettings).bulbul_speaker_map == {"anushka": "jf_nezumi"}
    assert state.family(BlogSettings).max_request_age_s == 10.5


@pytest.mark.parametrize("name, value, words", [
    ("BULBUL_SPEAKER_MAP", "anushka=jf_alpha", "BULBUL_SPEAKER_MAP: Input should be a JSON object"),
    ("BULBUL_SPEAKER_MAP", '{"anushka": 5}', "BULBUL_SPEAKER_MAP: Input should be a JSON object"),
    ("MAX_REQUEST_AGE_S", "soon", "MAX_REQUEST_AGE_S: Input should be a valid number"),
    ("MAX_REQUEST_AGE_S", "-1", "MAX_REQUEST_AGE_S: Input should be greater than or equal to 0"),
    ("PREEMPTION", "sometimes", "PREEMPTION: Input should be 'on' or 'off'"),
])
def test_bad_values_stop_the_server_naming_the_setting(monkeypatch, name, value, words):
    monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit, match=words):
        create_app(Settings.from_env())  # a family's own settings are read with the app
