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
from ..errors import RecallError
from ..paths.resolve import Workspace, resolve
from .paths import mirror_of

# The adapter's state beside the store: the stores of the workspace as they were when last
# found wholly imported, so an unchanged start checks them by stat alone.
MARKER = "recall-sqlite-synapt.json"

_stores: dict[tuple[str, str, str], Store] = {}
_checked: set[str] = set()


def _close_all() -> None:
    for store in _stores.values():
        store.close()
    _stores.clear()


atexit.register(_close_all)


def store_for(directory: Path | None) -> tuple[Store, Workspace]:
    """The open store for `directory` (default: the current directory), imported whole."""
    w = resolve(directory)
    key = (str(w.root), w.worktree, os.environ.get("RECALL_SQLITE_DB", ""))
    store = _stores.get(key)
    if store is None:
        store = _stores[key] = open_store(directory)
    if str(w.root) not in _checked:
        _checked.add(str(w.root))
        try:
            ensure_imported(store, w)
        except BaseException:
            _checked.discard(str(w.root))
            raise
    return store, w


def reset() -> None:
    """Forget open stores and first-use checks (tests; a process that changes HOME)."""
    _close_all()
    _checked.clear()


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


def mirror_append(path: Path, record: dict[str, Any], marker: Path) -> None:
    """Append one entry to the mirror as synapt's append_entry would (same line, same
    lock), creating the bucket directory as needed.

    When the file was as the last whole check recorded it (`marker`), it is recorded again
    after this line, so the next start does not re-import the mirror's own lines; checked
    and recorded under synapt's lock, so a line another synapt process appended is never
    taken for imported."""
    path.parent.mkdir(parents=True, exist_ok=True)
    real = str(path.resolve())
    with open(path, "a", encoding="utf-8") as f:
        layout.lock(f)
        files = _read_state(marker).get("files")
        known = (
            isinstance(files, dict)
            and files.get(real) is not None
            and tuple(files[real]) == _stat(Path(real))
        )
        f.write(layout.line(record) + "\n")
        f.flush()
        if known:
            assert isinstance(files, dict)
            st = os.fstat(f.fileno())
            _update_state(marker, files={**files, real: [st.st_size, st.st_mtime_ns]})


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
    added = 0
    for e in store.journal.versions(worktree=key):
        record = e.synapt_dict()
        if json.dumps(record, sort_keys=True) not in present:
            mirror_append(path, record, _marker(w))
            added += 1
    return added


def _canon_line(line: str) -> str:
    try:
        return json.dumps(json.loads(line), sort_keys=True)
    except ValueError:
        return line
