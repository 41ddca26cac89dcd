"""Helpers the test files share: running git with a neutral identity, making repositories
and linked worktrees, the environment a user's process has, and running the CLI (as a
process, or in this one with captured output)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# The calls issue 34 names, in its order: the MCP server's tools, each with one answer
# schema in answers.py. Stated here, apart from the code, as the tests' oracle.
ISSUE_34_CALLS = (
    "journal_read",
    "journal_latest",
    "journal_pending",
    "journal_search",
    "journal_write",
    "journal_forget",
    "summary_latest",
    "summary_add",
    "cursor_unread",
    "cursor_advance",
    "where",
    "doctor",
)
REPO = Path(__file__).resolve().parent.parent  # the checkout the tests run from
TESTS = REPO / "tests"
# The variables that say where a process stands: a test's subprocess never inherits them.
IDENTITY_PREFIXES = ("SYNAPT_", "GRIPSPACE_", "RECALL_SQLITE_")
CLI = [sys.executable, "-m", "recall_sqlite.cli"]


def git_env() -> dict[str, str]:
    """This environment for git: no user or system config, a fixed author, none of the
    caller's GIT_* redirections."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
    )
    return env


def git(cwd: Path, *args: str) -> str:
    """Run git in `cwd`; its stdout. Fails the test on a non-zero exit."""
    res = subprocess.run(
        ["git", *args], cwd=cwd, env=git_env(), check=True, capture_output=True, text=True
    )
    return res.stdout


def new_repo(path: Path, *, branch: str = "main", commit: bool = True) -> Path:
    """A git repository at `path` on `branch`, with an empty first commit unless told not."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    if commit:
        git(path, "commit", "-q", "--allow-empty", "-m", "init")
    return path


def add_worktree(main: Path, path: Path, branch: str | None = None) -> Path:
    """`git worktree add` of `path` (a new branch named after it unless given)."""
    git(main, "worktree", "add", "-q", str(path), "-b", branch or path.name)
    return path


def user_env(home: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment of a user's process: this one's, without any identity override,
    with HOME at `home` when given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(IDENTITY_PREFIXES)}
    if home is not None:
        env["HOME"] = str(home)
    env.update(extra)
    return env


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input: str | None = None,  # noqa: A002 - subprocess's name
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`recall-sqlite ARGS` as its own process (a user's environment unless `env`)."""
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=user_env() if env is None else env,
        input=input,
        timeout=timeout,
    )


def stock_synapt(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Stock synapt 0.30.0 (`synapt ARGS`, never the adapter) as a user runs it in `cwd`."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "synapt"), *args],
        cwd=cwd,
        env=user_env(home),
        capture_output=True,
        text=True,
        timeout=120,
    )


def stock_write(cwd: Path, home: Path, focus: str) -> None:
    """A journal entry written by stock synapt's CLI from `cwd` (where it puts it is synapt's)."""
    res = stock_synapt(cwd, home, "recall", "journal", "--write", "--focus", focus)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr


