"""JournalEntry: one entry version as hosts see it (synapt's fields, the store's id and
worktree, unknown legacy fields in `extra`), its validation, and building it from rows."""

from __future__ import annotations

from collections.abc import Mapping

from .. import synapt_fields as synapt
from .._record import Record
from ..checks import require_bool, require_list, require_text, require_type
from ..errors import (
    BadTimestampError,
    CorruptStoreError,
    FieldTextError,
    FieldTooLargeError,
    FieldTypeError,
    InvalidEntryError,
    JournalFieldCollapse,
    MissingTimestampError,
)
from ..jsontext import scan_once
from ..limits import FIELD_BYTES_ENV, MAX_NESTING, max_field_bytes
from ..timestamps import parse_timestamp
from . import codec
from .carry import is_collapsed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from apsw import SQLiteValue

    from ..db import Row


# The C scanner without json.loads' two Python wrappers (bench/RESULTS.md, row
# 'read: list decoding'): the text is ours, built by SQLite from stored JSON, so "extra
# data" is checked by hand.
_scan_once = scan_once


def _check_size(name: str, chars: int, text: str | list[str], limit: int) -> None:
    # Characters first: a UTF-8 character is at most 4 bytes, so short text needs no encode.
    if chars * 4 <= limit:
        return
    size = len(text.encode()) if isinstance(text, str) else sum(len(t.encode()) for t in text)
    if size > limit:
        raise FieldTooLargeError(
            f"{name} is {size} bytes; the limit is {limit} bytes ({FIELD_BYTES_ENV})"
        )


