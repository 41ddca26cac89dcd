"""Whole-worktree reads for synapt's `_read_all_entries`, and its `_dedup_entries` answered
from the store's heads when it is given exactly such a read.

synapt's session-start hook reads every stored version (`_dedup_entries(_read_all_entries(
jf))`) and then looks only at the scalar fields of the heads (timestamp, focus, auto) and at
the lists of the three entries it shows. Decoding every version's lists as JSON was most
of the activated hook's time at 100k entries, so the entries built here carry their scalar
fields and fetch their lists from the store when first looked at (`LazyEntry`), and the
dedup of an untouched read is the store's own head of each session (schema.sql keeps it
with synapt's `_entry_richness` rule), in synapt's order.

It reads through the journal's public face (`version_rows`, `version_lists`); it imports
synapt and is imported only on activation."""

from __future__ import annotations

import gc
from itertools import compress
from operator import attrgetter, is_
from typing import Any

import synapt.recall.journal as sj

from .. import Store
from .. import synapt_layout as layout
from ..errors import HostError, RecallError
from ..journal import rich_count

LIST_FIELDS = layout.LIST_FIELDS
# The scalar fields, as named in synapt and in journal_entries (the same names).
SCALAR_FIELDS = (
    "timestamp",
    "session_id",
    "branch",
    "focus",
    "auto",
    "enriched",
    "griptree",
    "agent_id",
    "repair",
)
# An unloaded entry's __dict__: its scalar fields and this key (where its lists are).
_ROW = "_recall_sqlite_row"
_UNLOADED_KEYS = len(SCALAR_FIELDS) + 1
_LOADED_KEYS = len(SCALAR_FIELDS) + len(LIST_FIELDS)
# Entries of one read whose lists are fetched one statement each; after that the rest of
# the read is fetched in one statement (a caller that looks at every entry pays about what
# decoding them all up front would have cost, one that looks at a few pays for a few).
SINGLE_LOADS = 64
# What the dedup looks at besides the lists' emptiness (synapt's _entry_richness and its
# session key); kept per read to notice entries changed between the read and the dedup.
_DEDUP_FIELDS = ("session_id", "timestamp", "auto", "focus")


class LazyEntry(sj.JournalEntry):  # type: ignore[misc]  # synapt ships no type information
    """synapt's JournalEntry whose five lists are fetched from the store on first access.

    It is a synapt JournalEntry (isinstance, dataclass fields, asdict, repr, equality with
    synapt's own entries, copy and pickle as a plain JournalEntry); `type()` and `vars()`
    show the difference until the lists are loaded."""

    __qualname__ = "JournalEntry"

    def __getattr__(self, name: str) -> Any:
        # Only called for attributes not in the instance: synapt's list fields have no class
        # attribute (default_factory), so an unloaded entry lands here for exactly those.
        d = self.__dict__
        row = d.get(_ROW)
        if row is not None and name in LIST_FIELDS:
            row[0].load(row[1])
            return d[name]
        raise AttributeError(f"'JournalEntry' object has no attribute {name!r}")

    def __eq__(self, other: object) -> bool:
        # synapt's dataclass __eq__ requires the same class; a loaded-or-not entry equals a
        # synapt entry with the same fields, as the plain one it stands for would.
        if not isinstance(other, sj.JournalEntry):
            return NotImplemented
        get = attrgetter(*sj.JournalEntry.__dataclass_fields__)
        return bool(get(self) == get(other))

    __hash__ = None  # type: ignore[assignment]  # as synapt's (eq=True, not frozen)

    def __reduce_ex__(self, protocol: Any) -> Any:
        return _plain, (self.to_dict(),)

    def __copy__(self) -> Any:
        return _plain(self.to_dict())

    def __deepcopy__(self, memo: Any) -> Any:
        return _plain(self.to_dict())


def _plain(fields: dict[str, Any]) -> Any:
    return sj.JournalEntry(**fields)


class _Source:
    """Where the lists of one read's entries are fetched from."""

    __slots__ = ("store", "seqs", "entries", "loaded", "singles")

    def __init__(self, store: Store, seqs: list[int]) -> None:
        self.store = store
        self.seqs = seqs
        self.entries: list[Any] = []
        self.loaded: set[int] = set()
        self.singles = 0

    def load(self, i: int) -> None:
        single = self.singles < SINGLE_LOADS
        try:
            if single:
                self.singles += 1
                by_seq = self.store.journal.host.version_lists([self.seqs[i]])
            else:
                by_seq = self.store.journal.host.version_lists()
        except RecallError as exc:
            raise HostError(f"recall-sqlite store: {exc}") from None
        todo = [i] if single else [j for j, e in enumerate(self.entries) if _ROW in e.__dict__]
        missing = [self.seqs[j] for j in todo if self.seqs[j] not in by_seq]
        if missing:
            raise HostError(f"recall-sqlite store: entry #{missing[0]} is gone")
        self._fill(todo, [by_seq[self.seqs[j]] for j in todo])

    def _fill(self, indexes: list[int], decoded: list[list[Any]]) -> None:
        for i, values in zip(indexes, decoded, strict=True):
            d = self.entries[i].__dict__
            # A list the caller assigned before loading is the caller's.
            for name, value in zip(LIST_FIELDS, values[: len(LIST_FIELDS)], strict=True):
                d.setdefault(name, value)
            d.pop(_ROW, None)
            self.loaded.add(i)


