"""The stores activated synapt answers from: one open store per (workspace, worktree) per
process, the first-use import of the workspace's synapt journals, and the JSONL mirror.

Mirror: synapt code that opens the journal file itself (the index build, enrich, export,
the dashboard) and callers that test `path.exists()` before asking keep working because
every entry written through the adapter is also appended, one way, to the worktree's
canonical bucket. The store is the truth; the mirror is never read back by the adapter,
only re-imported (its lines come back as duplicates), so a line appended by a stock synapt
process reaches the store on the next activated start."""

from __future__ import annotations

import atexit
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import Store, open_store
from ..errors import RecallError
from ..workspace import Workspace, resolve
from .paths import JOURNAL, canonical_journal, linked_worktrees, worktree_bucket

# The bounded walk for journals synapt nested below the workspace (run from a
# subdirectory of a plain git repository): deep enough for `repo/server/api`, cheap enough
# for a hook.
_WALK_DEPTH = 6
_WALK_DIRS = 5000
_SKIP = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", "target", "dist",
                   "build", ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
_DATA_DIRS = (".synapt/recall", ".synapse/recall", ".synapse-recall")
# Written once the whole workspace has been searched for synapt journals; later starts
# only look at the files already known and the workspace's own data directory.
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


def _walk_data_dirs(top: Path) -> Iterator[Path]:
    """synapt data directories at or below `top`, bounded in depth and directories seen."""
    seen = 0
    stack: list[tuple[Path, int]] = [(top, 0)]
    while stack:
        d, depth = stack.pop()
        seen += 1
        if seen > _WALK_DIRS:
            return
        for rel in _DATA_DIRS:
            if (d / rel).is_dir():
                yield d / rel
        if depth >= _WALK_DEPTH:
            continue
        try:
            with os.scandir(d) as it:
                children = [e.path for e in it
                            if e.is_dir(follow_symlinks=False) and e.name not in _SKIP
                            and not e.name.startswith((".synapt", ".synapse"))]
        except OSError:
            continue
        stack.extend((Path(c), depth + 1) for c in sorted(children, reverse=True))


def _journals(data_dir: Path) -> list[Path]:
    found = []
    if (data_dir / JOURNAL).is_file():
        found.append(data_dir / JOURNAL)
    try:
        names = sorted(os.listdir(data_dir / "worktrees"))
    except OSError:
        names = []
    found += [data_dir / "worktrees" / n / JOURNAL for n in names
              if (data_dir / "worktrees" / n / JOURNAL).is_file()]
    return found


def legacy_journals(w: Workspace, *, deep: bool) -> list[Path]:
    """Every synapt journal of the workspace: in its own data directory and, with `deep`,
    nested below it and below its linked worktrees."""
    tops = [w.root, *linked_worktrees(w.root)] if deep else [w.root]
    files: list[Path] = []
    for top in tops:
        dirs = _walk_data_dirs(top) if deep else (top / d for d in _DATA_DIRS)
        for d in dirs:
            files += _journals(d)
    seen: set[Path] = set()
    out = []
    for f in files:
        r = f.resolve()
        if r not in seen:
            seen.add(r)
            out.append(r)
    return out


def ensure_imported(store: Store, w: Workspace) -> None:
    """Import every synapt journal of the workspace not (wholly) imported yet, then bring
    the canonical buckets up to date with what the import brought from elsewhere.

    Which files are up to date is decided without importing recall_sqlite.legacy (~8 ms
    of every hook): from the import records' size and mtime, as `store.legacy.states()`
    decides it, or from what the mirror recorded after appending to a file that was up to
    date (see mirror_append)."""
    marker = w.root / ".synapt" / "recall" / MARKER
    state = _read_state(marker)
    deep = not state.get("searched")
    imported = _import_records(store)
    mirrored = state.get("mirrored", {})
    todo = [p for p in legacy_journals(w, deep=deep)
            if not _up_to_date(p, imported, mirrored)]
    if todo:
        report = store.legacy.import_paths(todo)
        if not report.ok:
            problems = [f"{p.path}: {p.reason}" for p in report.problems]
            problems += [f"{s.path}: {s.note or s.action}" for s in report.sources
                         if s.action == "failed"]
            raise RecallError("importing synapt's journals failed: " + "; ".join(problems))
        fill = {s.worktree for s in report.sources
                if s.imported and Path(s.path) != _canonical_for_key(w, s.worktree)}
        for key in sorted(fill):
            fill_mirror(store, w, key)
    if deep:
        _update_state(marker, searched=True)


# Import records as `recall_sqlite.legacy.sources.states` reads them (the same table and
# rule), queried here so that a start with nothing to import never loads that package.
_IMPORT_RECORDS = ("SELECT path, size, mtime_ns, complete FROM import_sources"
                   " WHERE workspace_id = ? AND superseded = 0")


def _import_records(store: Store) -> dict[str, tuple[int, int]]:
    """path -> (size, mtime_ns) of each file the import took in whole."""
    rows = store.db.query(_IMPORT_RECORDS, (store.context.workspace_pk,))
    return {str(path): (int(size), int(mtime)) for path, size, mtime, complete in rows
            if complete}


def _up_to_date(path: Path, imported: dict[str, tuple[int, int]],
                mirrored: dict[str, list[int]]) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    now = (st.st_size, st.st_mtime_ns)
    key = str(path)
    return imported.get(key) == now or tuple(mirrored.get(key, ())) == now


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


def _canonical_for_key(w: Workspace, key: str) -> Path:
    return (w.root / ".synapt" / "recall" / "worktrees" / worktree_bucket(w.root, key)
            / JOURNAL).resolve()


# -- the mirror --------------------------------------------------------------------------


def mirror_append(path: Path, record: dict[str, Any], store: Store | None = None) -> None:
    """Append one entry to the mirror as synapt's append_entry would (same line, same
    lock), creating the bucket directory inside the workspace's own data directory.

    With `store`: when the file was up to date before this line (imported, or last written
    by this function), it is recorded as up to date after it too, so the next start does
    not re-import the mirror's own lines. Checked and recorded under synapt's lock, so a
    line another synapt process appended is never recorded as imported."""
    from synapt.recall._filelock import lock_exclusive

    path.parent.mkdir(parents=True, exist_ok=True)
    marker = path.parent.parent.parent / MARKER
    real = path.resolve()  # the import's records name resolved paths
    with open(path, "a", encoding="utf-8") as f:
        lock_exclusive(f)
        fresh = False
        if store is not None:
            state = _read_state(marker)
            fresh = _up_to_date(real, _import_records(store), state.get("mirrored", {}))
        f.write(json.dumps(record) + "\n")
        f.flush()
        if fresh:
            st = os.fstat(f.fileno())
            mirrored = dict(_read_state(marker).get("mirrored", {}))
            mirrored[str(real)] = [st.st_size, st.st_mtime_ns]
            _update_state(marker, mirrored=mirrored)


def fill_mirror(store: Store, w: Workspace, key: str) -> int:
    """Append to a worktree's canonical bucket the versions synapt would show that it
    lacks (entries imported from nested buckets). Returns how many lines were added."""
    path = _canonical_for_key(w, key)
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
            mirror_append(path, record, store)
            added += 1
    return added


def _canon_line(line: str) -> str:
    try:
        return json.dumps(json.loads(line), sort_keys=True)
    except ValueError:
        return line


def mirror_path_for(w: Workspace) -> Path:
    return canonical_journal(w)