class JournalEntry(Record):
    """One journal entry version: synapt's fields, plus the store's `id` and `worktree`,
    plus `extra` (fields synapt does not know, kept verbatim from legacy files)."""

    __slots__ = (*synapt.FIELDS, "extra", "id", "worktree")
    timestamp: str
    session_id: str
    branch: str
    focus: str
    done: list[str]
    decisions: list[str]
    next_steps: list[str]
    files_modified: list[str]
    git_log: list[str]
    auto: bool
    enriched: bool
    griptree: str
    agent_id: str
    repair: bool
    extra: dict[str, Any]
    id: str | None
    worktree: str | None

    def __init__(
        self,
        timestamp: str,
        session_id: str = "",
        branch: str = "",
        focus: str = "",
        done: list[str] | None = None,
        decisions: list[str] | None = None,
        next_steps: list[str] | None = None,
        files_modified: list[str] | None = None,
        git_log: list[str] | None = None,
        auto: bool = False,
        enriched: bool = False,
        griptree: str = "",
        agent_id: str = "",
        repair: bool = False,
        extra: dict[str, object] | None = None,
        id: str | None = None,  # noqa: A002
        worktree: str | None = None,
    ) -> None:
        # None for a list means empty (a fresh list each time, never a shared default);
        # validate() checks every type.
        self.timestamp, self.session_id, self.branch, self.focus = (
            timestamp,
            session_id,
            branch,
            focus,
        )
        self.done = [] if done is None else done
        self.decisions = [] if decisions is None else decisions
        self.next_steps = [] if next_steps is None else next_steps
        self.files_modified = [] if files_modified is None else files_modified
        self.git_log = [] if git_log is None else git_log
        self.auto, self.enriched, self.griptree, self.agent_id, self.repair = (
            auto,
            enriched,
            griptree,
            agent_id,
            repair,
        )
        self.extra = {} if extra is None else extra
        self.id, self.worktree = id, worktree

    def has_content(self) -> bool:
        return bool(self.has_rich_content() or self.files_modified)

    def has_rich_content(self) -> bool:
        return codec.rich_count(self.focus, self.done, self.decisions, self.next_steps) > 0

    def is_meaningful(self) -> bool:
        return codec.is_meaningful(
            self.focus, self.auto, self.done, self.decisions, self.next_steps
        )

    def synapt_dict(self) -> dict[str, Any]:
        """synapt's own field names and values only (what synapt's append_entry writes)."""
        return {name: _copy(getattr(self, name)) for name in synapt.FIELDS}

    def to_dict(self) -> dict[str, Any]:
        d = self.synapt_dict()
        d["id"] = self.id
        d["worktree"] = self.worktree
        if self.extra:
            d["extra"] = dict(self.extra)
        return d

    def copy(self) -> JournalEntry:
        fields: dict[str, Any] = {name: _copy(getattr(self, name)) for name in synapt.FIELDS}
        return JournalEntry(
            **fields,
            extra=dict(self.extra) if isinstance(self.extra, dict) else self.extra,
        )

    @classmethod
    def from_mapping(
        cls, data: Mapping[str, object], *, allow_collapsed: bool = True
    ) -> JournalEntry:
        """Validate a mapping with synapt's field names. Keys synapt does not know go to
        `extra`. Documented normalisation: null for a text/list/bool field means empty.
        Anything else of the wrong type raises InvalidEntryError (each mistake its own
        subclass: an import's quarantine reason)."""
        # (an abstract class as type[T]: mypy's type-abstract, wrong for an isinstance check)
        require_type("an entry", data, Mapping, what="a JSON object", error=FieldTypeError)  # type: ignore[type-abstract]
        if data.get("timestamp") is None:
            raise MissingTimestampError("entry has no timestamp")
        values: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            if key in synapt.FIELDS:
                values[key] = value
            else:
                extra[str(key)] = value
        entry = cls(**values, extra=extra)
        entry.validate(allow_collapsed=allow_collapsed)
        return entry

    def validate(self, *, allow_collapsed: bool = True) -> None:
        """Check types and text in place; None becomes the field's empty value."""
        limit = max_field_bytes()
        require_text(
            "timestamp", self.timestamp, error=BadTimestampError, type_error=FieldTypeError
        )
        _check_size("timestamp", len(self.timestamp), self.timestamp, limit)
        parse_timestamp(self.timestamp)
        for name in synapt.TEXT_FIELDS:
            value = getattr(self, name)
            if value is None:
                setattr(self, name, "")
            else:
                _check_text(name, value)
                _check_size(name, len(value), value, limit)
        for name in synapt.LIST_FIELDS:
            value = getattr(self, name)
            if value is None:
                setattr(self, name, [])
                continue
            items = require_list(name, value, what="a list of strings", error=FieldTypeError)
            chars = _check_items(name, items)
            _check_size(name, chars, items, limit)
            setattr(self, name, items)
        for name in synapt.BOOL_FIELDS:
            value = getattr(self, name)
            if value is None:
                setattr(self, name, False)
            else:
                require_bool(name, value, error=FieldTypeError)
        self._validate_extra(limit)
        if not allow_collapsed:
            self._refuse_collapsed()

    def _validate_extra(self, limit: int) -> None:
        require_type("extra", self.extra, dict, what="a JSON object", error=FieldTypeError)
        if not self.extra:
            return  # an append's usual case: nothing to check or serialise
        _check_nested("extra", self.extra, 0)
        try:
            extra_json = codec.canonical_json(self.extra)
        except (TypeError, ValueError, RecursionError) as exc:
            raise InvalidEntryError(f"extra fields are not storable as JSON: {exc}") from None
        _check_size("extra", len(extra_json), extra_json, limit)

    def _refuse_collapsed(self) -> None:
        # Every signature holds a '<' (carry.py): text without one, nearly all, is answered
        # by one scan of the joined fields, not a call per item (bench/RESULTS.md, row
        # 'append: collapsed check').
        if "<" not in "".join([self.focus, *self.done, *self.decisions, *self.next_steps]):
            return
        for name in codec.RICH_FIELDS:
            value = getattr(self, name)
            for item in [value] if isinstance(value, str) else value:
                if is_collapsed(item):
                    raise JournalFieldCollapse(
                        f"journal field {name!r} carries tool-call markup: an unclosed "
                        "parameter swallowed the fields after it; resend the fields separately"
                    )

    def encode(self) -> tuple[bytes, Row]:
        """(id, content columns) of a validated entry (see codec.encode)."""
        digest, row, _ = codec.encode(
            self.timestamp,
            parse_timestamp(self.timestamp),
            self.session_id,
            self.branch,
            self.focus,
            self.done,
            self.decisions,
            self.next_steps,
            self.files_modified,
            self.git_log,
            self.auto,
            self.enriched,
            self.griptree,
            self.agent_id,
            self.repair,
            self.extra or None,
        )
        return digest, row

    @staticmethod
    def from_rows(
        rows: Sequence[Sequence[SQLiteValue]], worktree_key: Callable[[int], str]
    ) -> list[JournalEntry]:
        """Entries from rows that start with codec.select_list(). The JSON of every list
        and extra field of every row is decoded in one call: per-field json.loads calls
        were most of the cost of a read."""
        if not rows:
            return []
        # Each column holds its kind (schema.sql's types): read as such, with no check per
        # value on the read path; a value of another kind fails as damage (translate_any).
        cols: Sequence[Sequence[Any]] = rows
        x = codec.SELECT_INDEX
        decoded: list[list[Any]] = decode_lists(rows)
        eid, wt, sid, br, ts = (
            x["id"],
            x["worktree_id"],
            x["session_id"],
            x["branch"],
            x["timestamp"],
        )
        fo, au, en, rp, gt, ag = (
            x["focus"],
            x["auto"],
            x["enriched"],
            x["repair"],
            x["griptree"],
            x["agent_id"],
        )
        return [
            JournalEntry(
                r[ts],
                r[sid],
                r[br],
                r[fo],
                d[0],
                d[1],
                d[2],
                d[3],
                d[4],
                bool(r[au]),
                bool(r[en]),
                r[gt],
                r[ag],
                bool(r[rp]),
                d[5] or {},
                r[eid].hex(),
                worktree_key(r[wt]),
            )
            for r, d in zip(cols, decoded, strict=True)
        ]


