"""`recall-sqlite demo`: a real git repository with the stores synapt 0.30.0 leaves in it
(one per directory a session ran from), then the migration that fixes the split (survey,
import, re-import, verify) and a read from a subdirectory that now sees its worktree's
whole history.

synapt 0.30.0, run from a plain git repository, keeps its data root in the directory it
ran from (unless that directory holds `.git`) and names the bucket after the repository;
a linked worktree gets a bucket named after its directory in the main checkout's store,
and its subdirectories get nested stores of their own. `WRITES` lists which session was
written from which directory; synapt_layout says where synapt puts each and writes the
line as synapt's `append_entry` does (tests/unit/demo/test_demo.py runs synapt itself in the same
layout and compares), so the demo needs nothing installed but this package;
with `git` missing it writes a minimal valid `.git` (and linked-worktree metadata) itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from . import synapt_layout as layout
from .errors import InvalidInputError
from .timestamps import parse_timestamp

REPO = "proj"
LINKED = "proj-feat"
# Where a user stood (relative to the demo directory) -> the store synapt 0.30.0 writes
# there (what synapt_layout computes and the demo uses; the tests hold the three equal).
STORES = {
    "proj": "proj/.synapt/recall/worktrees/proj/journal.jsonl",
    "proj/server": "proj/server/.synapt/recall/worktrees/proj/journal.jsonl",
    "proj/server/api": "proj/server/api/.synapt/recall/worktrees/proj/journal.jsonl",
    "proj-feat": "proj/.synapt/recall/worktrees/proj-feat/journal.jsonl",
    "proj-feat/lib": "proj-feat/lib/.synapt/recall/worktrees/proj-feat/journal.jsonl",
}
# The directory the "before" and "after" reads are made from.
SUBDIR = "proj/server"


def synapt_line(**fields: Any) -> str:
    """One journal line exactly as synapt's append_entry writes it (without the newline)."""
    try:
        return layout.line(fields)
    except ValueError as exc:
        raise InvalidInputError(str(exc)) from None


def _ts(hours: float) -> str:
    return (datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc) + timedelta(hours=hours)).isoformat()


@dataclass(frozen=True)
class Write:
    cwd: str  # where the session ran, relative to the demo directory
    fields: dict[str, Any]  # synapt JournalEntry fields
    cut: bool = False  # the write was interrupted: only the first half landed


# In the order they happened. Session b's auto stub was written at its end from the root;
# its enrichment ran later from proj/server (where the next session started). The second
# version of d was being written when the machine went down.
WRITES: tuple[Write, ...] = (
    Write(
        "proj",
        dict(
            timestamp=_ts(0),
            session_id="a1f0c2d4",
            branch="main",
            focus="Set up the project skeleton",
            done=["Created pyproject and CI", "Wrote the README outline"],
            decisions=["Use SQLite for the session memory"],
            next_steps=["Add the HTTP server"],
            files_modified=["pyproject.toml", "README.md"],
            git_log=["3f2a1b9 Initial commit"],
        ),
    ),
    Write(
        "proj",
        dict(
            timestamp=_ts(26),
            session_id="b7e19a03",
            branch="main",
            focus="Add the HTTP server",
            files_modified=["server/app.py"],
            auto=True,
        ),
    ),
    Write(
        "proj/server",
        dict(
            timestamp=_ts(26.5),
            session_id="b7e19a03",
            branch="main",
            focus="Add the HTTP server",
            done=["Served /health from server/app.py"],
            next_steps=["Add request logging", "Write server tests"],
            files_modified=["server/app.py"],
            auto=True,
            enriched=True,
        ),
    ),
    Write(
        "proj/server",
        dict(
            timestamp=_ts(49),
            session_id="c3d58e11",
            branch="main",
            focus="Request logging \u2192 structured JSON logs",
            done=["Added request logging"],
            decisions=["Log as JSON lines, one per request"],
            next_steps=["Write server tests"],
            files_modified=["server/app.py", "server/log.py"],
        ),
    ),
    Write(
        "proj/server/api",
        dict(
            timestamp=_ts(73),
            session_id="d90b44f7",
            branch="main",
            focus="API tests",
            done=["Wrote API tests (12 passing)"],
            next_steps=["Release 0.1"],
            files_modified=["server/api/test_api.py"],
        ),
    ),
    Write(
        "proj/server/api",
        dict(
            timestamp=_ts(74),
            session_id="d90b44f7",
            branch="main",
            focus="API tests",
            done=["Wrote API tests (12 passing)", "Fixed a flaky test"],
            next_steps=["Release 0.1"],
            files_modified=["server/api/test_api.py"],
        ),
        cut=True,
    ),
    Write(
        "proj-feat",
        dict(
            timestamp=_ts(80),
            session_id="f4a7b2c9",
            branch="feat",
            focus="Feature flag for the new endpoint",
            done=["Added the flag"],
            next_steps=["Wire the flag into lib/"],
            files_modified=["flags.py"],
        ),
    ),
    Write(
        "proj-feat/lib",
        dict(
            timestamp=_ts(90),
            session_id="f5b8c3d0",
            branch="feat",
            focus="Flag in lib/",
            done=["Wired the flag into lib/"],
            next_steps=["Merge feat"],
            files_modified=["lib/flags.py"],
        ),
    ),
    Write(
        "proj",
        dict(
            timestamp=_ts(97),
            session_id="e2c6a5b8",
            branch="main",
            focus="Release prep",
            done=["Tagged 0.1.0"],
            next_steps=["Announce the release"],
            files_modified=["CHANGELOG.md"],
            git_log=["9c1e7d2 Release 0.1.0"],
        ),
    ),
)


