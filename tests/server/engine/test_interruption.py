"""A model run stops part-way when the scheduler interrupts it, on both real engines, and the
engine then serves the next run as if nothing had happened (the scheduler's preemption)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from cores import ENGINE_THREADS

from tts_server.engine.backend import Interrupted, RunControl
from tts_server.engine.model_dir import ModelDir
from tts_server.engine.onnx_backend import OnnxBackend
from tts_server.engine.torch_backend import TorchBackend

GENEROUS_S = 120


class WatchedControl(RunControl):
    """Tells the test when the backend has armed its stop (the run is about to start or running)."""

    def __init__(self):
        super().__init__()
        self.armed = threading.Event()

    def on_interrupt(self, stop):
        super().on_interrupt(stop)
        self.armed.set()


def longest_request(backend):
    """A whole context of phonemes: seconds of model time on a CPU, so a stop lands mid-run."""
    vocab = sorted(set(backend.vocab.values()))
    ids = [int(i) for i in np.random.default_rng(7).choice(vocab, backend.max_tokens)]
    return ids, backend.voices[sorted(backend.voices)[0]][backend.max_tokens - 1], 1.0


def short_request(backend):
    ids = [backend.vocab[c] for c in "koɲɲiʨiβa."]
    return ids, backend.voices[sorted(backend.voices)[0]][len(ids) - 1], 1.0


@pytest.fixture(scope="module")
def onnx_backend():
    return OnnxBackend(threads=ENGINE_THREADS)


@pytest.fixture(scope="module")
def torch_backend(model_dir):
    return TorchBackend(ModelDir(Path(model_dir)), device="cpu", threads=ENGINE_THREADS)


def test_the_onnx_engine_stops_a_running_inference_and_then_serves_normally(onnx_backend):
    ids, style, speed = short_request(onnx_backend)
    before = onnx_backend.infer(ids, style, speed)
    control = WatchedControl()
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(onnx_backend.infer, *longest_request(onnx_backend), control)
        assert control.armed.wait(GENEROUS_S)
        control.interrupt()
        with pytest.raises(Interrupted):
            running.result(GENEROUS_S)
    after = onnx_backend.infer(ids, style, speed)
    np.testing.assert_array_equal(after.durations, before.durations)
    assert len(after.audio) == len(before.audio)


def test_an_interrupted_control_stops_a_run_before_it_starts(onnx_backend):
    control = RunControl()
    control.interrupt()
    with pytest.raises(Interrupted):
        onnx_backend.infer(*short_request(onnx_backend), control)


@pytest.mark.parametrize("batched", [False, True], ids=["alone", "batch"])
def test_the_torch_engine_stops_inside_the_decoder_and_then_serves_normally(torch_backend, batched):
    ids, style, speed = short_request(torch_backend)
    before = torch_backend.infer(ids, style, speed)
    control = RunControl()
    # Interrupt from inside the run, as the decoder starts (both forwards call F0_conv): the stop
    # must land mid-forward, at the next layer.
    hook = torch_backend.model.decoder.F0_conv.register_forward_pre_hook(lambda module, args: control.interrupt())
    try:
        with pytest.raises(Interrupted):
            if batched:
                torch_backend.infer_batch([(ids, style, speed), (ids[:5], style, speed)], control)
            else:
                torch_backend.infer(ids, style, speed, control)
    finally:
        hook.remove()
    after = torch_backend.infer(ids, style, speed)
    np.testing.assert_array_equal(after.durations, before.durations)
