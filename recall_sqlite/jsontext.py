"""JSON the read paths decode and print, through the C functions of `json` without the
`json` package: importing it imports `re` and `enum`, a large part of a CLI read's whole
process (bench/RESULTS.md, row 'CLI start: json'). Writes, which pay a commit anyway,
use `json` itself.

`loads` answers what json.loads answers for every text; `pretty` writes what
json.dumps(value, indent=2, ensure_ascii=False) writes
(tests/unit/jsontext/test_jsontext.py holds both to json's own answers)."""

from __future__ import annotations

from _json import encode_basestring, make_scanner

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Options:
    """What the C scanner reads off json.JSONDecoder: its defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__
    memo: dict[str, str] = {}


# (text, index) -> (value, end); StopIteration where no value starts at index, and json's
# JSONDecodeError for a value that starts but is malformed.
# (typeshed types the context as a scanner; the C code reads the attributes above)
scan_once: Callable[[str, int], tuple[Any, int]] = make_scanner(_Options())  # type: ignore[arg-type]

_SPACE = " \t\n\r"  # json's whitespace, and nothing else


def loads(text: str) -> Any:
    """json.loads(text) for a str: the value, or ValueError (json's JSONDecodeError is one)."""
    start = len(text) - len(text.lstrip(_SPACE))
    try:
        value, end = scan_once(text, start)
    except StopIteration:
        raise ValueError(f"no JSON value at character {start}") from None
    if end != len(text) and text[end:].strip(_SPACE):
        raise ValueError(f"extra data after the JSON value at character {end}")
    return value


def pretty(value: Any) -> str:
    """json.dumps(value, indent=2, ensure_ascii=False) for the values a read answers (dicts
    with str keys, lists and tuples, str, int, bool, None); anything else is left to json."""
    out: list[str] = []
    try:
        _write(value, out, "\n")
    except _Other:
        import json

        return json.dumps(value, indent=2, ensure_ascii=False)
    return "".join(out)


class _Other(Exception):
    """A value `_write` does not spell (a float, a non-str key, a cycle's depth...)."""


_WORDS = {True: "true", False: "false", None: "null"}


def _write(value: Any, out: list[str], newline: str) -> None:
    kind = type(value)
    if kind is str:
        out.append(encode_basestring(value))
    elif kind is bool or value is None:
        out.append(_WORDS[value])
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        if len(inner) > 400:  # deeper than any answer: json reports cycles and depth
            raise _Other
        sep = "{" + inner
        for key, item in value.items():
            if type(key) is not str:
                raise _Other
            out.append(sep)
            out.append(encode_basestring(key))
            out.append(": ")
            _write(item, out, inner)
            sep = "," + inner
        out.append(newline + "}")
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        if len(inner) > 400:
            raise _Other
        sep = "[" + inner
        for item in value:
            out.append(sep)
            _write(item, out, inner)
            sep = "," + inner
        out.append(newline + "]")
    else:
        raise _Other