@dataclass(frozen=True)
class DemoWorkspace:
    root: Path
    subdir: Path
    stores: dict[str, Path]  # store path relative to the demo directory -> its path
    git: bool  # built with git (else a minimal .git written by hand)
    sessions: int  # distinct sessions in the main worktree
    sessions_linked: int  # ... in the linked worktree
    malformed: int


def _git_env() -> dict[str, str]:
    # The caller's GIT_* variables (a GIT_DIR from a hook, say) must not redirect git.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="demo",
        GIT_AUTHOR_EMAIL="demo@example.invalid",
        GIT_COMMITTER_NAME="demo",
        GIT_COMMITTER_EMAIL="demo@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
    )
    return env


def _with_git(base: Path) -> bool:
    git = shutil.which("git")
    if git is None:
        return False
    root = base / REPO
    env = _git_env()
    steps = (
        ["init", "-q", "-b", "main", str(root)],
        ["-C", str(root), "commit", "-q", "--allow-empty", "-m", "Initial commit"],
        ["-C", str(root), "worktree", "add", "-q", str(base / LINKED), "-b", "feat"],
    )
    try:
        for args in steps:
            subprocess.run([git, *args], env=env, check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        # An old or broken git: start again with the hand-written repository.
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(base / LINKED, ignore_errors=True)
        return False
    return True


def _without_git(base: Path) -> None:
    """What `git init` and `git worktree add` leave that matters here: HEAD, objects/ and
    refs/ of the repository, and the linked worktree's `.git` file and admin directory."""
    root, linked = base / REPO, base / LINKED
    dotgit = root / ".git"
    for d in ("objects", "refs/heads", "refs/tags"):
        (dotgit / d).mkdir(parents=True)
    (dotgit / "HEAD").write_text("ref: refs/heads/main\n")
    admin = dotgit / "worktrees" / LINKED
    admin.mkdir(parents=True)
    (admin / "HEAD").write_text("ref: refs/heads/feat\n")
    (admin / "commondir").write_text("../..\n")
    (admin / "gitdir").write_text(f"{linked / '.git'}\n")
    linked.mkdir()
    (linked / ".git").write_text(f"gitdir: {admin}\n")


def make_repo(base: Path, *, use_git: bool | None = None) -> bool:
    """`proj/` (branch main) with `server/api/`, and its linked worktree `proj-feat/`
    (branch feat) with `lib/`. Returns whether git built it."""
    used = _with_git(base) if use_git is not False else False
    if not used:
        if use_git:
            raise InvalidInputError("git is not available")
        _without_git(base)
    for d in ("proj/server/api", "proj-feat/lib"):
        (base / d).mkdir(parents=True, exist_ok=True)
    (base / "proj/server/app.py").write_text("print('hello')\n")
    return used


def build(base: Path, *, use_git: bool | None = None) -> DemoWorkspace:
    """Write the demo workspace under `base`: the repository (`make_repo`) and, for each of
    `WRITES` in order, the line synapt 0.30.0 appends to the journal it uses from the
    directory the write ran in (synapt_layout.journal_for: a store made by one write is
    where synapt looks on the next)."""
    used = make_repo(base, use_git=use_git)
    env = layout.neutral_env()
    stores: dict[str, Path] = {}
    for w in WRITES:
        path = layout.journal_for(base / w.cwd, env)
        stores[os.path.relpath(path, base.resolve())] = path
        line = synapt_line(**w.fields)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as f:
            f.write((line[: len(line) // 2] if w.cut else line + "\n").encode("utf-8"))
    main = {w.fields["session_id"] for w in WRITES if not w.cwd.startswith(LINKED)}
    linked = {w.fields["session_id"] for w in WRITES if w.cwd.startswith(LINKED)}
    return DemoWorkspace(
        base / REPO,
        base / SUBDIR,
        stores,
        used,
        sessions=len(main),
        sessions_linked=len(linked),
        malformed=sum(w.cut for w in WRITES),
    )


def before_from_subdir(demo: DemoWorkspace) -> dict[str, Any]:
    """What synapt 0.30.0's read_entries returns in the subdirectory before the import:
    asked of synapt itself when it is installed (its own path resolution, its own read),
    else our reading of the store it would read (complete JSON lines, one per session)."""
    sids: list[str] | None = None
    try:
        from synapt.recall.journal import _journal_path, read_entries
    except ImportError:
        by = "recall-sqlite's reading of that store (synapt is not installed)"
    else:
        try:
            # An explicit project_dir: synapt resolves from it, ignoring its env overrides.
            path = _journal_path(demo.subdir)
            sids = [e.session_id for e in read_entries(path, n=1000)]
            by = "synapt 0.30.0's read_entries"
        except Exception as exc:  # noqa: BLE001 - another synapt must not break the demo
            by = f"recall-sqlite's reading of that store (synapt failed: {exc!r:.80})"
    if sids is None:
        path = layout.journal_for(demo.subdir, layout.neutral_env())
        newest: dict[str, int] = {}
        for raw in path.read_text(encoding="utf-8").splitlines():
            try:
                e = json.loads(raw)
            except ValueError:
                continue  # synapt skips a line it cannot parse
            sid = e.get("session_id", "")
            newest[sid] = max(newest.get(sid, 0), parse_timestamp(e["timestamp"]))
        # One per session, newest first: what read_entries returns for these lines.
        sids = sorted(newest, key=newest.__getitem__, reverse=True)
    base = demo.root.parent
    # Newest first, as a read lists them.
    main = sorted(
        (
            (w.fields["timestamp"], w.fields["session_id"])
            for w in WRITES
            if not w.cwd.startswith(LINKED)
        ),
        reverse=True,
    )
    missing = list(dict.fromkeys(sid for _, sid in main if sid not in sids))
    return {
        "computed_by": by,
        "store": os.path.relpath(path, base),
        "session_ids": sids,
        "missing_session_ids": missing,
        "newest_missing": bool(main) and main[0][1] in missing,
        "synapt_read_from_subdir_sessions": len(sids),
        "sessions_in_worktree": demo.sessions,
        "sessions_in_workspace": demo.sessions + demo.sessions_linked,
    }


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
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidInputError(f"cannot create {path}: {exc.strerror or exc}") from None
        yield path
        return
    tmp = Path(tempfile.mkdtemp(prefix="recall-sqlite-demo-"))
    try:
        yield tmp
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def run(base: Path, *, use_git: bool | None = None) -> dict[str, Any]:
    """Build the workspace under `base` and migrate it; returns every step's result."""
    from .legacy.survey import survey
    from .paths.datadir import default_db_path
    from .store import open_store

    with neutral_env():
        demo = build(base, use_git=use_git)
        before = before_from_subdir(demo)
        db = Path(default_db_path(demo.root))
        surveyed = survey(root=demo.root)  # writes nothing
        with open_store(demo.root, root=demo.root, db_path=db) as store:
            imported = store.legacy.import_paths()
            again = store.legacy.import_paths()
            verified = store.legacy.verify(deep=True)
        reads = {}
        for name, where in (
            ("read_from_subdir", demo.subdir),
            ("read_from_linked_subdir", base / LINKED / "lib"),
        ):
            with open_store(where, db_path=db, read_only=True) as store:
                read = store.journal.read(n=20)
                reads[name] = {
                    "cwd": str(where),
                    "worktree": store.workspace.worktree,
                    "total": read.total,
                    "elsewhere": read.elsewhere.to_dict(),
                    "entries": [e.to_dict() for e in read.entries],
                }
    return {
        "dir": str(base),
        "workspace_root": str(demo.root),
        "subdir": str(demo.subdir),
        "database": str(db),
        "git": demo.git,
        "stores": sorted(demo.stores),
        "before": before,
        "survey": surveyed.to_dict(),
        "import": imported.to_dict(),
        "reimport": again.to_dict(),
        "verify": verified.to_dict(),
        **reads,
    }
