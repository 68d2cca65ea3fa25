"""Admission control's rules, without a server: capacity from the measured real-time factor or
the settings, slots taken and given back, refused at once above the limit."""

from types import SimpleNamespace

import pytest

from tts_server.admission import SESSIONS_PER_SYNTHESIS, Admission
from tts_server.config import Settings


def runtime(rtf, workers=1):
    return SimpleNamespace(realtime_factor=rtf, inference_workers=workers)


@pytest.mark.parametrize(
    "rtf, workers, syntheses",
    [(0.4, 1, 2), (0.6, 1, 1), (1.5, 1, 1), (0.4, 2, 5), (0.02, 1, 50), (None, 1, 1)],
)
def test_default_capacity_is_the_number_of_responses_that_all_stream_in_real_time(rtf, workers, syntheses):
    admission = Admission(runtime(rtf, workers))
    assert admission.syntheses.limit == syntheses
    assert admission.sessions.limit == SESSIONS_PER_SYNTHESIS * syntheses


def test_settings_override_the_derived_capacity():
    admission = Admission(runtime(0.02), max_syntheses=3, max_sessions=7, retry_after_s=4)
    assert (admission.syntheses.limit, admission.sessions.limit) == (3, 7)
    assert admission.snapshot() == {"syntheses": 0, "max_syntheses": 3, "sessions": 0, "max_sessions": 7}
    error = admission.overloaded()
    assert (str(error.code), error.message, error.retry_after, error.http_status) == (
        "service_overloaded", "server at capacity, retry later", 4, 503)


def test_capacity_waits_for_the_measurement():
    engine = runtime(None)
    admission = Admission(engine)
    assert admission.syntheses.limit == 1
    engine.realtime_factor = 0.25  # measured at warm-up, after the app was built
    assert admission.syntheses.limit == 4


def test_slots_are_refused_at_the_limit_and_released_once():
    gauge = Admission(runtime(None), max_syntheses=2).syntheses
    first, second = gauge.try_take(), gauge.try_take()
    assert first and second and gauge.try_take() is None
    first.release()
    first.release()  # a second release gives back nothing more
    assert gauge.in_use == 1
    assert gauge.try_take() is not None and gauge.try_take() is None


def test_admitted_work_is_counted_above_the_limit_but_never_refused():
    gauge = Admission(runtime(None), max_syntheses=1).syntheses
    held = [gauge.take() for _ in range(3)]  # active responses of sessions already admitted
    assert gauge.in_use == 3 and gauge.try_take() is None
    for slot in held:
        slot.release()
    assert gauge.in_use == 0 and gauge.try_take() is not None


def test_settings_read_the_environment(monkeypatch):
    monkeypatch.setenv("MAX_CONCURRENT_SYNTHESES", "6")
    monkeypatch.setenv("MAX_SESSIONS", "20")
    monkeypatch.setenv("OVERLOAD_RETRY_AFTER_S", "2")
    monkeypatch.setenv("MODEL_ID", "kokoro-custom")
    settings = Settings.from_env()
    assert (settings.max_syntheses, settings.max_sessions, settings.overload_retry_after_s, settings.model_id) == (
        6, 20, 2, "kokoro-custom")
    monkeypatch.setenv("MAX_CONCURRENT_SYNTHESES", "0")  # 0: derive it
    assert Settings.from_env().max_syntheses is None