class Versions(list):  # type: ignore[type-arg]  # of synapt JournalEntry
    """What `_read_all_entries` returns: a plain list of the read's entries that also
    remembers what the store said about them, for `dedup`."""

    __slots__ = ("_snapshot",)
    _snapshot: _Snapshot


class _Snapshot:
    __slots__ = ("source", "items", "heads", "rich", "columns")

    def __init__(
        self,
        source: _Source,
        items: tuple[Any, ...],
        heads: list[int],
        rich: list[int],
        columns: dict[str, list[Any]],
    ) -> None:
        self.source, self.items, self.heads, self.rich = source, items, heads, rich
        self.columns = columns


def read_versions(store: Store) -> Versions:
    """Every stored version of the store's worktree, oldest first, as synapt entries."""
    # The cyclic collector would run dozens of times over the 100k tuples and entries made
    # here (none of them garbage): bench/RESULTS.md, row 'synapt: lazy entries'.
    collecting = gc.isenabled()
    gc.disable()
    try:
        rows = store.journal.host.version_rows(SCALAR_FIELDS)
        return _build(store, rows)
    finally:
        if collecting:
            gc.enable()


def _build(store: Store, rows: list[tuple[Any, ...]]) -> Versions:
    columns = list(zip(*rows, strict=True)) if rows else [()] * (3 + len(SCALAR_FIELDS))
    seqs, heads, rich = list(columns[0]), list(columns[1]), list(columns[2])
    source = _Source(store, seqs)
    new, cls, key = object.__new__, LazyEntry, _ROW
    entries = source.entries
    append = entries.append
    for i, r in enumerate(rows):
        e = new(cls)
        d = e.__dict__
        # r: seq, head_wt, rich, then SCALAR_FIELDS (the three flags as 0/1).
        d["timestamp"] = r[3]
        d["session_id"] = r[4]
        d["branch"] = r[5]
        d["focus"] = r[6]
        d["auto"] = r[7] == 1
        d["enriched"] = r[8] == 1
        d["griptree"] = r[9]
        d["agent_id"] = r[10]
        d["repair"] = r[11] == 1
        d[key] = (source, i)
        append(e)
    out = Versions(entries)
    out._snapshot = _Snapshot(
        source,
        tuple(entries),
        heads,
        rich,
        {
            name: list(columns[3 + k])
            for k, name in enumerate(SCALAR_FIELDS)
            if name in _DEDUP_FIELDS
        },
    )
    return out


def dedup(entries: Any) -> list[Any] | None:
    """synapt's `_dedup_entries(entries)` from the store's heads when `entries` is a read of
    `read_versions` that nobody changed in a way the dedup could see (same objects in the
    same order, same session ids, timestamps, auto flags, focus and emptiness of the rich
    lists); None otherwise (the caller falls back to synapt's own function)."""
    if type(entries) is not Versions:
        return None
    snap: _Snapshot = entries._snapshot
    items = snap.items
    if len(entries) != len(items) or not all(map(is_, entries, items)):
        return None
    cols = snap.columns
    sids = cols["session_id"]
    # (auto: the entries hold True/False, the column 1/0; they compare equal.)
    for name in _DEDUP_FIELDS:
        if list(map(attrgetter(name), entries)) != cols[name]:
            return None
    # Lists: unloaded entries have exactly their scalars and the row key (a list assigned
    # before loading adds a key); loaded ones are checked one by one (they are few).
    sizes = list(map(len, map(vars, entries)))
    loaded = snap.source.loaded
    if sizes.count(_UNLOADED_KEYS) != len(items) - len(loaded):
        return None
    for i in loaded:
        e = items[i]
        if (
            sizes[i] != _LOADED_KEYS
            or rich_count(e.focus, e.done, e.decisions, e.next_steps) != snap.rich[i]
        ):
            return None
    return _heads_in_synapt_order(items, sids, snap.heads)


def _heads_in_synapt_order(
    items: tuple[Any, ...], sids: list[str], heads: list[int]
) -> list[Any] | None:
    """synapt's `list(best.values()) + no_sid`: each session's head at the place of the
    session's first version, then the entries without a session id in read order."""
    head_items = list(compress(items, heads))
    head_sids = list(compress(sids, heads))
    order: dict[str, Any] = dict.fromkeys(sids)
    no_sid: list[Any] = []
    if "" in order:
        del order[""]
        if sids.count("") != head_sids.count(""):
            return None  # every entry without a session id is its own head
        no_sid = [e for e, s in zip(head_items, head_sids, strict=True) if not s]
    with_sid = len(head_sids) - len(no_sid)
    order.update(zip(head_sids, head_items, strict=True))
    order.pop("", None)
    # Exactly one head per session (else the store and synapt disagree: use synapt's).
    if with_sid != len(order):
        return None
    return [*order.values(), *no_sid]
