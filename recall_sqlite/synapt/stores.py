"""The stores activated synapt answers from: one open store per (workspace, worktree) per
process, the first-use import of the workspace's synapt journals, and the JSONL mirror.

Mirror: synapt code that opens the journal file itself (the index build, enrich, export,
the dashboard) and callers that test `path.exists()` before asking keep working because
every entry written through the adapter is also appended, one way, to the worktree's
mirror (synapt/paths.py: the bucket stock synapt reads from that worktree's root). The
store is the truth; the mirror is never read back by the adapter,
only re-imported (its lines come back as duplicates), so a line appended by a stock synapt
process reaches the store on the next activated start."""

from __future__ import annotations

import atexit
import json
import os
from pathlib import Path
from typing import Any

from .. import Store, open_store
from .. import synapt_layout as layout
from ..errors import ReadOnlyStoreError, RecallError
from ..paths.resolve import Workspace, resolve
from .paths import mirror_of

# The adapter's state beside the store: the stores of the workspace as they were when last
# found wholly imported, so an unchanged start checks them by stat alone.
MARKER = "recall-sqlite-synapt.json"

_stores: dict[tuple[str, str, str], Store] = {}
_checked: set[str] = set()
_read_only: set[tuple[str, str, str]] = set()
# `recall-sqlite --read-only synapt ...`: every store opened read-only.
_mode = {"read_only": False}


def set_read_only(on: bool) -> None:
    _mode["read_only"] = bool(on)


def _close_all() -> None:
    for store in _stores.values():
        store.close()
    _stores.clear()


atexit.register(_close_all)


def store_for(directory: Path | None, w: Workspace | None = None) -> tuple[Store, Workspace]:
    """The open store for `directory` (default: the current directory), imported whole;
    `w`: `directory` already resolved."""
    if w is None:
        w = resolve(directory)
    key = (str(w.root), w.worktree, os.environ.get("RECALL_SQLITE_DB", ""))
    store = _stores.get(key)
    if store is None:
        store, read_only = _open(directory)
        _stores[key] = store
        if read_only:
            _read_only.add(key)
    # A read-only store cannot take an import: it answers as it stands.
    if str(w.root) not in _checked and key not in _read_only:
        _checked.add(str(w.root))
        try:
            ensure_imported(store, w)
        except BaseException:
            _checked.discard(str(w.root))
            raise
    return store, w


def _open(directory: Path | None) -> tuple[Store, bool]:
    """The store and whether it is read-only: for writing unless --read-only; a store this
    user cannot write (another owner's, read-only media) is opened read-only, so synapt's
    reads answer and a write fails with one line saying why (rather than refusing even a
    read with advice the user cannot follow)."""
    if _mode["read_only"]:
        return open_store(directory, read_only=True), True
    try:
        store = open_store(directory)  # one this user cannot write opens read-only
    except ReadOnlyStoreError:
        return open_store(directory, read_only=True), True
    return store, store.read_only


def reset() -> None:
    """Forget open stores and first-use checks (tests; a process that changes HOME)."""
    _close_all()
    _checked.clear()
    _read_only.clear()
    _mode["read_only"] = False


# -- first-use import --------------------------------------------------------------------


def ensure_imported(store: Store, w: Workspace) -> None:
    """Import every synapt journal of the workspace not (wholly) imported yet, then bring
    the canonical buckets up to date with what the import brought from elsewhere.

    The stores are the ones `recall-sqlite import` finds (legacy/plan.py: the workspace's
    own data directory, nested ones at any depth, linked worktrees and theirs), so the first
    read after switching is already whole. After that, a start in which every store it
    found has the size and mtime recorded then, and the workspace's own data directory
    holds no new journal, imports nothing and does not load recall_sqlite.legacy; anything
    else runs the whole check again. (A store nested below a subdirectory *after* the last
    check is found by the next whole check, `recall-sqlite verify` or `doctor`.)"""
    marker = _marker(w)
    state = _read_state(marker)
    files = state.get("files")
    here = _store_key(store)
    # A different store file than at the last check (one started anew with --force, a
    # restored backup) has not seen the buckets, however unchanged they are.
    if isinstance(files, dict) and state.get("store") == here and _unchanged(files, w.root):
        return
    plan = store.legacy.plan()
    states = store.legacy.states(plan)
    todo = [p.path for p in plan.everything if states.get(p.key) != "imported"]
    if todo:
        report = store.legacy.import_paths(todo)
        if not report.ok:
            problems = [f"{p.path}: {p.reason}" for p in report.problems]
            problems += [
                f"{s.path}: {s.note or s.action}" for s in report.sources if s.action == "failed"
            ]
            raise RecallError("importing synapt's journals failed: " + "; ".join(problems))
        mirrors = _mirrors(store)
        fill = {
            s.worktree
            for s in report.sources
            if s.imported
            and s.worktree in mirrors
            and Path(s.path).resolve() != mirrors[s.worktree].resolve()
        }
        for key in sorted(fill):
            fill_mirror(store, w, key, mirrors[key])
    snapshot: dict[str, list[int]] = {}
    for p in plan.everything:
        got = _stat(p.path.resolve())
        if got is not None:
            snapshot[str(p.path.resolve())] = list(got)
    _update_state(marker, files=snapshot, store=here)


