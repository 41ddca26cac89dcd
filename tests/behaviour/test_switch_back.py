"""Switching back loses nothing: after imported, native and adapter-written entries,
`export --format synapt --to-buckets` leaves in the bucket stock synapt reads from each
worktree's root every entry of that worktree, keeping the lines already there, and stock
synapt started there answers as the store does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from recall_sqlite import open_store
from recall_sqlite import synapt_layout as layout
from tests.helpers import (
    REPO,
    add_worktree,
    new_repo,
    run_cli,
    stock_write,
    ties_unordered,
    user_env,
)

READ = (
    "import json\n"
    "from synapt.recall.journal import read_entries\n"
    "print(json.dumps([e.to_dict() for e in read_entries(n=100000)]))\n"
)


def stock_reads(cwd: Path, home: Path) -> list[dict[str, Any]]:
    res = subprocess.run(
        [sys.executable, "-c", READ],
        cwd=cwd,
        env=user_env(home),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    got: list[dict[str, Any]] = json.loads(res.stdout)
    return got


def store_reads(cwd: Path) -> list[dict[str, Any]]:
    with open_store(cwd, read_only=True) as s:
        return [e.synapt_dict() for e in s.journal.read(100000).entries]


def _ok(cmd: list[str], cwd: Path, home: Path) -> str:
    res = run_cli(*cmd, cwd=cwd, env=user_env(home))
    assert res.returncode == 0, (cmd, res.stdout, res.stderr)
    return res.stdout


def test_stock_synapt_reads_every_entry_of_each_worktree_after_export(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    repo = new_repo(tmp_path / "proj")
    (repo / "server" / "api").mkdir(parents=True)
    feat = add_worktree(repo, tmp_path / "proj-feat")
    (feat / "docs").mkdir()
    for cwd, focus in (
        (repo, "root history"),
        (repo / "server", "server history"),
        (repo / "server" / "api", "api history"),
        (feat, "feat history"),
        (feat / "docs", "feat docs history"),
    ):
        stock_write(cwd, home, focus)
    _ok(["import"], repo, home)
    _ok(["journal", "write", "--focus", "native at the root", "--session-id", "n1"], repo, home)
    _ok(["journal", "write", "--focus", "native in feat"], feat / "docs", home)
    _ok(["synapt", "recall", "journal", "--write", "--focus", "adapter in api"],
        repo / "server" / "api", home)  # fmt: skip
    _ok(["synapt", "recall", "journal", "--write", "--focus", "adapter in feat"], feat, home)
    buckets = {w: layout.journal_for(w, layout.neutral_env(user_env(home))) for w in (repo, feat)}
    before = {w: b.read_bytes() for w, b in buckets.items()}
    # Before: stock synapt in the root misses the native writes and the nested history.
    assert len(stock_reads(repo, home)) < len(store_reads(repo))

    out = json.loads(_ok(["export", "--to-buckets", "--json"], repo, home))
    assert out["appended"] > 0 and not out["skipped"]
    for w, b in buckets.items():
        assert b.read_bytes().startswith(before[w])  # every line already there is kept
        ours, theirs = store_reads(w), stock_reads(w, home)
        assert ties_unordered(theirs) == ties_unordered(ours), w
        assert len(ours) == (5 if w == repo else 4)
    _ok(["doctor"], repo, home)
    _ok(["verify"], repo, home)
    # Again: nothing to add, nothing written twice.
    again = json.loads(_ok(["export", "--to-buckets", "--json"], repo, home))
    assert again["appended"] == 0
    for b in buckets.values():
        lines = b.read_text().splitlines()
        assert len(lines) == len(set(lines))


def test_the_docs_say_to_run_it_when_switching_back() -> None:
    doc = REPO / "docs" / "synapt.md"
    text = doc.read_text(encoding="utf-8")
    back = text[text.index("**Switching back**") :][:800]
    assert "recall-sqlite export --format synapt --to-buckets" in back
