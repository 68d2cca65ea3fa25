"""A response to synthesize, with every option already resolved and validated."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..audio.formats import OutputSpec


@dataclass(frozen=True)
class Voice:
    language: str
    style: np.ndarray  # style pack (rows, 256)
    speed: float
    name: str = "custom"  # the Kokoro voice (or blend) that speaks, as the surfaces report it


@dataclass(eq=False)
class ResponseRequest:
    text: str
    voice: Voice
    output: OutputSpec
    with_timestamps: bool = False
    max_length_ms: int | None = None
    response_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    field_names: Mapping[str, str] = field(default_factory=dict)  # ours -> the client's (its errors name them)
