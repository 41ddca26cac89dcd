"""Switching back loses nothing: after imported, native and adapter-written entries,
`export --format synapt --to-buckets` leaves in the bucket stock synapt reads from each
worktree's root every entry of that worktree, keeping the lines already there, and stock
synapt started there answers as the store does."""

from __future__ import annotations

import json
from pathlib import Path

from recall_sqlite import synapt_layout as layout
from tests.helpers import (
    REPO,
    run_cli,
    stock_reads,
    store_reads,
    synapt_user,
    ties_unordered,
    user_env,
)


def _ok(cmd: list[str], cwd: Path, home: Path) -> str:
    res = run_cli(*cmd, cwd=cwd, env=user_env(home))
    assert res.returncode == 0, (cmd, res.stdout, res.stderr)
    return res.stdout


def test_stock_synapt_reads_every_entry_of_each_worktree_after_export(tmp_path: Path) -> None:
    foci = ("root history", "server history", "api history", "feat history", "feat docs history")
    home, repo, feat = synapt_user(tmp_path, "proj", foci)
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
