"""synapt 0.30.0's journal API (`synapt.recall.journal`) answered from the store.

Same names, signatures and return types; synapt's own `JournalEntry` objects in and out.
A `path` only selects the scope (see paths.py); a path that is not laid out as a synapt
journal is a file the caller named on purpose and is handled by synapt's own function.
Store problems raise `HostError` with one readable message, never a JSONL fallback."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import synapt.recall.journal as sj

from .. import JournalEntry, Store
from ..errors import HostError, InvalidInputError, RecallError
from .lazy import dedup, read_versions
from .paths import Target, mirror_of, target_of_dir, target_of_path
from .stores import marker_path, mirror_append, store_for

F = TypeVar("F", bound=Callable[..., Any])

# synapt's own functions, captured before activation rebinds them (patch.py fills this).
ORIGINAL: dict[str, Any] = {}
# While synapt's session start runs, its reads are served a few versions (startup.py
# installs these): (path) -> list or None, (entries) -> heads or None.
SERVED: dict[str, Callable[[Any], Any]] = {}


def _answering(fn: F) -> F:
    """Store problems become one HostError naming the store; bad input stays as it is."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (HostError, InvalidInputError):
            raise
        except RecallError as exc:
            raise HostError(f"recall-sqlite store: {exc}") from None

    return wrapper  # type: ignore[return-value]


def _open(path: Path | str | None) -> tuple[Store, Target] | None:
    if path is None:
        target, _ = target_of_dir(None)
    else:
        found = target_of_path(path)
        if found is None:
            return None
        target = found
    store, _ = store_for(target.directory, target.workspace)
    return store, target


def to_synapt(e: JournalEntry) -> Any:
    return sj.JournalEntry(**e.synapt_dict())


# -- paths -------------------------------------------------------------------------------


@_answering
def _journal_path(project_dir: Path | None = None) -> Path:
    """The worktree's mirror: the bucket stock synapt reads from the worktree's root (from
    any subdirectory of it)."""
    target, _ = target_of_dir(project_dir)
    return target.journal


# -- writing -----------------------------------------------------------------------------


@_answering
def append_entry(entry: Any, path: Path | None = None, allow_collapsed: bool = False) -> Path:
    if not allow_collapsed:
        collapses = sj._entry_collapses(entry)
        if collapses:
            name, value = collapses[0]
            sig = next(s for s in sj.COLLAPSE_SIGNATURES if s in value)
            # synapt's own exception and wording: its callers catch and show it.
            raise sj.JournalFieldCollapse(
                f"journal field {name!r} carries tool-call markup {sig!r} — an "
                f"unclosed parameter swallowed the fields after it, so the "
                f"trailing fields are empty rather than missing. Resend with "
                f"shorter field values."
            )
    opened = _open(path)
    if opened is None:
        result: Path = ORIGINAL["append_entry"](entry, path, allow_collapsed)
        return result
    store, target = opened
    record = entry.to_dict()
    store.journal.append(record, allow_collapsed=True)
    mirror_append(store, target.journal, [record], marker_path(store.workspace.root))
    return target.journal


@_answering
def compact_journal(path: Path | None = None) -> int:
    """The store keeps every version and reads pick one: nothing to rewrite."""
    if path is not None and target_of_path(path) is None:
        removed: int = ORIGINAL["compact_journal"](path)
        return removed
    return 0


# -- reading -----------------------------------------------------------------------------


@_answering
def read_entries(path: Path | None = None, n: int = 5) -> list[Any]:
    opened = _open(path)
    if opened is None:
        got: list[Any] = ORIGINAL["read_entries"](path, n)
        return got
    store, _ = opened
    if isinstance(n, int) and not isinstance(n, bool) and n >= 0:
        return [to_synapt(e) for e in store.journal.read(n).entries]
    # synapt slices with whatever n it is given (a negative n drops the oldest).
    total = store.journal.read(0).total
    return [to_synapt(e) for e in store.journal.read(total).entries][:n]


@_answering
def read_latest(path: Path | None = None, meaningful: bool = False) -> Any:
    opened = _open(path)
    if opened is None:
        return ORIGINAL["read_latest"](path, meaningful)
    entry = opened[0].journal.host.newest(meaningful=bool(meaningful))
    return to_synapt(entry) if entry is not None else None


