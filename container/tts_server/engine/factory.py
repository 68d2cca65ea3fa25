"""Builds the synthesizer the server runs (SPEC §7): which backend, on which device, which languages.

ENGINE=auto picks PyTorch when MODEL_DIR holds the deployed weights, else the embedded ONNX
export, so `make run` needs nothing; ENGINE=torch|onnx and DEVICE=auto|cuda|cpu override.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from .backend import AcousticBackend
from .g2p.base import G2P
from .languages import CODES, G2PCache, canonical
from .model_dir import ModelDir, ModelDirError
from .onnx_backend import OnnxBackend
from .pauses import Pauses
from .synthesizer import Synthesizer


def choose_engine(engine: str, model_dir: str | None) -> str:
    if engine != "auto":
        return engine
    return "torch" if model_dir and ModelDir(Path(model_dir)).holds_weights() else "onnx"


@contextlib.contextmanager
def timed(phases: dict[str, float], name: str):
    """Adds the block's wall seconds to phases[name] (the start-up phases /ping reports)."""
    began = time.perf_counter()
    try:
        yield
    finally:
        phases[name] = phases.get(name, 0.0) + time.perf_counter() - began


def build_backend(engine: str = "auto", device: str = "auto", model_dir: str | None = None,
                  threads: int | None = None) -> AcousticBackend:
    """The backend, with `load_phases`: seconds spent importing its libraries and loading its weights."""
    chosen = choose_engine(engine, model_dir)
    phases: dict[str, float] = {}
    if chosen == "onnx":
        if device == "cuda":
            raise ModelDirError("DEVICE=cuda: the embedded ONNX engine runs on the CPU only (use ENGINE=torch)")
        with timed(phases, "weights"):  # onnxruntime itself came with the server's imports
            backend = OnnxBackend(threads=threads)
    else:
        if not model_dir:
            raise ModelDirError("ENGINE=torch: MODEL_DIR is not set (it must hold config.json, kokoro-v1_0.pth, voices/)")
        directory = ModelDir(Path(model_dir))
        with timed(phases, "weights check"):
            directory.check()  # a file missing or damaged is told before seconds of torch's and kokoro's imports
        with timed(phases, "engine imports"):
            from .torch_backend import TorchBackend, pick_device  # torch only when it serves
            device = pick_device(device)  # a GPU deploy without a usable GPU fails before kokoro's imports
            import kokoro  # noqa: F401 - transformers: seconds, an import rather than the weights' time
        with timed(phases, "weights"):
            backend = TorchBackend(directory, device=device, threads=threads)
    backend.load_phases = phases
    return backend


def build_synthesizer(engine: str = "auto", device: str = "auto", model_dir: str | None = None,
                      threads: int | None = None, pauses: Pauses | None = None,
                      max_batch: int | None = None, languages: list[str] | None = None) -> Synthesizer:
    backend = build_backend(engine, device, model_dir, threads)
    return Synthesizer(backend, LazyG2P(languages or list(CODES)), pauses, max_batch)


class LazyG2P(Mapping[str, G2P]):
    """The served languages' G2P, each built on its first call (the warm-up calls them all):
    the mapping hands out deferred G2Ps, so copying it (TextFrontend does) builds nothing."""

    def __init__(self, languages: list[str], cache: G2PCache | None = None):
        self._codes = [canonical(code) for code in languages]
        self._cache = cache or G2PCache()

    def __getitem__(self, code: str) -> G2P:
        if code not in self._codes:
            raise KeyError(code)
        return _Deferred(code, self._cache)

    def __iter__(self) -> Iterator[str]:
        return iter(self._codes)

    def __len__(self) -> int:
        return len(self._codes)


class _Deferred:
    """One language's G2P, built by the cache on the first call (once, whichever thread calls)."""

    def __init__(self, language: str, cache: G2PCache):
        self.language = language
        self._cache = cache

    def __call__(self, text: str):
        return self._cache.get(self.language)(text)

