"""Field types every client family validates with: text, speed, ids."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

MAX_TEXT_CHARS = 3500
MAX_ID_CHARS = 128  # response ids are echoed in every event of their response
Speed = Annotated[float, Field(ge=0.5, le=2.0)]
ResponseId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]


def _not_blank(text: str) -> str:
    if not text.strip():
        raise PydanticCustomError("string_blank", "String should contain a character that is not whitespace")
    return text


# Text to speak in one request: not empty, not only blanks, within the length limit.
Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS), AfterValidator(_not_blank)]


def echoed_id(value) -> str | None:
    """A client's id to tag an error with: only one that is a valid id (never a megabyte echoed back)."""
    return value if isinstance(value, str) and 0 < len(value) <= MAX_ID_CHARS else None
