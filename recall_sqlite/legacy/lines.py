"""Reading legacy JSONL bucket files: lines with their byte offsets, the running fingerprint
of what was read, and the classification of one line into an entry or a quarantine reason.

Shared by survey, import and verify so the three can never disagree about what a line is.
The hot path (a well-formed line written by synapt) avoids the general validator and
builds the journal row with the journal codec directly; tests/behaviour/test_legacy_synapt.py proves
it produces exactly what `JournalEntry.from_mapping` and the journal's own row would.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from typing import NamedTuple, cast

from .. import synapt_layout as layout
from ..errors import (
    BadTimestampError,
    FieldTextError,
    FieldTooLargeError,
    FieldTypeError,
    InvalidEntryError,
    MissingTimestampError,
)
from ..journal import codec
from ..journal.entry import JournalEntry
from ..limits import (
    MAX_INSTANT_US,
    MAX_LINE_BYTES,
    MAX_NESTING,
    MIN_INSTANT_US,
    max_field_bytes,
)
from ..timestamps import fast_us, parse_timestamp, shaped_us

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from hashlib import _Hash
    from typing import IO

    from ..db import Row

    # A valid line's values: synapt's 14 fields in layout.FIELDS order, then the epoch us.
    # A plain tuple, not a NamedTuple: the hot loop builds one per line.
    Fields = tuple[
        str,
        str,
        str,
        str,
        list[str],
        list[str],
        list[str],
        list[str],
        list[str],
        bool,
        bool,
        str,
        str,
        bool,
        int,
    ]

_BLOCK = 1 << 20
_BOM = b"\xef\xbb\xbf"

# Quarantine reasons: stable codes that scripts and the survey group by (details vary).
BLANK = "blank"
INVALID_UTF8 = "invalid-utf8"
TRUNCATED = "truncated"
INVALID_JSON = "invalid-json"
NOT_AN_OBJECT = "not-an-object"
# The validator's reasons are carried by its error classes (errors.py), defined there once.
MISSING_TIMESTAMP = MissingTimestampError.reason
BAD_TIMESTAMP = BadTimestampError.reason
WRONG_TYPE = FieldTypeError.reason
BAD_TEXT = FieldTextError.reason
INVALID_ENTRY = InvalidEntryError.reason
TOO_LONG = FieldTooLargeError.reason
TOO_DEEP = "too-deep"
# Not a property of the line: its entry was forgotten (journal forget), before or after
# the import; the record keeps no byte of it (schema.sql, quarantine).
FORGOTTEN = "forgotten"
_FIELD_SET = frozenset(layout.FIELDS)
_strict_loads = json.JSONDecoder().decode
# The C scanner without decode()'s Python wrapper; failures go through decode() again for
# its exact message. Lines are stripped of ASCII whitespace first, so a value that does not
# end at the end of the text is "Extra data" exactly when decode() would say so.
_scan_once: Callable[[str, int], tuple[object, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # present, not in typeshed


# -- lines ---------------------------------------------------------------------------------


class LineReader:
    """Streams a file's lines from `offset`, hashing every byte it reads so the digest of
    any prefix that ends inside the current block can be taken at a chunk boundary
    (unless hashed=False: the survey needs no digest; bench/RESULTS.md, row 'survey: no
    hashing').

    Yields (offset, data, length, terminated): data is the line without its newline, or
    None when the line is longer than `max_line` (its bytes are re-read on demand)."""

    def __init__(
        self,
        fh: IO[bytes],
        *,
        offset: int = 0,
        hasher: _Hash | None = None,
        max_line: int = MAX_LINE_BYTES,
        hashed: bool = True,
    ) -> None:
        self._fh = fh
        self.start = offset
        self._hasher = None if not hashed else hasher if hasher is not None else hashlib.sha256()
        self._before = None if self._hasher is None else self._hasher.copy()
        self._block = b""
        self._block_start = offset
        self._max = max_line
        self.end = offset

    def prefix_sha256(self, offset: int) -> str:
        """sha256 of the file's bytes [0, offset); offset must lie in the current block."""
        return self.prefix_of_block()(offset)

    def prefix_of_block(self) -> Callable[[int], str]:
        """prefix_sha256 for offsets in the current block, still answering after the reader
        has moved on: the import's workers classify blocks ahead of the commits that
        record how far the file was read (legacy/workers.py). (The reader replaces its
        block and its hasher's copy for every block; it never changes them in place.)"""
        before, block, start = self._before, self._block, self._block_start
        if before is None:
            raise ValueError("a LineReader made with hashed=False has no digest")

        def prefix(offset: int) -> str:
            h = before.copy()
            h.update(block[: offset - start])
            return h.hexdigest()

        return prefix

    def batches(self) -> Iterator[tuple[list[bytes | None], dict[int, int], bool]]:
        """The lines block by block: (lines, {index: length} of the too-long ones, which are
        None in `lines`, whether the lines end with a newline). Only the file's last line can
        lack one, and it then comes alone. Splitting a whole block in C keeps the per-line
        cost of reading near nothing."""
        fh, maxlen = self._fh, self._max
        pending: list[bytes] = []
        plen = 0
        oversize = False
        pos = self.start
        while True:
            block = fh.read(_BLOCK)
            if not block:
                break
            if self._hasher is not None:
                self._before = self._hasher.copy()
                self._hasher.update(block)
            self._block, self._block_start = block, pos
            split = block.split(b"\n")
            tail = split.pop()  # no newline after it
            if split:
                big: dict[int, int] = {}
                first = split[0]
                # The same list (no copy), as it becomes: too-long lines are blanked out in it.
                parts = cast("list[bytes | None]", split)
                if max(map(len, split)) > maxlen:
                    for i in range(1, len(split)):
                        n = len(split[i])
                        if n > maxlen:
                            big[i], parts[i] = n, None
                first_len = plen + len(first)
                if plen or oversize:
                    joined = None if oversize or first_len > maxlen else b"".join(pending) + first
                    pending, plen, oversize = [], 0, False
                else:
                    joined = first if first_len <= maxlen else None
                if joined is None:
                    big[0] = first_len
                parts[0] = joined
                yield parts, big, True
            if tail:
                plen += len(tail)
                if oversize or plen > maxlen:
                    oversize, pending = True, []
                else:
                    pending.append(tail)
            pos += len(block)
            self.end = pos
        if plen or oversize:
            yield [None if oversize else b"".join(pending)], ({0: plen} if oversize else {}), False

    def __iter__(self) -> Iterator[tuple[int, bytes | None, int, bool]]:
        """(offset, data, length, terminated) per line; data None when too long."""
        pos = self.start
        for lines, big, terminated in self.batches():
            if big:
                for i, data in enumerate(lines):
                    n = big[i] if data is None else len(data)
                    yield pos, data, n, terminated
                    pos += n + 1
                continue
            for data in lines:
                n = len(data)  # type: ignore[arg-type]
                yield pos, data, n, terminated
                pos += n + 1


# -- classification -------------------------------------------------------------------------


@dataclass(frozen=True)
class Bad:
    """A line that cannot be imported, and why."""

    reason: str
    detail: str


def reason_of(exc: InvalidEntryError) -> str:
    """The quarantine reason of a line the journal's validator refused: the code its error
    class carries (errors.py), so rewording a message changes no import's accounting."""
    return exc.reason


def decode(
    data: bytes, terminated: bool, stripped: bytes | None = None
) -> tuple[object, bool] | Bad:
    """(the parsed JSON value, whether its strings need no NUL/surrogate check) or Bad.
    Leading and trailing ASCII whitespace is ignored, as synapt's reader strips it."""
    if stripped is None:
        stripped = data.strip()
    if not stripped:
        return Bad(BLANK, "empty line" if not data else "whitespace-only line")
    if stripped.startswith(_BOM):
        # An editor or a tool that writes "UTF-8 with BOM" put it there; JSON forbids it
        # and synapt's reader skips such a line too.
        return Bad(
            INVALID_JSON,
            "the line starts with a byte-order mark (EF BB BF, U+FEFF), which JSON does not"
            " allow; synapt skips such a line too (remove the mark and import again)",
        )
    try:
        text = stripped.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Bad(INVALID_UTF8, f"invalid UTF-8 at byte {exc.start}: {exc.reason}")
    try:
        try:
            value, end = _scan_once(text, 0)
            if end != len(text):
                raise ValueError
        except (StopIteration, ValueError):
            value = _strict_loads(text)
    except json.JSONDecodeError as exc:
        if not terminated:
            return Bad(
                TRUNCATED,
                f"last line has no newline and is not valid JSON"
                f" (an interrupted write?): {exc.msg} at column {exc.colno}",
            )
        return Bad(INVALID_JSON, f"{exc.msg} at column {exc.colno}")
    except RecursionError:
        return Bad(TOO_DEEP, "JSON nested too deeply to parse")
    except ValueError as exc:
        # Not a syntax error: a value json refuses to build, i.e. an integer of more than
        # sys.get_int_max_str_digits() digits (CVE-2020-10735's limit). Python's message
        # advises raising that limit, which is no advice for a journal line.
        if "integer string conversion" in str(exc):
            return Bad(
                INVALID_JSON,
                f"an integer with more than {sys.get_int_max_str_digits()} digits"
                " (no journal field holds a number; the line is not synapt's)",
            )
        return Bad(INVALID_JSON, f"JSON value refused: {exc}")
    # A field can be over the journal's size limit only if the line is: its decoded UTF-8
    # is never longer than its JSON text. Such a line takes the validator, which refuses
    # it, instead of the fast path, which does not look at sizes.
    return value, _escapes_clean(text) and len(stripped) <= max_field_bytes()


def _escapes_clean(text: str) -> bool:
    """True when no string in this JSON text can hold a NUL or a lone surrogate: raw JSON
    can carry neither, so only \\u0000 and \\uD8xx-\\uDFxx escapes need the full check."""
    if "\\u" not in text:
        return True
    return "\\u0000" not in text and "\\ud" not in text and "\\uD" not in text


_EMPTY: list[str] = []


def _fast_fields(obj: Mapping[str, object]) -> Fields | None:
    """_plain + fast_us in one pass, for the hot loops: every synapt field's value in
    layout.FIELDS order plus the epoch us, or None for anything not plainly synapt's."""
    if not _FIELD_SET.issuperset(obj):
        return None
    g = obj.get
    ts, sid, br, fo = g("timestamp"), g("session_id", ""), g("branch", ""), g("focus", "")
    do, de, ne = g("done", _EMPTY), g("decisions", _EMPTY), g("next_steps", _EMPTY)
    fm, gl = g("files_modified", _EMPTY), g("git_log", _EMPTY)
    au, en, gt, ag, rp = (
        g("auto", False),
        g("enriched", False),
        g("griptree", ""),
        g("agent_id", ""),
        g("repair", False),
    )
    if not (
        type(ts) is str
        and type(sid) is str
        and type(br) is str
        and type(fo) is str
        and type(gt) is str
        and type(ag) is str
        and type(au) is bool
        and type(en) is bool
        and type(rp) is bool
        and type(do) is list
        and type(de) is list
        and type(ne) is list
        and type(fm) is list
        and type(gl) is list
    ):
        return None
    try:
        # join refuses any item that is not a str, in C (json makes no str subclasses)
        "".join(do), "".join(de), "".join(ne), "".join(fm), "".join(gl)
    except TypeError:
        return None
    us = fast_us(ts)
    if us is None:
        return None
    return ts, sid, br, fo, do, de, ne, fm, gl, au, en, gt, ag, rp, us


class Parsed(NamedTuple):
    """A valid entry: its content address, what the survey counts, its journal row (the
    codec.CONTENT_COLUMNS values) and its canonical JSON (for the ids of tombstones older
    than v7). A NamedTuple: built once per line, it must be cheap."""

    id: bytes
    session_id: str
    branch: str
    ts_us: int
    auto: bool
    enriched: bool
    row: Row
    canon: str


def _fast_parsed(f: Fields, extra: Mapping[str, object] | None = None) -> Parsed:
    ts, sid, br, fo, do, de, ne, fm, gl, au, en, gt, ag, rp, us = f
    digest, row, canon = codec.encode(
        ts, us, sid, br, fo, do, de, ne, fm, gl, au, en, gt, ag, rp, extra
    )
    return Parsed(digest, sid, br, us, au, en, row, canon)


def parse_entry(obj: object, clean: bool) -> Parsed | Bad:
    """Validate a decoded line and build its journal row. Anything unusual goes through
    the journal's own validator, so the accepted set and the messages are the journal's."""
    if type(obj) is not dict:
        return not_an_object(obj)
    f = _fast_fields(obj) if clean else None
    if f is not None:
        return _fast_parsed(f)
    # (clean=False: the fast path was just tried, or may not be.)
    valid = _validated(obj, False)
    if isinstance(valid, Bad):
        return valid
    return _fast_parsed(*valid)


def _validated(
    obj: dict[str, object], clean: bool
) -> tuple[Fields, dict[str, object] | None] | Bad:
    """(every synapt field's value and the epoch us, the unknown fields or None) or Bad."""
    f = _fast_fields(obj) if clean else None
    if f is not None:
        return f, None
    depth = _depth(obj)
    if depth > MAX_NESTING:
        return Bad(TOO_DEEP, f"nested {depth} levels deep (the limit is {MAX_NESTING})")
    try:
        e = JournalEntry.from_mapping(obj)
        ts_us = parse_timestamp(e.timestamp)
    except InvalidEntryError as exc:
        return Bad(reason_of(exc), str(exc))
    except RecursionError:
        return Bad(TOO_DEEP, "entry nested too deeply")
    except (ValueError, OverflowError) as exc:
        # The validator's own checks raise InvalidEntryError; anything else is a value
        # it could not even look at. Quarantined, never a traceback.
        return Bad(INVALID_ENTRY, f"entry refused: {exc}")
    if not MIN_INSTANT_US <= ts_us <= MAX_INSTANT_US:
        return Bad(BAD_TIMESTAMP, f"timestamp {e.timestamp!r} is outside years 1-9999 UTC")
    fields: Fields = (
        e.timestamp,
        e.session_id,
        e.branch,
        e.focus,
        e.done,
        e.decisions,
        e.next_steps,
        e.files_modified,
        e.git_log,
        e.auto,
        e.enriched,
        e.griptree,
        e.agent_id,
        e.repair,
        ts_us,
    )
    return fields, (e.extra or None)


def _depth(obj: dict[str, object]) -> int:
    """How deeply containers nest in a decoded JSON value (iterative: no recursion limit)."""
    deepest = 0
    stack: list[tuple[dict[str, object] | list[object], int]] = [(obj, 1)]
    while stack:
        value, level = stack.pop()
        if level > deepest:
            deepest = level
            if deepest > MAX_NESTING:
                return deepest
        children = value.values() if type(value) is dict else value
        stack.extend((c, level + 1) for c in children if type(c) is dict or type(c) is list)
    return deepest


def not_an_object(obj: object) -> Bad:
    if isinstance(obj, list):
        kind = "an array"
    elif obj is None:
        kind = "null"
    else:
        kind = f"a {type(obj).__name__}"
    return Bad(NOT_AN_OBJECT, f"line is {kind}, not a JSON object")


# What the survey keeps of a valid line: (content key, session id, branch, epoch us, auto,
# enriched). The key is a 64-bit hash of the normalised values: the survey only counts
# distinct contents, and a collision (odds ~1e-8 per million lines) would shift a count by
# one; the import itself uses the full content address.
Seen = tuple[int, str, str, int, bool, bool]


# A line exactly as synapt's append_entry writes it needs no JSON parse for the survey:
# synapt_layout.line_pattern() proves its shape and types, noncanonical_escape() that equal
# content means equal bytes. What the survey reads of such a line: (epoch us, the session
# id's UTF-8 bytes, the branch's JSON string token as written, auto, enriched). The token,
# not its text: the survey numbers branches by token and decodes a token once.
Written = tuple[int, bytes, bytes, bool, bool]


def written_reader() -> Callable[[bytes], Written | None]:
    """The reader of lines exactly as synapt writes them: stripped bytes -> Written, or None
    for any other line (the parser decides those). A closure over the compiled patterns
    and the field limit, as the survey calls it on every line it has not seen before."""
    fullmatch = layout.line_pattern().fullmatch
    noncanonical = layout.noncanonical_escape().search
    limit = max_field_bytes()

    def read(stripped: bytes) -> Written | None:
        # (A line longer than the field limit may hold a field over it: the parser decides.)
        m = fullmatch(stripped) if len(stripped) <= limit else None
        if m is None or (b"\\" in stripped and noncanonical(stripped) is not None):
            return None
        ts, sid, branch, auto, enriched = m.groups()
        us = shaped_us(ts)
        if us is None:
            return None
        # (The pattern admits ASCII only, so a token without escapes is its UTF-8.)
        sid = sid[1:-1] if b"\\" not in sid else token_text(sid).encode()
        return us, sid, branch, auto == b"true", enriched == b"true"

    return read


def token_text(token: bytes) -> str:
    """The text of a JSON string token that line_pattern() matched."""
    if b"\\" in token:
        text: str = json.loads(token)
        return text
    return token[1:-1].decode("ascii")


def inspect(
    data: bytes,
    terminated: bool,
    stripped: bytes | None = None,
    key: int | None = None,
    *,
    written: bool = True,
) -> Seen | Bad:
    """What the survey counts of one line (`key`: hash(stripped), if the caller has it;
    written=False: the caller knows it is not a line as synapt writes it)."""
    if stripped is None:
        stripped = data.strip()
    # (A reader made per call: the survey, which inspects only what its own reader did
    # not read, passes written=False; the field limit is read anew, as tests change it.)
    w = written_reader()(stripped) if written else None
    if w is not None:
        us, sid, branch, auto, enriched = w
        return (
            hash(stripped) if key is None else key,
            sid.decode(),
            token_text(branch),
            us,
            auto,
            enriched,
        )
    decoded = decode(data, terminated, stripped)
    if isinstance(decoded, Bad):
        return decoded
    obj, clean = decoded
    if type(obj) is not dict:
        return not_an_object(obj)
    valid = _validated(obj, clean)
    if isinstance(valid, Bad):
        return valid
    f, extra = valid
    # The line synapt would write for these values: the survey's content key.
    canon = layout.line(dict(zip(layout.FIELDS, f[:14], strict=True))).encode()
    key = hash(canon) if extra is None else hash((canon, codec.canonical_json(extra)))
    return key, f[1], f[2], f[14], f[9], f[10]


def classify(data: bytes, terminated: bool) -> Parsed | Bad:
    """One line's bytes -> its entry or the reason it cannot be imported."""
    decoded = decode(data, terminated)
    if isinstance(decoded, Bad):
        return decoded
    return parse_entry(decoded[0], decoded[1])


def too_long(length: int, limit: int) -> Bad:
    return Bad(TOO_LONG, f"line of {length} bytes is longer than the {limit}-byte limit")
