"""Layouts written by synapt 0.30.0 itself: its own `append_entry`, one subprocess per
write, run from the directory a user stands in (no SYNAPT_*/GRIPSPACE_* variables, a
scratch HOME). The migration must find every store it left, assign each where it belongs,
and a read from any directory must then see the whole history of its worktree."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from recall_sqlite.legacy import make_plan, survey
from tests.helpers import CLI, git, new_repo, user_env

pytest.importorskip("synapt")
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")

WRITE = """
import sys
from synapt.recall.journal import JournalEntry, append_entry
e = JournalEntry(timestamp=sys.argv[1], session_id=sys.argv[2], focus=sys.argv[3],
                 branch=sys.argv[4], next_steps=[f"next after {sys.argv[3]}"])
print(append_entry(e))
"""


class Writer:
    """Writes journal entries the way a user's synapt does, and remembers where they went."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.home = base / "home"
        self.home.mkdir(exist_ok=True)
        self.n = 0
        self.written: dict[Path, list[str]] = {}  # cwd -> sessions written from there
        self.files: set[Path] = set()

    def write(self, cwd: Path, branch: str = "") -> str:
        self.n += 1
        sid = f"s{self.n:03d}"
        ts = f"2026-02-{1 + self.n // 24:02d}T{self.n % 24:02d}:00:00+00:00"
        out = subprocess.run(
            [sys.executable, "-c", WRITE, ts, sid, f"from {cwd.name}", branch],
            cwd=cwd,
            env=user_env(self.home),
            capture_output=True,
            text=True,
            check=True,
        )
        self.files.add(Path(out.stdout.strip()))
        self.written.setdefault(cwd, []).append(sid)
        return sid


def cli(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=user_env(home),
        timeout=120,
    )


def jcli(*args: str, cwd: Path, home: Path, code: int = 0) -> Any:
    r = cli(*args, "--json", cwd=cwd, home=home)
    assert r.returncode == code, (r.stdout[-2000:], r.stderr[-2000:])
    return json.loads(r.stdout)


class Layout:
    def __init__(self, base: Path) -> None:
        self.w = Writer(base)
        self.base = base


@pytest.fixture
def plain(tmp_path_factory: pytest.TempPathFactory) -> Layout:
    """A plain git repository with two levels of subdirectories and a linked worktree with
    a subdirectory of its own; everything written from where a user stands."""
    lay = Layout(tmp_path_factory.mktemp("plain"))
    root = new_repo(lay.base / "pgit")
    (root / "server" / "api").mkdir(parents=True)
    git(root, "worktree", "add", "-q", "../pgit-feat", "-b", "feat")
    (lay.base / "pgit-feat" / "lib").mkdir()
    for d in (
        root,
        root / "server",
        root / "server" / "api",
        root / "server" / "api",
        lay.base / "pgit-feat",
        lay.base / "pgit-feat" / "lib",
    ):
        lay.w.write(d, "feat" if "feat" in str(d) else "main")
    return lay


def test_synapt_split_the_plain_repository_as_the_issue_says(plain: Layout) -> None:
    root = plain.base / "pgit"
    rel = sorted(str(p.relative_to(plain.base)) for p in plain.w.files)
    assert rel == [
        "pgit-feat/lib/.synapt/recall/worktrees/pgit-feat/journal.jsonl",
        "pgit/.synapt/recall/worktrees/pgit-feat/journal.jsonl",
        "pgit/.synapt/recall/worktrees/pgit/journal.jsonl",
        "pgit/server/.synapt/recall/worktrees/pgit/journal.jsonl",
        "pgit/server/api/.synapt/recall/worktrees/pgit/journal.jsonl",
    ]
    # the walk finds exactly the files synapt wrote, from any directory of the workspace
    plan = make_plan(root)
    assert {s.path for s in plan.everything} == {p.resolve() for p in plain.w.files}
    by_key = {s.key: s.assignment for s in plan.everything}
    assert by_key["server/api/.synapt/recall/worktrees/pgit/journal.jsonl"].how == "place"
    assert (
        by_key["@pgit-feat:lib/.synapt/recall/worktrees/pgit-feat/journal.jsonl"].key
        == "@pgit-feat"
    )
    assert by_key[".synapt/recall/worktrees/pgit-feat/journal.jsonl"].key == "@pgit-feat"
    assert {a.key for a in by_key.values()} == {".", "@pgit-feat"}


