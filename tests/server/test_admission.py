"""Admission control's rules, without a server: capacity from the warm-up's real-time factors per
batch size or the settings, slots taken and given back, refused at once above the limit, idle
sessions costing a connection slot only, and the first-audio prediction shedding a queue."""

from types import SimpleNamespace

import pytest

from tts_server.admission import FIRST_PIECE_AUDIO_S, Admission
from tts_server.scheduler import Load
from tts_server.settings import Settings


class FakeScheduler(SimpleNamespace):
    """What admission reads of the scheduler: its load, at one moment."""

    def load(self) -> Load:
        return Load(self.queued_first_pieces, self.running, active_streams=0, max_batch=1, batch_sizes={},
                    interruptions={})


def runtime(profile=None, queued_first=0, running=False, first_part_s=None):
    scheduler = FakeScheduler(queued_first_pieces=queued_first, running=running)
    return SimpleNamespace(profile=profile or {}, realtime_factor=(profile or {}).get(1), scheduler=scheduler,
                           first_part_s=first_part_s)


@pytest.mark.parametrize(
    "profile, syntheses",
    [({1: 0.4}, 2), ({1: 0.6}, 1), ({1: 1.5}, 1), ({1: 0.02}, 50), (None, 1),
     ({1: 0.3, 2: 0.2, 4: 0.12}, 8)],  # batching: four pieces together cost 0.12 s per audio second each
)
def test_default_capacity_is_the_most_streams_kept_ahead_of_playback(profile, syntheses):
    assert Admission(runtime(profile)).syntheses.limit == syntheses


def test_idle_sessions_cost_a_connection_slot_only():
    admission = Admission(runtime({1: 0.5}), Settings(max_sessions=60))
    sessions = [admission.sessions.try_take() for _ in range(50)]
    assert all(sessions) and admission.syntheses.in_use == 0
    assert admission.sessions.try_take() is not None, "50 idle sessions leave room for more"


def test_a_saturated_engine_refuses_requests_but_not_sessions_that_only_wait():
    admission = Admission(runtime({1: 0.5}), Settings(max_sessions=60))  # capacity 2
    held = [admission.syntheses.take() for _ in range(2)]  # two sessions speaking
    assert admission.syntheses.try_take() is None
    assert admission.sessions.try_take() is not None
    held[0].release()
    assert admission.syntheses.try_take() is not None


def test_a_queue_of_first_pieces_past_the_target_is_shed():
    engine = runtime({1: 0.5}, queued_first=2, running=True)
    admission = Admission(engine, Settings(max_concurrent_syntheses=10, target_first_audio_ms=2000))
    assert admission.predicted_first_audio_s() == pytest.approx(4 * 0.5 * FIRST_PIECE_AUDIO_S)
    assert admission.syntheses.try_take() is None and admission.sessions.try_take() is None
    engine.scheduler.queued_first_pieces = 0  # only the running batch ahead: an engine at work takes work
    assert admission.syntheses.try_take() is not None


def test_first_pieces_in_windows_are_predicted_by_their_first_window():
    """The warm-up timed a first piece's first audio (its front part and first window): a queue of
    first pieces costs that each, a fraction of their whole synthesis."""
    engine = runtime({1: 0.5}, queued_first=2, running=True, first_part_s=0.3)
    admission = Admission(engine, Settings(max_concurrent_syntheses=10, target_first_audio_ms=2000))
    assert admission.predicted_first_audio_s() == pytest.approx(4 * 0.3)
    assert admission.syntheses.try_take() is not None, "1.2 s predicted: within the target, admitted"
    engine.scheduler.queued_first_pieces = 6
    assert admission.syntheses.try_take() is None, "eight first windows ahead (2.4 s): shed"


def test_a_slow_idle_engine_still_takes_work():
    assert Admission(runtime({1: 5.0}), Settings(target_first_audio_ms=100)).syntheses.try_take() is not None


def test_settings_override_the_derived_capacity():
    admission = Admission(runtime({1: 0.02}), Settings(max_concurrent_syntheses=3, max_sessions=7,
                                                       overload_retry_after_s=4))
    assert (admission.syntheses.limit, admission.sessions.limit) == (3, 7)
    snapshot = admission.snapshot()
    assert (snapshot["syntheses"], snapshot["max_syntheses"], snapshot["sessions"], snapshot["max_sessions"]) == (
        0, 3, 0, 7)
    error = admission.overloaded()
    assert (str(error.code), error.message, error.retry_after, error.http_status) == (
        "service_overloaded", "server at capacity, retry later", 4, 503)


def test_capacity_waits_for_the_measurement():
    engine = runtime(None)
    admission = Admission(engine)
    assert admission.syntheses.limit == 1
    engine.profile = {1: 0.25}  # measured at warm-up, after the app was built
    assert admission.syntheses.limit == 4


def test_slots_are_refused_at_the_limit_and_released_once():
    gauge = Admission(runtime(), Settings(max_concurrent_syntheses=2)).syntheses
    first, second = gauge.try_take(), gauge.try_take()
    assert first and second and gauge.try_take() is None
    first.release()
    first.release()  # a second release gives back nothing more
    assert gauge.in_use == 1
    assert gauge.try_take() is not None and gauge.try_take() is None


def test_admitted_work_is_counted_above_the_limit_but_never_refused():
    gauge = Admission(runtime(), Settings(max_concurrent_syntheses=1)).syntheses
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
    monkeypatch.setenv("TARGET_FIRST_AUDIO_MS", "800")
    monkeypatch.setenv("MAX_BATCH", "8")
    settings = Settings.from_env()
    assert (settings.max_concurrent_syntheses, settings.max_sessions, settings.overload_retry_after_s, settings.model_id) == (
        6, 20, 2, "kokoro-custom")
    assert (settings.target_first_audio_ms, settings.max_batch) == (800, 8)
    admission = Admission(runtime({1: 0.02}), settings)  # what the app builds from them
    assert (admission.syntheses.limit, admission.sessions.limit, admission.overloaded().retry_after) == (6, 20, 2)
    monkeypatch.setenv("MAX_CONCURRENT_SYNTHESES", "0")  # 0: derive it
    assert Settings.from_env().max_concurrent_syntheses is None