def stock_reads(cwd: Path, home: Path) -> list[dict[str, Any]]:
    """Every entry stock synapt's read_entries finds from `cwd`, as its dicts."""
    import json

    code = (
        "import json\n"
        "from synapt.recall.journal import read_entries\n"
        "print(json.dumps([e.to_dict() for e in read_entries(n=100000)]))\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=user_env(home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, (cwd, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    got: list[dict[str, Any]] = json.loads(res.stdout)
    return got


def store_reads(cwd: Path) -> list[dict[str, Any]]:
    """Every entry the store's journal read shows from `cwd`, as synapt's dicts."""
    from recall_sqlite import open_store

    with open_store(cwd, read_only=True) as s:
        return [e.synapt_dict() for e in s.journal.read(100000).entries]


def synapt_user(base: Path, name: str, foci: tuple[str, ...]) -> tuple[Path, Path, Path]:
    """A user's home, a repository base/name with server/api, and its linked worktree
    base/name-feat with docs; stock synapt has written foci[i] from the i-th of the
    repository's root, server, server/api, the worktree's root and its docs. (home, repo,
    worktree)."""
    home = base / "home"
    home.mkdir()
    repo = new_repo(base / name)
    (repo / "server" / "api").mkdir(parents=True)
    feat = add_worktree(repo, base / f"{name}-feat")
    (feat / "docs").mkdir()
    places = (repo, repo / "server", repo / "server" / "api", feat, feat / "docs")
    for cwd, focus in zip(places, foci, strict=True):
        stock_write(cwd, home, focus)
    return home, repo, feat


@contextlib.contextmanager
def synapt_activated() -> Iterator[None]:
    """synapt 0.30.0 with the adapter activated for the block (recall_sqlite.synapt.patch)."""
    from recall_sqlite.synapt import patch

    patch.activate()
    try:
        yield
    finally:
        patch.deactivate()


def cli_here(capsys: pytest.CaptureFixture[str], store: Any, *argv: str) -> tuple[int, str, str]:
    """`recall-sqlite ARGV` run in this process: (exit code, stdout, stderr). With a
    `store` (not None), `--cwd` and `--db` name it."""
    from recall_sqlite.cli import main

    base = (
        []
        if store is None
        else ["--cwd", str(store.workspace.root), "--db", str(store.workspace.db_path)]
    )
    code = main([*base, *argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- the one documented difference from synapt's order (journal/order.py) -----------------


def _instant(entry: Any) -> int:
    from recall_sqlite.timestamps import parse_timestamp

    ts = entry["timestamp"] if isinstance(entry, dict) else entry.timestamp
    return parse_timestamp(ts)


def ties_unordered(entries: list[Any]) -> list[list[str]]:
    """A read's entries with the order inside each run of equal instants left out: there
    synapt keeps file order and the store a content order (they differ only then)."""
    import json

    runs: list[list[str]] = []
    last: int | None = None
    for e in entries:
        d = e if isinstance(e, dict) else e.to_dict()
        when = _instant(e)
        if when != last:
            runs.append([])
            last = when
        runs[-1].append(json.dumps(d, sort_keys=True, default=str))
    return [sorted(r) for r in runs]


def full_dedup_tie(entries: list[Any]) -> bool:
    """Two different versions of one session at the same instant, both auto or both not,
    equally rich: synapt keeps the first line, the store the smaller id."""
    import json

    seen: dict[tuple[Any, ...], str] = {}
    for e in entries:
        d = e if isinstance(e, dict) else e.to_dict()
        if not d.get("session_id"):
            continue
        rich = sum(bool(d.get(f)) for f in ("focus", "done", "decisions", "next_steps"))
        key = (d["session_id"], bool(d.get("auto")), _instant(e), rich)
        text = json.dumps(d, sort_keys=True, default=str)
        if seen.setdefault(key, text) != text:
            return True
    return False


def modules_loaded_by_cli(home: Path, *argv: str) -> set[str]:
    """The modules a fresh interpreter holds after running the CLI with `argv` (its output
    swallowed): what a command costs at start-up, measured where nothing else was imported."""
    code = (
        "import sys, io; from recall_sqlite.cli import main\n"
        "out, sys.stdout = sys.stdout, io.StringIO()\n"
        f"main({list(argv)!r})\n"
        "sys.stdout = out\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
    return set(res.stdout.split())


def run_at_once(script: str, argvs: list[list[str]], go: Path) -> list[Any]:
    """Run `python -c script *argv` for each argv, all at once: each child prints "ready",
    then waits for the file `go`, made once all are ready (so that they race), then prints
    one JSON value. Their values, in argvs' order; a child still running at the end is
    killed."""
    import json

    procs = [
        subprocess.Popen([sys.executable, "-c", script, *a], stdout=subprocess.PIPE, text=True)
        for a in argvs
    ]
    try:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        go.touch()
        results = []
        for p in procs:
            out, _ = p.communicate(timeout=60)
            assert p.returncode == 0
            results.append(json.loads(out))
        return results
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
