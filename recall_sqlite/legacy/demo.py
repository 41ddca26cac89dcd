"""`recall-sqlite demo`: a small workspace that reproduces synapt's bucket defect, then the
migration that fixes it (survey, import, verify) and a read that now sees everything.

The buckets are written byte for byte as synapt 0.30.0's `append_entry` writes them
(`json.dumps(asdict(entry))`: its field order, default separators, ASCII escapes), so the
demo needs nothing installed but this package.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError
from ..journal.codec import EMPTY, SYNAPT_FIELDS


def synapt_line(**fields: Any) -> str:
    """One journal line exactly as synapt's append_entry writes it (without the newline)."""
    unknown = set(fields) - set(SYNAPT_FIELDS)
    if unknown:
        raise InvalidInputError(f"not synapt journal fields: {sorted(unknown)}")
    return json.dumps({name: fields.get(name, EMPTY.get(name, "")) for name in SYNAPT_FIELDS})


def _ts(base: datetime, hours: float) -> str:
    return (base + timedelta(hours=hours)).isoformat()


@dataclass(frozen=True)
class DemoWorkspace:
    root: Path
    subdir: Path
    buckets: dict[str, Path]
    sessions: int               # distinct sessions across all buckets
    malformed: int


def build(base: Path) -> DemoWorkspace:
    """Write the demo workspace under `base`: `proj/` (a git checkout on branch main) with
    a plain subdirectory `proj/server/`, and the two buckets synapt would have left:
    `worktrees/proj/` (sessions started at the root) and `worktrees/server/` (sessions
    started in the subdirectory), overlapping the way real ones do."""
    root = base / "proj"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    subdir = root / "server"
    subdir.mkdir()
    (subdir / "app.py").write_text("print('hello')\n")
    data = root / ".synapt" / "recall" / "worktrees"
    t0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
    a = synapt_line(
        timestamp=_ts(t0, 0), session_id="a1f0c2d4", branch="main",
        focus="Set up the project skeleton",
        done=["Created pyproject and CI", "Wrote the README outline"],
        decisions=["Use SQLite for the session memory"],
        next_steps=["Add the HTTP server"], files_modified=["pyproject.toml", "README.md"],
        git_log=["3f2a1b9 Initial commit"])
    b_stub = synapt_line(
        timestamp=_ts(t0, 26), session_id="b7e19a03", branch="main",
        focus="Add the HTTP server", files_modified=["server/app.py"], auto=True)
    b_rich = synapt_line(
        timestamp=_ts(t0, 26.5), session_id="b7e19a03", branch="main",
        focus="Add the HTTP server", done=["Served /health from server/app.py"],
        next_steps=["Add request logging", "Write server tests"],
        files_modified=["server/app.py"], auto=True, enriched=True)
    c = synapt_line(
        timestamp=_ts(t0, 49), session_id="c3d58e11", branch="main",
        focus="Request logging \u2192 structured JSON logs",
        done=["Added request logging"], decisions=["Log as JSON lines, one per request"],
        next_steps=["Write server tests"], files_modified=["server/app.py", "server/log.py"])
    d = synapt_line(
        timestamp=_ts(t0, 73), session_id="d90b44f7", branch="main",
        focus="Server tests", done=["Wrote server tests (12 passing)"],
        next_steps=["Release 0.1"], files_modified=["server/test_app.py"])
    e = synapt_line(
        timestamp=_ts(t0, 97), session_id="e2c6a5b8", branch="main",
        focus="Release prep", done=["Tagged 0.1.0"],
        next_steps=["Announce the release"], files_modified=["CHANGELOG.md"],
        git_log=["9c1e7d2 Release 0.1.0"])
    # The root bucket: started at proj/. The server bucket: started at proj/server/; it
    # also holds a copy of the first entry and the enriched version of the root's stub, and
    # a line an interrupted write cut short.
    texts = {
        "proj": "".join(line + "\n" for line in (a, b_stub, e)),
        "server": "".join(line + "\n" for line in (a, b_rich, c, d)) + d[: len(d) // 2],
    }
    buckets = {name: data / name / "journal.jsonl" for name in texts}
    for name, text in texts.items():
        buckets[name].parent.mkdir(parents=True)
        buckets[name].write_bytes(text.encode("utf-8"))
    return DemoWorkspace(root, subdir, buckets, sessions=5, malformed=1)


@contextlib.contextmanager
def neutral_env() -> Iterator[None]:
    """The demo's identities must not follow the caller's overrides (a shared store, a
    worktree label, another database)."""
    names = ("SYNAPT_RECALL_ROOT", "GRIPSPACE_ROOT", "SYNAPT_RECALL_WORKTREE", "RECALL_SQLITE_DB")
    saved = {n: os.environ.pop(n) for n in names if n in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


@contextlib.contextmanager
def demo_dir(target: str | None, keep: bool) -> Iterator[Path]:
    """`target` (created; must be empty if it exists) or a temporary directory that is
    removed afterwards unless `keep`."""
    if target is not None:
        path = Path(target).expanduser().absolute()
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            raise InvalidInputError(f"{path} exists and is not an empty directory")
        path.mkdir(parents=True, exist_ok=True)
        yield path
        return
    tmp = Path(tempfile.mkdtemp(prefix="recall-sqlite-demo-"))
    try:
        yield tmp
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def run(base: Path) -> dict[str, Any]:
    """Build the workspace under `base` and migrate it; returns every step's result."""
    from ..store import open_store
    from .survey import survey

    with neutral_env():
        demo = build(base)
        db = demo.root / ".synapt" / "recall" / "recall-sqlite.db"
        before = survey([demo.root])
        server_sessions = next(b for b in before.buckets if b.bucket.name == "server")
        with open_store(demo.root, root=demo.root, db_path=db) as store:
            imported = store.legacy.import_paths([demo.root])
            again = store.legacy.import_paths([demo.root])
            verified = store.legacy.verify([demo.root], deep=True)
        with open_store(demo.subdir, db_path=db) as store:
            read = store.journal.read(n=20)
            where = store.workspace
    return {
        "dir": str(base), "workspace_root": str(demo.root), "subdir": str(demo.subdir),
        "database": str(db),
        "before": {"synapt_read_from_subdir_sessions": server_sessions.sessions,
                   "sessions_in_all_buckets": before.sessions},
        "survey": before.to_dict(), "import": imported.to_dict(), "reimport": again.to_dict(),
        "verify": verified.to_dict(),
        "read_from_subdir": {"worktree": where.worktree, "total": read.total,
                             "elsewhere": read.elsewhere.to_dict(),
                             "entries": [e.to_dict() for e in read.entries]},
    }