def decode_lists(rows: Sequence[Sequence[SQLiteValue]]) -> list[list[object]]:
    """The `lists` column of rows that start with codec.select_list(), decoded: each row's
    [done, decisions, next_steps, files_modified, git_log, extra or None]. The JSON of
    every row is decoded in one call: per-field json.loads calls were most of the cost of
    a read. Raises CorruptStoreError for anything else than those lists (and object)."""
    cols: Sequence[Sequence[Any]] = rows
    lists = codec.SELECT_INDEX["lists"]
    text = f"[{','.join([r[lists] for r in cols])}]"
    try:
        decoded: list[list[Any]]
        decoded, end = _scan_once(text, 0)
        if end != len(text):
            raise ValueError("extra data")
    except (ValueError, RecursionError, StopIteration):
        raise CorruptStoreError(
            "a stored entry's list or extra column is not valid JSON, or nested too "
            "deeply (damaged, or edited outside recall-sqlite: run `recall-sqlite doctor`)"
        ) from None
    lst = list
    for d in decoded:
        # What the schema's CHECKs hold for rows written since; a damaged or hand-made
        # row may hold anything, and must not come back as an entry that breaks later.
        # (Spelled out: see bench/RESULTS.md, row 'read: row checks'.)
        if not (
            type(d) is lst
            and len(d) == 6
            and type(d[0]) is lst
            and type(d[1]) is lst
            and type(d[2]) is lst
            and type(d[3]) is lst
            and type(d[4]) is lst
            and (d[5] is None or type(d[5]) is dict)
        ):
            raise CorruptStoreError(
                "a stored entry's list or extra column holds something else than a list"
                " (or an object); run `recall-sqlite doctor`"
            )
    return decoded


def _copy(value: object) -> object:
    return list(value) if isinstance(value, list) else value


def _check_text(name: str, value: object) -> None:
    require_text(name, value, error=FieldTextError, type_error=FieldTypeError)


def _check_items(name: str, items: Sequence[object]) -> int:
    """The characters of a list of text items, each checked as `_check_text` would: in one
    pass over the joined text (a list of 20 items cost 20 calls), item by item only to name
    what is wrong."""
    try:
        joined = "".join(items)  # type: ignore[arg-type]
        if "\x00" not in joined:
            joined.encode("utf-8")  # a lone surrogate anywhere fails
            return len(joined)
    except (TypeError, UnicodeEncodeError):
        pass
    for item in items:
        _check_text(f"{name} item", item)
    raise AssertionError("unreachable: the joined text failed, so one item does")


def _check_nested(name: str, value: object, depth: int) -> None:
    """Every string in `extra` storable, and the nesting bounded (checked iteratively
    deep enough to refuse, never by recursing past MAX_NESTING)."""
    if depth > MAX_NESTING:
        raise InvalidEntryError(f"{name} is nested more than {MAX_NESTING} levels deep")
    if isinstance(value, str):
        _check_text(name, value)
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_text(f"{name} key", k)
            _check_nested(f"{name}.{k}", v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            _check_nested(name, v, depth + 1)