def test_import_from_a_subdirectory_migrates_the_whole_workspace(plain: Layout) -> None:
    base = plain.base
    root, home = base / "pgit", plain.w.home
    # the same rule and the same counts in survey and import
    sv = jcli("survey", cwd=root / "server", home=home)
    imp = jcli("import", cwd=root / "server", home=home)
    assert imp["ok"] and not imp["not_imported"]
    assert (sv["lines_total"], sv["rows_to_create"], sv["duplicates"], sv["quarantined"]) == (
        imp["lines_total"],
        imp["imported"],
        imp["duplicates"],
        imp["quarantined"],
    )
    assert {b["key"]: b["worktree"] for b in sv["buckets"]} == {
        s["key"]: s["worktree"] for s in imp["sources"]
    }
    # one database, at the workspace root: none in the directory that held a nested store
    assert Path(imp["database"]) == root / ".synapt/recall/recall-sqlite.db"
    assert not (root / "server/.synapt/recall/recall-sqlite.db").exists()
    assert not (root / "server/.synapt/recall/workspace.json").exists()
    main_sessions = {"s001", "s002", "s003", "s004"}
    feat_sessions = {"s005", "s006"}
    for d, want in (
        (root, main_sessions),
        (root / "server", main_sessions),
        (root / "server" / "api", main_sessions),
        (base / "pgit-feat", feat_sessions),
        (base / "pgit-feat" / "lib", feat_sessions),
    ):
        got = jcli("journal", "read", "-n", "50", cwd=d, home=home)
        assert {e["session_id"] for e in got["entries"]} == want, d
        every = jcli("journal", "read", "-n", "50", "--all-worktrees", cwd=d, home=home)
        assert {e["session_id"] for e in every["entries"]} == main_sessions | feat_sessions
    v = jcli("verify", cwd=base / "pgit-feat", home=home)
    assert v["ok"] and v["not_imported"] == 0
    again = jcli("import", ".", cwd=root, home=home)
    assert again["ok"] and again["lines_total"] == 0
    # a store synapt writes later makes verify fail until it is imported
    (root / "docs").mkdir()
    plain.w.write(root / "docs", "main")
    late = cli("verify", cwd=root, home=home)
    assert late.returncode == 1 and "docs/.synapt/recall/worktrees/pgit" in late.stdout
    assert "never imported" in late.stdout
    jcli("import", cwd=root, home=home)
    assert jcli("verify", "--deep", cwd=root, home=home)["ok"]


def test_a_path_of_another_workspace_is_refused(plain: Layout, tmp_path: Path) -> None:
    other = new_repo(tmp_path / "other")
    r = cli("import", str(plain.base / "pgit"), cwd=other, home=plain.w.home)
    assert r.returncode == 2 and "--cwd" in r.stderr
    assert not (other / ".synapt").exists()


def test_two_linked_worktrees_with_one_basename_share_a_bucket(tmp_path: Path) -> None:
    w = Writer(tmp_path)
    root = new_repo(tmp_path / "dup")
    git(root, "worktree", "add", "-q", "../a/feat", "-b", "fa")
    git(root, "worktree", "add", "-q", "../b/feat", "-b", "fb")
    w.write(root, "main")
    w.write(tmp_path / "a" / "feat", "fa")
    w.write(tmp_path / "b" / "feat", "fb")
    shared = root / ".synapt/recall/worktrees/feat/journal.jsonl"
    assert len(shared.read_text().splitlines()) == 2  # synapt merged the two desks
    sv = cli("survey", cwd=root, home=w.home)
    assert sv.returncode == 1
    assert "ambiguous" in sv.stdout and "'@feat'" in sv.stdout and "'@feat1'" in sv.stdout
    assert "--map feat=@feat or --map feat=@feat1" in sv.stdout
    imp = jcli("import", cwd=root, home=w.home, code=1)
    assert [s["action"] for s in imp["sources"] if s["bucket"] == "feat"] == ["skipped"]
    assert [x["bucket"] for x in imp["not_imported"]] == ["feat"]
    v = cli("verify", cwd=root, home=w.home)
    assert v.returncode == 1 and "never imported" in v.stdout
    ok = jcli("import", "--map", "feat=@feat1", cwd=root, home=w.home)
    assert ok["ok"]
    got = jcli("journal", "read", "-n", "9", cwd=tmp_path / "b" / "feat", home=w.home)
    assert {e["session_id"] for e in got["entries"]} == {"s002", "s003"}


