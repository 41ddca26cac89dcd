"""The one text check every table family applies to caller-supplied strings."""

from __future__ import annotations

from .errors import InvalidInputError


def require_text(name: str, value: object, *, allow_empty: bool = True,
                 error: type[InvalidInputError] = InvalidInputError) -> str:
    """A str that SQLite stores and gives back unchanged: no NUL (C tools truncate at it),
    no lone surrogate (not encodable as UTF-8). Otherwise any characters are fine."""
    if not isinstance(value, str):
        raise error(f"{name} must be a string, got {type(value).__name__}")
    if "\x00" in value:
        raise error(f"{name} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise error(f"{name} contains a lone surrogate (not valid Unicode text)") from None
    if not allow_empty and not value.strip():
        raise error(f"{name} must not be empty")
    return value
