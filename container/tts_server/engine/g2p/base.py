"""The G2P interface: text -> phonemes, each piece tied to the characters it came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class PhonemeSpan:
    """Phonemes for text[start:end]; start == end marks a separator (a space) with no source."""

    phonemes: str
    start: int
    end: int


class G2P(Protocol):
    language: str

    def __call__(self, text: str) -> list[PhonemeSpan]: ...