@_answering
def read_previous_meaningful(current_session_id: str = "", path: Path | None = None) -> Any:
    opened = _open(path)
    if opened is None:
        return ORIGINAL["read_previous_meaningful"](current_session_id, path)
    entry = opened[0].journal.host.previous_meaningful(current_session_id or "")
    return to_synapt(entry) if entry is not None else None


@_answering
def pending_next_steps(path: Path | None = None) -> list[str]:
    opened = _open(path)
    if opened is None:
        got: list[str] = ORIGINAL["pending_next_steps"](path)
        return got
    return list(opened[0].journal.pending_next_steps().pending)


@_answering
def session_done_items(session_id: str, path: Path | None = None) -> list[str]:
    opened = _open(path)
    if opened is None:
        got: list[str] = ORIGINAL["session_done_items"](session_id, path)
        return got
    if not session_id:
        return []
    return opened[0].journal.host.done_items(session_id)


@_answering
def _read_all_entries(path: Path) -> list[Any]:
    serve = SERVED.get("read")  # synapt's session start: the few versions it looks at
    served: list[Any] | None = serve(path) if serve is not None else None
    if served is not None:
        return served
    opened = _open(path)
    if opened is None:
        got: list[Any] = ORIGINAL["_read_all_entries"](path)
        return got
    # Entries that fetch their lists on first access, and remember the store's heads for
    # _dedup_entries (see lazy.py): the hook reads all versions and looks at a few.
    return read_versions(opened[0])


def _dedup_entries(entries: list[Any]) -> list[Any]:
    """synapt's own dedup, answered from the store's heads when `entries` is exactly what
    _read_all_entries returned (unchanged); any other list goes to synapt's function."""
    serve = SERVED.get("dedup")
    got = serve(entries) if serve is not None else None
    if got is None:
        got = dedup(entries)
    if got is None:
        got = ORIGINAL["_dedup_entries"](entries)
    return got


@_answering
def _read_all_session_ids(journal_path: Path) -> set[str]:
    opened = _open(journal_path)
    if opened is None:
        got: set[str] = ORIGINAL["_read_all_session_ids"](journal_path)
        return got
    return opened[0].journal.host.session_ids()


_PAGE = 64


@_answering
def newer_journal_elsewhere(path: Path, newest: str | None) -> Any:
    """The newest entry of another worktree newer than `newest`, named by that worktree's
    mirror: the store says how many entries lie in other worktrees, so the common answer
    (none) costs one read and nothing is left unread."""
    opened = _open(path)
    if opened is None:
        return ORIGINAL["newer_journal_elsewhere"](path, newest)
    store, target = opened
    unparsable = datetime.min.replace(tzinfo=timezone.utc)
    floor: datetime | None = None
    if newest is not None:
        try:
            floor = sj._timestamp_order(newest)
        except (TypeError, AttributeError):
            return None
        if floor == unparsable:
            return None
    if store.journal.read(0).elsewhere.other_worktrees == 0:
        return None
    own, n = store.workspace.worktree, _PAGE
    roots = {t.key: t.root for t in store.worktrees()}
    while True:
        entries = store.journal.read(n, all_worktrees=True).entries
        for e in entries:
            if e.worktree == own or not e.has_content():
                continue
            when = sj._timestamp_order(e.timestamp)
            if floor is not None and when <= floor:
                return None
            root = roots.get(e.worktree or ".")
            if root is None:
                continue  # known only from an imported file: synapt has no bucket to name
            mirror = mirror_of(Path(root))
            if mirror == target.journal:
                continue  # synapt keeps that worktree in this very bucket (a gr2 desk)
            return mirror, e.timestamp
        if len(entries) < n:
            return None
        n *= 4


# The names activation rebinds, wherever synapt holds them.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "_journal_path": _journal_path,
    "append_entry": append_entry,
    "compact_journal": compact_journal,
    "read_entries": read_entries,
    "read_latest": read_latest,
    "read_previous_meaningful": read_previous_meaningful,
    "pending_next_steps": pending_next_steps,
    "session_done_items": session_done_items,
    "_read_all_entries": _read_all_entries,
    "_dedup_entries": _dedup_entries,
    "_read_all_session_ids": _read_all_session_ids,
    "newer_journal_elsewhere": newer_journal_elsewhere,
}
