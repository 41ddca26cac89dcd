"""Every check of a caller-supplied value, written once: what text SQLite round-trips, what
counts as an integer, a flag, a list, a choice, a path, an entry id. The families, the
search, the vectors, the migration of synapt's files and `open_store` call these, so the
same mistake gets the same message everywhere; `tests/house/test_checks_home.py` fails when a
module checks a caller's value by hand. Limits are in limits.py.

Each check raises `error` (default InvalidInputError), any RecallError subclass: the class
the calling API documents (`open_store` raises WorkspaceError, a journal entry
InvalidEntryError's subclasses, a vector owner InvalidOwnerError)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from .errors import InvalidInputError, RecallError
from .limits import (
    INT64_MAX,
    INT64_MIN,
    MACHINE_ID_HEX,
    MAX_MODEL_LEN,
    MAX_VECTOR_DIM,
    max_field_bytes,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

ErrorType = type[RecallError]


def is_int(value: object) -> bool:
    """An int that is not a bool (bool is an int subclass; True as a count or a position is
    always a mistake)."""
    return isinstance(value, int) and not isinstance(value, bool)


def require_int(
    name: str,
    value: object,
    *,
    minimum: int | None = None,
    index: bool = False,
    error: ErrorType = InvalidInputError,
) -> int:
    """An int within SQLite's range (and >= `minimum`). With `index`, any integer type
    counts (numpy's, anything with `__index__`), given back as an int; a bool never does."""
    if index and not isinstance(value, (bool, int)) and hasattr(type(value), "__index__"):
        try:
            value = value.__index__()  # type: ignore[attr-defined]
        except (TypeError, ValueError):
            pass  # refused below as what it is
    if not is_int(value):
        raise error(f"{name} must be an integer, got {value!r}")
    assert isinstance(value, int)
    if minimum is not None and value < minimum:
        raise error(f"{name} must be >= {minimum}, got {value}")
    if value > INT64_MAX or value < INT64_MIN:
        raise error(f"{name} is out of range (at most {INT64_MAX}), got {value}")
    return value


def parse_int(
    name: str, text: str, *, minimum: int | None = None, error: ErrorType = InvalidInputError
) -> int:
    """The integer `text` spells (a command line's value: spaces around it and `_` between
    digits allowed, as int() reads it), held to require_int's rule."""
    try:
        value = int(text)
    except ValueError:
        raise error(f"{name} must be an integer, got {text!r}") from None
    return require_int(name, value, minimum=minimum, error=error)


def require_bool(name: str, value: object, *, error: ErrorType = InvalidInputError) -> bool:
    if not isinstance(value, bool):
        raise error(f"{name} must be true or false, got {value!r}")
    return value


def require_type(
    name: str,
    value: object,
    kind: type[T],
    *,
    what: str,
    error: ErrorType = InvalidInputError,
    show_value: bool = False,
) -> T:
    """`value` if it is a `kind` (`what` says it in the message: "a JSON object"). The
    message names the value's type, or with `show_value` the value itself (a small one,
    whose type alone would not say what is wrong: a number given for a date)."""
    if not isinstance(value, kind):
        shown = repr(value) if show_value else type(value).__name__
        raise error(f"{name} must be {what}, got {shown}")
    return value


def require_pair(
    name: str, value: object, *, what: str, error: ErrorType = InvalidInputError
) -> tuple[object, object]:
    """A tuple of two values (`what` says what they are in the message); the values are
    the caller's to check."""
    if not isinstance(value, tuple) or len(value) != 2:
        raise error(f"{name} must be {what}, got {value!r}")
    return value[0], value[1]


def require_text(
    name: str,
    value: object,
    *,
    allow_empty: bool = True,
    error: ErrorType = InvalidInputError,
    type_error: ErrorType | None = None,
) -> str:
    """A str that SQLite stores and gives back unchanged: no NUL (C tools truncate at it),
    no lone surrogate (not encodable as UTF-8). Otherwise any characters are fine. A value
    that is not a str raises `type_error` (default: `error`)."""
    if not isinstance(value, str):
        raise (type_error or error)(f"{name} must be a string, got {type(value).__name__}")
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


def require_list(
    name: str,
    value: object,
    *,
    single: type | tuple[type, ...] | None = None,
    iterable: bool = False,
    what: str = "a list",
    error: ErrorType = InvalidInputError,
) -> list[Any]:
    """A list argument as a new list. A list or a tuple always counts; with `iterable`, any
    other iterable too (read once). Text, bytes and mappings never do (list("a thing") is
    one item per character, a dict's list its keys), except that one item of the type
    `single` given bare (an id, a path) stands for the list of it. The items are the
    caller's to check."""
    if single is not None and isinstance(value, single):
        return [value]
    if isinstance(value, (list, tuple)):
        return list(value)
    if (
        not iterable
        or isinstance(value, (str, bytes, bytearray, Mapping))
        or not isinstance(value, Iterable)
    ):
        kind = type(value).__name__
        bare = isinstance(value, (str, bytes)) and single is None
        raise error(f"{name} must be {what}, {'not a single ' if bare else 'got '}{kind}")
    return list(value)


def require_label(
    name: str, value: object, *, stripped: bool = True, error: ErrorType = InvalidInputError
) -> str:
    """A name a person types for a thing (a bucket, a worktree): non-empty text without
    control characters; with `stripped`, without spaces around it either."""
    if (
        not isinstance(value, str)
        or not value
        or (stripped and value != value.strip())
        or any(ord(ch) < 0x20 for ch in value)
    ):
        raise error(f"{name} must be a non-empty name without control characters, got {value!r}")
    return value


def require_choice(
    name: str, value: object, choices: Iterable[str], *, error: ErrorType = InvalidInputError
) -> str:
    """One of `choices` (text, compared exactly)."""
    options = tuple(choices)
    if not isinstance(value, str) or value not in options:
        raise error(f"{name} must be one of {', '.join(options)}, got {value!r}")
    return value


def require_model(value: object) -> str:
    """A vector model's name: non-empty text SQLite round-trips, at most MAX_MODEL_LEN."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"model must be a non-empty string, got {value!r}")
    require_text("model", value)
    if len(value) > MAX_MODEL_LEN:
        raise InvalidInputError(f"model name longer than {MAX_MODEL_LEN}: {value[:40]!r}...")
    return value


def require_path(
    name: str, value: object, *, error: ErrorType = InvalidInputError
) -> str | os.PathLike[str]:
    """A path as a caller gives it: a str or an os.PathLike, returned as given (whether it
    names anything usable is for the code that opens it to say)."""
    if not isinstance(value, (str, os.PathLike)):
        raise error(f"{name} must be a path, got {type(value).__name__}")
    return value


def path_text(name: str, value: object, *, error: ErrorType = InvalidInputError) -> str:
    """A path a caller gives (a str or an os.PathLike of str) as its text: never empty,
    never with a NUL (no system call takes one)."""
    text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(text, str) or not text or "\x00" in text:
        shown = value if isinstance(value, (str, os.PathLike)) else type(value).__name__
        raise error(
            f"{name}: not a path: {shown!r} (a path is a non-empty str or os.PathLike of str,"
            " without NUL)"
        )
    return text


def parse_entry_id(value: object, *, error: ErrorType = InvalidInputError) -> bytes:
    """An entry id as hosts give it (32 hex digits, either case, as `JournalEntry.id`)
    -> its 16 bytes. Anything else is a caller's mistake and raises `error`, whatever the
    call (get, forget, summaries' covers, cursor positions, vector owners): never a silent
    "no such entry", which would hide a truncated or mistyped id."""
    if isinstance(value, str) and len(value) == 32:
        try:
            # fromhex skips spaces, so 32 characters give 16 bytes only as 32 hex digits
            raw = bytes.fromhex(value)
        except ValueError:
            raw = b""
        if len(raw) == 16:
            return raw
    shown = repr(value[:80]) if isinstance(value, str) else type(value).__name__
    raise error(f"not an entry id (32 hex digits): {shown}")


def require_ids(name: str, value: object, *, error: ErrorType = InvalidInputError) -> list[bytes]:
    """Entry ids as a caller gives them: one id bare (its text, or that text's ASCII bytes)
    or a list of ids (a list, a tuple or any other iterable but text and mappings, read
    once) -> their 16 bytes each, in order (parse_entry_id's rule for every id)."""
    if isinstance(value, bytes):
        try:
            value = value.decode("ascii")
        except UnicodeDecodeError:
            raise error("an entry id is 32 hex digits, got bytes that are not") from None
    items = require_list(name, value, single=str, iterable=True, what="a list of ids", error=error)
    return [parse_entry_id(item, error=error) for item in items]


def is_machine_id(value: object) -> bool:
    """The shape sync mints a machine id in (state.py: `secrets.token_hex`): MACHINE_ID_HEX
    lowercase hex digits. Nothing else is one: a machine id names a directory of the replica
    location, so a separator, `..` or any other character would reach outside it."""
    return (
        isinstance(value, str)
        and len(value) == MACHINE_ID_HEX
        and all(ch in "0123456789abcdef" for ch in value)
    )


def require_machine_id(name: str, value: object, *, error: ErrorType = InvalidInputError) -> str:
    """A machine id (is_machine_id's shape), from machine.json, a replica location's
    listing or a peer's row naming who forgot what."""
    if not is_machine_id(value):
        shown = repr(value[:40]) if isinstance(value, str) else type(value).__name__
        raise error(f"{name} is not a machine id ({MACHINE_ID_HEX} hex digits): {shown}")
    assert isinstance(value, str)
    return value


def require_summary_text(
    name: str, value: object, *, allow_empty: bool = False, error: ErrorType = InvalidInputError
) -> str:
    """A summary's text (or kind): require_text's rule, at most the field limit in UTF-8
    bytes (limits.max_field_bytes, as an entry's fields: every read that shows it prints
    it). The local write and a peer's row in a pull are held to this one rule."""
    text = require_text(name, value, allow_empty=allow_empty, error=error)
    limit = max_field_bytes()
    if len(text) > limit // 4 and len(text.encode("utf-8")) > limit:
        raise error(f"{name} is longer than {limit} bytes in UTF-8")
    return text


def require_vector_dim(name: str, value: object, *, error: ErrorType = InvalidInputError) -> int:
    """A vector's dimension: 1 to MAX_VECTOR_DIM."""
    dim = require_int(name, value, minimum=1, error=error)
    if dim > MAX_VECTOR_DIM:
        raise error(f"{name} is more than {MAX_VECTOR_DIM}, got {dim}")
    return dim
