"""Errors that name the offending field, rendered pydantic style by the protocol layer."""

from __future__ import annotations


class FieldError(ValueError):
    """A request field holds a value the server cannot serve; message names accepted values."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def one_of(values) -> str:
    """Pydantic's wording for a choice: "Input should be 'a', 'b' or 'c'"."""
    quoted = [repr(v) if isinstance(v, str) else str(v) for v in values]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f"Input should be {listed}"
