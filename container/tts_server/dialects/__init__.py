"""Protocol dialects: thin adapters from a wire format onto the one session engine.

The first message of a session decides its dialect (SPEC §4).
"""

from __future__ import annotations

from .base import Dialect
from .bulbul import BulbulDialect
from .canonical import CanonicalDialect
from .simple import SimpleDialect


def choose_dialect(first: dict) -> type[Dialect]:
    """`open` -> canonical; `config` -> Bulbul; no `type` but `text` -> simple; anything else
    -> canonical, whose answer to it is the fatal 'the first event must be open'."""
    if first.get("type") == "config":
        return BulbulDialect
    if "type" not in first and "text" in first:
        return SimpleDialect
    return CanonicalDialect
