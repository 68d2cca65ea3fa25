"""Builds the synthesizer the server runs: the embedded ONNX engine unless weights are mounted."""

from __future__ import annotations

from .g2p.japanese import JapaneseG2P
from .onnx_backend import OnnxBackend
from .synthesizer import Synthesizer


def embedded_synthesizer(threads: int | None = None) -> Synthesizer:
    return Synthesizer(OnnxBackend(threads=threads), {"ja": JapaneseG2P()})