def _store_key(store: Store) -> list[Any] | None:
    """Which store file answered: the workspace id and the file's device and inode."""
    try:
        st = os.stat(store.workspace.db_path)
    except OSError:
        return None
    return [store.workspace.id, st.st_dev, st.st_ino]


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _own_journals(root: Path) -> list[Path]:
    found: list[Path] = []
    for rel in layout.DATA_DIRS:
        try:
            found += [f for f, _, _ in layout.journals_in(root / rel)]
        except OSError:
            continue
    return found


def _unchanged(files: dict[str, Any], root: Path) -> bool:
    if any(_stat(Path(p)) != tuple(v) for p, v in files.items()):
        return False
    return all(str(p.resolve()) in files for p in _own_journals(root))


def _read_state(marker: Path) -> dict[str, Any]:
    try:
        got = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return got if isinstance(got, dict) else {}


def _update_state(marker: Path, **changes: Any) -> None:
    """Rewrite the adapter's state file atomically (a lost update between two processes
    only costs the next start an import check, never a missed import)."""
    state = _read_state(marker)
    state.update(changes, version=1)
    marker.parent.mkdir(parents=True, exist_ok=True)
    tmp = marker.with_name(f"{marker.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(state, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, marker)


def marker_path(root: Path) -> Path:
    """Where the adapter keeps its state for the workspace at `root`."""
    return layout.data_dir(root) / MARKER


def _marker(w: Workspace) -> Path:
    return marker_path(w.root)


def _mirrors(store: Store) -> dict[str, Path]:
    """worktree key -> its mirror, for the worktrees whose root exists."""
    return {
        t.key: mirror_of(Path(t.root))
        for t in store.worktrees()
        if t.root is not None and t.root_exists
    }


# -- the mirror --------------------------------------------------------------------------


def mirror_append(
    store: Store,
    path: Path,
    records: list[dict[str, Any]],
    marker: Path,
    worktree: str | None = None,
) -> None:
    """Append entries to the mirror as synapt's append_entry would (same line, same lock),
    creating the bucket directory as needed; the store accounts for them as its own
    (legacy/mirror.py), so survey, verify and doctor do not take them for growth.

    When the file was as the last whole check recorded it (`marker`), it is recorded again
    after these lines, so the next start does not check it again; decided under synapt's
    lock, so a line another synapt process appended is never taken for imported."""
    real = str(path.resolve())

    def remember(before: os.stat_result, after: os.stat_result) -> None:
        files = _read_state(marker).get("files")
        if isinstance(files, dict) and files.get(real) == [before.st_size, before.st_mtime_ns]:
            _update_state(marker, files={**files, real: [after.st_size, after.st_mtime_ns]})

    store.legacy.append_own(
        path, [layout.line(r) for r in records], worktree=worktree, on_locked=remember
    )


def fill_mirror(store: Store, w: Workspace, key: str, path: Path) -> int:
    """Append to a worktree's mirror (`path`) the versions it lacks (entries imported from
    nested buckets). Returns how many lines were added."""
    present: set[str] = set()
    if path.exists():
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.strip()
                if line:
                    present.add(_canon_line(line))
    missing = [
        record
        for record in (e.synapt_dict() for e in store.journal.versions(worktree=key))
        if json.dumps(record, sort_keys=True) not in present
    ]
    mirror_append(store, path, missing, _marker(w), worktree=key)
    return len(missing)


def _canon_line(line: str) -> str:
    try:
        return json.dumps(json.loads(line), sort_keys=True)
    except ValueError:
        return line
