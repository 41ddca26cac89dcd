"""The defects this project exists to fix: a subdirectory sees the whole history, equal
basenames never share one, and a read scoped to a worktree says what it left out."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite import open_store
from tests.conftest import entry, make_workspace
from tests.helpers import CLI, git


def test_subdirectory_and_root_are_one_workspace(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    sub = root / "sub"
    sub.mkdir()
    with open_store(root) as at_root, open_store(sub) as at_sub:
        assert at_root.workspace.id == at_sub.workspace.id
        assert at_root.workspace.worktree == at_sub.workspace.worktree
        assert at_root.workspace.db_path == at_sub.workspace.db_path
        from_sub = at_sub.journal.append(entry("2026-01-01T10:00:00Z", session_id="a", focus="s"))
        from_root = at_root.journal.append(entry("2026-01-01T11:00:00Z", session_id="b", focus="r"))
        assert [e.id for e in at_root.journal.read().entries] == [from_root.id, from_sub.id]
        assert [e.id for e in at_sub.journal.read().entries] == [from_root.id, from_sub.id]


def test_equal_basenames_in_one_shared_database_never_mix(tmp_path: Path) -> None:
    shared = tmp_path / "shared.db"
    a = make_workspace(tmp_path / "a")
    b = make_workspace(tmp_path / "b")
    assert a.name == b.name
    with open_store(a, db_path=shared) as sa, open_store(b, db_path=shared) as sb:
        assert sa.workspace.id != sb.workspace.id
        ida = sa.journal.append(entry(session_id="same", focus="from a")).id
        idb = sb.journal.append(entry(session_id="same", focus="from b")).id
        assert ida != idb
        for s, mine, theirs in ((sa, ida, idb), (sb, idb, ida)):
            r = s.journal.read(n=50, all_worktrees=True)
            assert [e.id for e in r.entries] == [mine]
            assert r.total == 1 and r.elsewhere.total == 0
            assert s.journal.get(theirs) is None
            assert s.journal.pending_next_steps(all_worktrees=True).sessions_considered == 1


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_linked_git_worktree_is_same_workspace_other_worktree(tmp_path: Path) -> None:
    main = tmp_path / "repo"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    (main / "f").write_text("x")
    git(main, "add", "f")
    git(main, "commit", "-qm", "init")
    linked = tmp_path / "repo-feature"
    git(main, "worktree", "add", "-q", "-b", "feature", str(linked))

    with open_store(main) as sm, open_store(linked / ".") as sl:
        assert sm.workspace.id == sl.workspace.id
        assert sm.workspace.root == sl.workspace.root == main.resolve()
        assert sm.workspace.worktree != sl.workspace.worktree
        wm = sm.journal.write(focus="on main", session_id="m")
        wl = sl.journal.write(focus="on feature", session_id="f")
        assert (wm.entry.branch, wl.entry.branch) == ("main", "feature")

        r = sm.journal.read(n=10)
        assert [e.id for e in r.entries] == [wm.id]
        assert r.scope.worktree == sm.workspace.worktree
        assert r.elsewhere.other_worktrees == 1 and r.total == 1
        wide = sm.journal.read(n=10, all_worktrees=True)
        assert {e.id for e in wide.entries} == {wm.id, wl.id}
        assert {e.worktree for e in wide.entries} == {sm.workspace.worktree, sl.workspace.worktree}
        feature_only = sm.journal.read(n=10, all_worktrees=True, branch="feature")
        assert [e.id for e in feature_only.entries] == [wl.id]
        assert feature_only.elsewhere.other_branches == 1


def test_cli_reads_from_subdirectory_with_scope_in_json(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    (root / "server").mkdir()
    cli = list(CLI)
    subprocess.run(
        [
            *cli,
            "--cwd",
            str(root),
            "journal",
            "write",
            "--focus",
            "root work",
            "--next",
            "ship it",
            "--session-id",
            "s1",
            "--timestamp",
            "2026-01-01T10:00:00Z",
        ],
        check=True,
        capture_output=True,
    )
    out = subprocess.run(
        [*cli, "--cwd", str(root / "server"), "journal", "read", "-n", "5", "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    data = json.loads(out)
    assert [e["focus"] for e in data["entries"]] == ["root work"]
    assert data["total"] == 1 and data["elsewhere"] == {
        "other_worktrees": 0,
        "other_branches": 0,
        "other_machines": 0,
    }
    assert data["scope"]["worktree"] == "."
    assert set(data["entries"][0]) >= {
        "id",
        "worktree",
        "timestamp",
        "session_id",
        "focus",
        "done",
        "decisions",
        "next_steps",
        "auto",
    }
    pending = json.loads(
        subprocess.run(
            [*cli, "--cwd", str(root / "server"), "journal", "pending", "--json"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    assert pending["pending"] == ["ship it"]
    where = json.loads(
        subprocess.run(
            [*cli, "--cwd", str(root / "server"), "where", "--json"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    assert set(where) >= {
        "workspace_id",
        "workspace_root",
        "resolved_by",
        "worktree",
        "branch",
        "db_path",
        "warnings",
    }
    assert where["workspace_root"] == str(root.resolve())


def test_cli_user_errors_are_one_line_and_nonzero(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    cli = list(CLI)
    bad = subprocess.run(
        [*cli, "--cwd", str(root), "journal", "write", "--focus", "x", "--timestamp", "yesterday"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert bad.stderr.count("\n") == 1 and "timestamp" in bad.stderr
    missing = subprocess.run(
        [*cli, "--cwd", str(tmp_path / "nope"), "where"], capture_output=True, text=True
    )
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    notdb = subprocess.run(
        [*cli, "--cwd", str(root), "--db", str(junk), "journal", "read"],
        capture_output=True,
        text=True,
    )
    assert notdb.returncode != 0 and "not an SQLite database" in notdb.stderr
    assert "Traceback" not in notdb.stderr


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]), st.sampled_from(["", "x", "y"]), st.integers(0, 50)
        ),
        max_size=20,
    )
)
def test_scopes_partition_the_workspace(tmp_path: Path, plan: list[tuple[str, str, int]]) -> None:
    """For every worktree and branch: in-scope + other worktrees = the rows written with that
    branch anywhere; nothing of another scope is returned."""
    base = tmp_path / f"p{abs(hash(tuple(plan)))}"
    root = make_workspace(base)
    stores = {}
    for wt in ("a", "b", "c"):
        (root / wt / ".git").mkdir(parents=True)
        stores[wt] = open_store(root / wt)
    try:
        for i, (wt, branch, minute) in enumerate(plan):
            stores[wt].journal.append(
                entry(
                    f"2026-01-01T10:{minute:02d}:00Z", session_id=f"s{i}", branch=branch, focus="f"
                )
            )
        for wt, s in stores.items():
            for branch in (None, "", "x", "y"):
                r = s.journal.read(n=100, branch=branch)
                mine = [p for p in plan if p[0] == wt and (branch is None or p[1] == branch)]
                theirs = [p for p in plan if p[0] != wt and (branch is None or p[1] == branch)]
                assert r.total == len(r.entries) == len(mine)
                assert all(e.worktree == wt for e in r.entries)
                assert branch is None or all(e.branch == branch for e in r.entries)
                assert r.elsewhere.other_worktrees == len(theirs)
                other_branches = [
                    p for p in plan if p[0] == wt and branch is not None and p[1] != branch
                ]
                assert r.elsewhere.other_branches == len(other_branches)
    finally:
        for s in stores.values():
            s.close()


def test_copied_workspace_is_reported_not_merged(tmp_path: Path) -> None:
    shared = tmp_path / "shared.db"
    original = make_workspace(tmp_path / "a")
    with open_store(original, db_path=shared) as s:
        s.journal.append(entry(session_id="a", focus="original"))
        assert s.workspace.warnings == ()
    copy = tmp_path / "b" / "proj"
    shutil.copytree(original, copy)
    with open_store(copy, db_path=shared) as c:
        assert c.workspace.id == s.workspace.id
        assert any(
            "copied workspace" in w and str(original.resolve()) in w for w in c.workspace.warnings
        )
    roots = sqlite3.connect(shared).execute("SELECT root FROM workspace_roots").fetchall()
    assert {r for (r,) in roots} == {str(original.resolve()), str(copy.resolve())}