def test_gr2_workspace(tmp_path: Path) -> None:
    w = Writer(tmp_path)
    root = tmp_path / "g2"
    (root / ".grip").mkdir(parents=True)
    repo = new_repo(root / "repo")
    (repo / "sub").mkdir()
    (root / "notes").mkdir()
    for d in (root, repo, repo / "sub", root / "notes"):
        w.write(d, "")
    # synapt 0.30.0 keeps a gr2 workspace in one bucket at its root
    assert {p.relative_to(tmp_path).as_posix() for p in w.files} == {
        "g2/.synapt/recall/worktrees/g2/journal.jsonl"
    }
    imp = jcli("import", cwd=repo / "sub", home=w.home)
    assert imp["ok"] and imp["imported"] == 4
    for d in (root, root / "notes"):
        got = jcli("journal", "read", "-n", "9", cwd=d, home=w.home)
        assert len(got["entries"]) == 4
    assert jcli("verify", cwd=root, home=w.home)["ok"]


def test_workspace_without_git(tmp_path: Path) -> None:
    w = Writer(tmp_path)
    root = tmp_path / "nogit"
    (root / "sub" / "deeper").mkdir(parents=True)
    for d in (root, root / "sub", root / "sub" / "deeper"):
        w.write(d)
    assert len(w.files) == 3  # each directory its own store and bucket
    imp = jcli("import", cwd=root, home=w.home)
    assert imp["ok"] and imp["imported"] == 3
    for d in (root, root / "sub", root / "sub" / "deeper"):
        got = jcli("journal", "read", "-n", "9", cwd=d, home=w.home)
        assert {e["session_id"] for e in got["entries"]} == {"s001", "s002", "s003"}, d
    assert jcli("verify", cwd=root / "sub", home=w.home)["ok"]


def test_git_worktree_move_and_moving_the_project_keep_history(tmp_path: Path) -> None:
    w = Writer(tmp_path)
    root = new_repo(tmp_path / "proj")
    (root / "src").mkdir()
    git(root, "worktree", "add", "-q", "../proj-wt", "-b", "wt")
    (tmp_path / "proj-wt" / "lib").mkdir()
    for d in (root, root / "src", tmp_path / "proj-wt", tmp_path / "proj-wt" / "lib"):
        w.write(d)
    assert jcli("import", cwd=root, home=w.home)["ok"]
    git(root, "worktree", "move", "../proj-wt", "../moved-wt")
    moved = tmp_path / "moved-wt"
    got = jcli("journal", "read", "-n", "9", cwd=moved / "lib", home=w.home)
    assert {e["session_id"] for e in got["entries"]} == {"s003", "s004"}
    assert {e["worktree"] for e in got["entries"]} == {"@proj-wt"}
    assert jcli("verify", "--deep", cwd=moved, home=w.home)["ok"]
    assert jcli("import", cwd=moved, home=w.home)["lines_total"] == 0
    # the whole project directory moves (and git is told where its worktree went)
    (tmp_path / "elsewhere").mkdir()
    shutil.move(str(root), str(tmp_path / "elsewhere" / "proj"))
    root = tmp_path / "elsewhere" / "proj"
    git(root, "worktree", "repair", str(moved))
    v = jcli("verify", "--deep", cwd=root / "src", home=w.home)
    assert v["ok"], v
    again = jcli("import", cwd=root, home=w.home)
    assert again["ok"] and again["lines_total"] == 0 and again["quarantined"] == 0
    got = jcli("journal", "read", "-n", "9", cwd=root / "src", home=w.home)
    assert {e["session_id"] for e in got["entries"]} == {"s001", "s002"}


def test_library_survey_of_a_file(tmp_path: Path) -> None:
    # survey() of loose files needs no workspace around them
    f = tmp_path / "loose" / "journal.jsonl"
    f.parent.mkdir()
    f.write_text('{"timestamp": "2026-01-01T00:00:00Z", "session_id": "x"}\n')
    assert survey([f]).lines_total == 1


