"""The runtime reads its slice of the settings (the rest of it, loading and the warm-up, is
tests/container/test_cold_start.py's)."""

import pytest

from tts_server.runtime import ModelRuntime
from tts_server.settings import Settings


@pytest.fixture
def built():
    runtimes = []

    def build(settings=None):
        runtimes.append(ModelRuntime(lambda: None, settings))
        return runtimes[-1]

    yield build
    for runtime in runtimes:
        runtime.text.shutdown()
        runtime.codec.shutdown()


def test_without_settings_the_runtime_has_the_settings_defaults(built):
    runtime, defaults = built(), Settings()
    assert runtime.scheduler.preemption is (defaults.preemption == "on") is True
    assert runtime.fast_first_fragment == defaults.fast_first_fragment_chars == 10
    assert not runtime.voice_policy.strict and runtime.voice_policy.aliases == {}


def test_the_runtime_follows_the_environment(built, monkeypatch):
    monkeypatch.setenv("PREEMPTION", "off")
    monkeypatch.setenv("FAST_FIRST_FRAGMENT_CHARS", "0")
    monkeypatch.setenv("VOICE_FALLBACK", "strict")
    monkeypatch.setenv("VOICE_ALIASES", '{"narrator": "am_adam"}')
    runtime = built(Settings.from_env())
    assert runtime.scheduler.preemption is False
    assert runtime.fast_first_fragment is None  # 0: never cut a first sentence
    assert runtime.voice_policy.strict and runtime.voice_policy.aliases == {"narrator": "am_adam"}
