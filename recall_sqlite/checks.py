"""The checks every table family applies to caller-supplied values, so each rule (what
text SQLite round-trips, what counts as an integer) is written once."""

from __future__ import annotations

from .errors import InvalidInputError

# SQLite integers are signed 64-bit: a larger Python int cannot be bound at all.
INT64_MAX = (1 << 63) - 1


def is_int(value: object) -> bool:
    """An int that is not a bool (bool is an int subclass; True as a count or a position is
    always a mistake)."""
    return isinstance(value, int) and not isinstance(value, bool)


def require_int(
    name: str,
    value: object,
    *,
    minimum: int | None = None,
    error: type[InvalidInputError] = InvalidInputError,
) -> int:
    if not is_int(value):
        raise error(f"{name} must be an integer, got {value!r}")
    assert isinstance(value, int)
    if minimum is not None and value < minimum:
        raise error(f"{name} must be >= {minimum}, got {value}")
    if value > INT64_MAX or value < -INT64_MAX - 1:
        raise error(f"{name} is out of range (at most {INT64_MAX}), got {value}")
    return value


def require_text(
    name: str,
    value: object,
    *,
    allow_empty: bool = True,
    error: type[InvalidInputError] = InvalidInputError,
) -> str:
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