def test_worktree_list_shows_roots_entries_and_gone_roots(tmp_path: Path) -> None:
    w = Writer(tmp_path)
    root = new_repo(tmp_path / "proj")
    git(root, "worktree", "add", "-q", "../side", "-b", "side")
    w.write(root)
    w.write(tmp_path / "side")
    w.write(tmp_path / "side")
    assert jcli("import", cwd=root, home=w.home)["ok"]
    shutil.rmtree(tmp_path / "side")  # the desk is deleted; its history is not
    rows = {r["key"]: r for r in jcli("worktree", "list", cwd=root, home=w.home)["worktrees"]}
    assert (rows["."]["entries"], rows["."]["root_exists"]) == (1, True)
    assert (rows["@side"]["entries"], rows["@side"]["root_exists"]) == (2, False)
    text = cli("worktree", "list", cwd=root, home=w.home).stdout
    assert "@side" in text and "(gone)" in text


def test_a_wrong_map_is_undone_by_re_homing(plain: Layout) -> None:
    """A linked worktree's buckets imported into '.' by a wrong --map, then re-homed with
    --map pgit-feat=@pgit-feat: its history reads from its own directories again, not from
    '.'; the session '.'s bucket carries too stays in '.' and the report says so."""
    base, home = plain.base, plain.w.home
    root, feat = base / "pgit", base / "pgit-feat"
    plain.w.write(feat, "feat")  # s007
    shared = root / ".synapt/recall/worktrees/pgit-feat/journal.jsonl"
    s005 = next(x for x in shared.read_text().splitlines() if '"s005"' in x)
    with (root / ".synapt/recall/worktrees/pgit/journal.jsonl").open("a") as fh:
        fh.write(s005 + "\n")  # synapt's main bucket carries s005 as well
    wrong = jcli("import", "--map", "pgit-feat=.", cwd=root, home=home)
    assert wrong["ok"] and wrong["imported"] == 7
    assert jcli("journal", "read", "-n", "50", cwd=feat, home=home)["entries"] == []
    fixed = jcli("import", "--map", "pgit-feat=@pgit-feat", cwd=root, home=home)
    assert fixed["ok"], fixed
    moved = [s for s in fixed["sources"] if s["bucket"] == "pgit-feat"]
    assert {(s["action"], s["worktree"]) for s in moved} == {("rehomed", "@pgit-feat")}
    assert (fixed["moved"], fixed["stayed"]) == (2, 1)
    assert any("1 left where another source" in s["note"] for s in moved)
    from recall_sqlite.cli.import_ import format_import

    assert "Re-homed: 2 entry version(s) moved" in format_import(fixed)
    text = cli("import", "--map", "pgit-feat=@pgit-feat", cwd=root, home=home).stdout
    assert "rehomed" not in text and "Re-homed" not in text  # a re-run is a no-op
    again = jcli("import", "--map", "pgit-feat=@pgit-feat", cwd=root, home=home)
    assert again["lines_total"] == 0 and again["moved"] == 0
    assert {s["action"] for s in again["sources"]} == {"unchanged"}
    for d in (feat, feat / "lib"):
        got = jcli("journal", "read", "-n", "50", cwd=d, home=home)
        assert {e["session_id"] for e in got["entries"]} == {"s006", "s007"}, d
        assert (got["total"], got["elsewhere"]["other_worktrees"]) == (2, 5)
    for d in (root, root / "server"):
        got = jcli("journal", "read", "-n", "50", cwd=d, home=home)
        assert {e["session_id"] for e in got["entries"]} == {f"s00{i}" for i in range(1, 6)}
        assert (got["total"], got["elsewhere"]["other_worktrees"]) == (5, 2)
    assert cli("doctor", cwd=root, home=home).returncode == 0
    assert jcli("verify", "--deep", cwd=feat, home=home)["ok"]
    rows = {r["key"]: r for r in jcli("worktree", "list", cwd=feat, home=home)["worktrees"]}
    assert {k: (r["entries"], r["sources"], r["root_exists"]) for k, r in rows.items()} == {
        ".": (5, 3, True),
        "@pgit-feat": (2, 2, True),
    }
    assert rows["@pgit-feat"]["current"] and rows["@pgit-feat"]["root"] == str(feat)
    sqlite3 = shutil.which("sqlite3")
    if sqlite3 is not None:
        db = fixed["database"]
        r = subprocess.run(
            [sqlite3, db, "UPDATE journal_entries SET worktree_id = 1;"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode != 0 and "immutable" in r.stderr
