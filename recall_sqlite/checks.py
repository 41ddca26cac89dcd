"""Every check of a caller-supplied value, written once: what text SQLite round-trips, what
counts as an integer, a flag, a count, a name. The families, the search and the vectors
call these, so the same mistake gets the same message everywhere. Limits are in limits.py."""

from __future__ import annotations

from .errors import InvalidInputError
from .limits import INT64_MAX, INT64_MIN, MAX_MODEL_LEN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


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
    if value > INT64_MAX or value < INT64_MIN:
        raise error(f"{name} is out of range (at most {INT64_MAX}), got {value}")
    return value


def require_bool(
    name: str, value: object, *, error: type[InvalidInputError] = InvalidInputError
) -> bool:
    if not isinstance(value, bool):
        raise error(f"{name} must be true or false, got {value!r}")
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


def require_optional_text(name: str, value: object, *, allow_empty: bool = True) -> str | None:
    return None if value is None else require_text(name, value, allow_empty=allow_empty)


def require_choice(name: str, value: object, choices: Iterable[str]) -> str:
    options = tuple(choices)
    if not isinstance(value, str) or value not in options:
        raise InvalidInputError(f"{name} must be one of {', '.join(options)}, got {value!r}")
    return value


def require_model(value: object) -> str:
    """A vector model's name: non-empty text SQLite round-trips, at most MAX_MODEL_LEN."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"model must be a non-empty string, got {value!r}")
    require_text("model", value)
    if len(value) > MAX_MODEL_LEN:
        raise InvalidInputError(f"model name longer than {MAX_MODEL_LEN}: {value[:40]!r}...")
    return value


def parse_entry_id(value: object) -> bytes:
    """An entry id as hosts give it (32 hex digits) -> its 16 bytes."""
    text = require_text("entry id", value)
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raw = b""
    if len(raw) != 16:
        raise InvalidInputError(f"not an entry id (32 hex digits): {text[:80]!r}")
    return raw
