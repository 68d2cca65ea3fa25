"""Builds the synthesizer the server runs (SPEC §7): which backend, on which device, which languages.

ENGINE=auto picks PyTorch when MODEL_DIR holds the deployed weights, else the embedded ONNX
export, so `make run` needs nothing; ENGINE=torch|onnx and DEVICE=auto|cuda|cpu override.
"""

from __future__ import annotations

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


def build_backend(engine: str = "auto", device: str = "auto", model_dir: str | None = None,
                  threads: int | None = None) -> AcousticBackend:
    chosen = choose_engine(engine, model_dir)
    if chosen == "onnx":
        if device == "cuda":
            raise ModelDirError("DEVICE=cuda: the embedded ONNX engine runs on the CPU only (use ENGINE=torch)")
        return OnnxBackend(threads=threads)
    if not model_dir:
        raise ModelDirError("ENGINE=torch: MODEL_DIR is not set (it must hold config.json, kokoro-v1_0.pth, voices/)")
    from .torch_backend import TorchBackend  # torch only when it serves

    return TorchBackend(ModelDir(Path(model_dir)), device=device, threads=threads)


def build_synthesizer(engine: str = "auto", device: str = "auto", model_dir: str | None = None,
                      threads: int | None = None, pauses: Pauses | None = None,
                      max_batch: int | None = None, languages: list[str] | None = None) -> Synthesizer:
    backend = build_backend(engine, device, model_dir, threads)
    return Synthesizer(backend, LazyG2P(languages or list(CODES)), pauses, max_batch)


class LazyG2P(Mapping[str, G2P]):
    """The served languages' G2P, each built on first use (the warm-up uses them all)."""

    def __init__(self, languages: list[str]):
        self._codes = [canonical(code) for code in languages]
        self._cache = G2PCache()

    def __getitem__(self, code: str) -> G2P:
        if code not in self._codes:
            raise KeyError(code)
        return self._cache.get(code)

    def __iter__(self) -> Iterator[str]:
        return iter(self._codes)

    def __len__(self) -> int:
        return len(self._codes)


def embedded_synthesizer(threads: int | None = None, languages: list[str] | None = None) -> Synthesizer:
    return build_synthesizer("onnx", "cpu", None, threads, languages=languages)
