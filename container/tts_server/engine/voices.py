"""Speaker ids -> Kokoro style packs: presets, raw voice ids, weighted blends, custom vectors."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping

import numpy as np

from ..wire.errors import FieldError, one_of

STYLE_DIM = 256


def presets(voice_ids: list[str]) -> dict[str, str]:
    """default, woman-1.., man-1.. for a language's Kokoro voices (xf_* female, xm_* male)."""
    women = sorted(v for v in voice_ids if v[1:2] == "f")
    men = sorted(v for v in voice_ids if v[1:2] == "m")
    table = {f"woman-{i}": v for i, v in enumerate(women, 1)} | {f"man-{i}": v for i, v in enumerate(men, 1)}
    first = (women or men or sorted(voice_ids))[:1]
    return {"default": first[0]} | table if first else {}


class VoiceBook:
    """The voices of one language: presets over its own voices (those whose id starts with
    its letter), and any voice of the engine by id or in a blend, whatever its language.
    A language with no voice of its own gets presets over all of them."""

    def __init__(self, voices: Mapping[str, np.ndarray], rows: int, letter: str | None = None):
        self._voices = voices
        self._rows = rows
        own = sorted(v for v in voices if letter and v.startswith(letter))
        self.native = bool(own)  # the language has voices of its own (else its presets cover them all)
        self._own = own or sorted(voices)
        self._presets = presets(self._own)

    @property
    def speakers(self) -> list[str]:
        return [*self._presets, *self._own]

    @property
    def own_voices(self) -> list[str]:
        """The language's own voices (every voice of the engine where it has none of its own)."""
        return list(self._own)

    @property
    def voice_ids(self) -> list[str]:
        """Every voice of the engine (not only this language's own)."""
        return sorted(self._voices)

    def has(self, voice_id: str) -> bool:
        return voice_id in self._voices

    def knows(self, name: str) -> bool:
        """A preset or a voice id this book resolves."""
        return name in self._presets or name in self._voices

    def voice_of(self, name: str) -> str:
        """The Kokoro voice a preset stands for (a voice id stands for itself)."""
        return self._presets.get(name, name)

    def resolve(self, speaker_id: str) -> np.ndarray:
        """A style pack (rows, 256) for a preset, a voice id or a blend "a:0.7+b:0.3"."""
        parts = [self._weighted(part) for part in speaker_id.split("+")]
        total = sum(weight for _, weight in parts)
        return sum(pack * (weight / total) for pack, weight in parts).astype(np.float32)

    def _weighted(self, part: str) -> tuple[np.ndarray, float]:
        name, _, weight_text = part.strip().partition(":")
        voice = self._presets.get(name, name)
        if voice not in self._voices:
            others = "" if len(self._own) == len(self._voices) else ", any other voice of the engine"
            raise FieldError(
                "speaker_id",
                one_of(self.speakers) + f"{others}, or a blend such as 'jf_alpha:0.7+jf_nezumi:0.3'",
            )
        try:
            weight = float(weight_text) if weight_text else 1.0
        except ValueError:
            weight = -1.0
        if not weight > 0:
            raise FieldError("speaker_id", f"blend weight of {name!r} should be a number greater than 0")
        return self._voices[voice], weight

    def custom(self, encoded: str) -> np.ndarray:
        """spk_ref_audio_tokens: base64 float32, one style vector (256) or a whole pack (rows x 256)."""
        try:
            values = np.frombuffer(base64.b64decode(encoded, validate=True), dtype="<f4")
        except (binascii.Error, ValueError):
            values = np.zeros(0, dtype="<f4")
        if values.size == STYLE_DIM:
            return np.tile(values, (self._rows, 1)).astype(np.float32)
        if values.size == self._rows * STYLE_DIM:
            return values.reshape(self._rows, STYLE_DIM).astype(np.float32)
        raise FieldError(
            "spk_ref_audio_tokens",
            f"Input should be base64 of {STYLE_DIM} or {self._rows}x{STYLE_DIM} little-endian float32 values",
        )
