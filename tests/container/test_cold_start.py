"""The warm-up before /ping 200 (runtime.py): it proves the model in the default language, loads
every language, profiles batch sizes only as far as they pay, and records the voices' reference
statistics where asked."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tts_server import runtime as runtime_module
from tts_server.runtime import ModelRuntime


class FakeSynthesizer:
    """Records what the warm-up asks for; a run of n pieces 'costs' cost[n] seconds."""

    def __init__(self, cost: dict[int, float], max_batch: int = 8):
        self.languages = ["en-US", "ja", "zh"]
        self.calls: list[str] = []
        self.runner = SimpleNamespace(max_batch=max_batch, run=lambda jobs: self.calls.append(f"run {len(jobs)}"))
        self.cost = cost

    def language(self, requested):
        return "ja"

    def tokenize(self, text, start, end, language):
        self.calls.append(f"G2P {language}")

    def voice_book(self, language):
        return SimpleNamespace(resolve=lambda name: "style", voice_of=lambda name: "jf_alpha")

    def learn_norms(self, voice, piece):
        self.calls.append(f"learn {voice}")

    def assemble(self, piece, results, engine_seconds):
        return SimpleNamespace(duration_ms=2000)

    def prepare(self, *args):
        return SimpleNamespace(jobs=["job"])


@pytest.fixture
def priced(monkeypatch):
    def make(cost, max_batch=8):
        synthesizer = FakeSynthesizer(cost, max_batch)

        def timed_run(function, *args):  # (jobs) for a run, (voice, piece) for learn_norms: one piece
            return synthesizer.cost[len(args[0]) if len(args) == 1 else 1], function(*args)

        monkeypatch.setattr(runtime_module, "_timed", timed_run)
        return synthesizer
    return make


def test_the_default_language_speaks_first_and_every_language_is_loaded_before_the_profile(priced):
    synthesizer = priced({1: 1.0, 2: 2.4})
    phases: dict[str, float] = {}
    ModelRuntime._warm_up(synthesizer, phases)
    assert synthesizer.calls[:4] == ["G2P ja", "run 1", "G2P en-US", "G2P zh"]
    assert all(call.startswith("run") for call in synthesizer.calls[4:])
    assert list(phases)[:4] == ["G2P ja", "first synthesis", "G2P en-US", "G2P zh"]


def test_the_first_synthesis_records_the_default_voices_statistics_where_asked(priced):
    synthesizer = priced({1: 1.0}, max_batch=1)
    phases: dict[str, float] = {}
    assert ModelRuntime._warm_up(synthesizer, phases, record=True) == {1: 0.5}  # it times the profile as a run would
    assert synthesizer.calls[:2] == ["G2P ja", "learn jf_alpha"] and "run 1" not in synthesizer.calls
    assert list(phases)[:2] == ["G2P ja", "first synthesis"]


def test_every_languages_own_voices_get_their_statistics_once_each_from_its_warm_up_sentence():
    recorded = []
    books = {"ja": ["jf_alpha", "jf_nezumi"], "en-US": ["af_heart"]}
    synthesizer = SimpleNamespace(
        languages=["ja", "en-US"], references={"jf_alpha": "from the first synthesis"},
        voice_book=lambda language: SimpleNamespace(own_voices=books[language], resolve=lambda voice: voice),
        prepare=lambda text, start, end, style, speed, language: (text, style),
        learn_norms=lambda voice, piece: (recorded.append(piece), synthesizer.references.__setitem__(voice, piece)))
    runtime_module.learn_norms(synthesizer)
    assert recorded == [(runtime_module.WARMUP_TEXTS["ja"], "jf_nezumi"), (runtime_module.WARMUP_TEXT_LATIN, "af_heart")]


@pytest.mark.parametrize("setting, device, every", [("auto", "cuda", True), ("auto", "cpu", False), ("all", "cpu", True),
                                                     ("default", "cuda", False), ("none", "cuda", False)])
def test_every_voices_statistics_are_recorded_where_asked_and_with_auto_on_cuda_only(setting, device, every):
    assert runtime_module.learns_every_voice(setting, device) is every


def test_a_cpu_profile_stops_at_the_first_batch_size_that_does_not_pay(priced):
    # Batch 2 costs each piece 1.2x running alone: batches 4 and 8 would pay even less.
    synthesizer = priced({1: 1.0, 2: 2.4, 4: 5.0, 8: 10.0})
    profile = ModelRuntime._warm_up(synthesizer, {})
    assert profile == {1: 0.5, 2: 0.6}  # engine seconds per audio second (2 s of audio per piece)
    # One run of batch 2: a second run can only lower its figure, and it is already no gain at all.
    assert [c for c in synthesizer.calls if c.startswith("run")] == ["run 1", "run 1", "run 2"]


def test_a_runner_of_one_piece_a_run_is_timed_by_the_first_synthesis_alone(priced):
    synthesizer = priced({1: 1.0}, max_batch=1)
    phases: dict[str, float] = {}
    assert ModelRuntime._warm_up(synthesizer, phases) == {1: 0.5}
    assert [c for c in synthesizer.calls if c.startswith("run")] == ["run 1"]
    assert not [name for name in phases if name.startswith("speed profile")]


def test_a_gpu_profile_goes_on_while_batches_pay(priced):
    synthesizer = priced({1: 1.0, 2: 1.2, 4: 1.6, 8: 6.4}, max_batch=8)
    profile = ModelRuntime._warm_up(synthesizer, {})
    assert list(profile) == [1, 2, 4, 8]
    assert profile[4] == pytest.approx(1.6 / 8)
    assert [c for c in synthesizer.calls if c.startswith("run")] == ["run 1", "run 1", "run 2", "run 2", "run 4",
                                                                     "run 4", "run 8", "run 8"]
