"""`recall-sqlite demo` tells the truth: its stores are at exactly the paths synapt 0.30.0
writes from the same directories and hold the lines synapt writes; its "before" is what
synapt's read_entries returns in the subdirectory; it runs without git and without synapt."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from recall_sqlite import demo
from tests.helpers import user_env

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")

APPEND = """
import json, sys
from synapt.recall.journal import JournalEntry, append_entry
print(append_entry(JournalEntry(**json.loads(sys.argv[1]))))
"""
READ = """
from synapt.recall.journal import read_entries
print(" ".join(e.session_id for e in read_entries(n=1000)))
"""


def synapt(code: str, *args: str, cwd: Path, home: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=user_env(home),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return out.stdout.strip()


@needs_git
def test_the_demo_writes_what_synapt_writes_from_the_same_directories(tmp_path: Path) -> None:
    pytest.importorskip("synapt")
    home = tmp_path / "home"
    home.mkdir()
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    built = demo.build(ours, use_git=True)
    # synapt itself, one process per write, standing where the user stood
    assert demo.make_repo(theirs, use_git=True)
    wrote: dict[str, list[demo.Write]] = {}
    for w in demo.WRITES:
        path = Path(synapt(APPEND, json.dumps(w.fields), cwd=theirs / w.cwd, home=home))
        wrote.setdefault(str(path.relative_to(theirs.resolve())), []).append(w)
    assert sorted(wrote) == sorted(built.stores) == sorted(set(demo.STORES.values()))
    for rel, writes in wrote.items():
        lines = (theirs / rel).read_text(encoding="utf-8").splitlines()
        assert len(lines) == len(writes)
        # the demo's file: synapt's lines, the interrupted write cut to its first half
        want = "".join(
            x[: len(x) // 2] if w.cut else x + "\n" for w, x in zip(writes, lines, strict=True)
        )
        assert (ours / rel).read_bytes() == want.encode("utf-8"), rel
    assert any(w.cut for w in demo.WRITES)
    stub = [w for w in demo.WRITES if w.fields.get("auto") and not w.fields.get("enriched")]
    assert stub and any(
        w.fields["session_id"] == stub[0].fields["session_id"] and w.fields.get("enriched")
        for w in demo.WRITES
    )


@needs_git
def test_before_is_what_synapt_reads_in_the_subdirectory(tmp_path: Path) -> None:
    pytest.importorskip("synapt")
    home = tmp_path / "home"
    home.mkdir()
    base = tmp_path / "d"
    base.mkdir()
    data = demo.run(base, use_git=True)
    # run after the demo: the import wrote nothing into the stores synapt reads
    seen = synapt(READ, cwd=base / demo.SUBDIR, home=home).split()
    before = data["before"]
    assert before["session_ids"] == seen
    assert before["computed_by"].startswith("synapt 0.30.0")
    assert before["store"] == demo.STORES[demo.SUBDIR]
    assert 0 < len(seen) < before["sessions_in_worktree"] == 5
    assert before["newest_missing"]
    # the whole history of the worktree, from the subdirectory and the linked one
    sub = data["read_from_subdir"]
    assert (sub["worktree"], sub["total"]) == (".", 5)
    assert len(sub["entries"]) == 5 and sub["elsewhere"]["other_worktrees"] == 2
    linked = data["read_from_linked_subdir"]
    assert (linked["worktree"], linked["total"]) == ("@proj-feat", 2)
    assert data["verify"]["ok"] and data["import"]["ok"]
    assert data["import"]["quarantined"] == 1 and data["reimport"]["lines_total"] == 0


def _figures(d: dict[str, Any]) -> Any:
    return (
        d["stores"],
        d["before"]["session_ids"],
        d["before"]["missing_session_ids"],
        d["survey"]["sessions"],
        d["import"]["imported"],
        d["import"]["quarantined"],
        d["verify"]["ok"],
        d["read_from_subdir"]["total"],
        [e["session_id"] for e in d["read_from_subdir"]["entries"]],
        d["read_from_linked_subdir"]["total"],
    )


def test_without_git_the_hand_written_repository_gives_the_same_figures(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    data = demo.run(tmp_path / "a", use_git=False)
    assert data["git"] is False
    root, linked = tmp_path / "a" / "proj", tmp_path / "a" / "proj-feat"
    assert (root / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert (root / ".git" / "objects").is_dir() and (root / ".git" / "refs").is_dir()
    assert (linked / ".git").read_text().startswith("gitdir: ")
    if shutil.which("git") is None:
        return
    # git itself accepts the hand-made repository and its linked worktree
    common = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
        cwd=linked,
        capture_output=True,
        text=True,
        env=user_env(tmp_path),
        check=True,
    )
    assert Path(common.stdout.strip()) == (root / ".git").resolve()
    (tmp_path / "b").mkdir()
    with_git = demo.run(tmp_path / "b", use_git=True)
    assert with_git["git"] is True
    assert _figures(data) == _figures(with_git)


def test_before_without_synapt_is_our_reading_of_the_same_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with_synapt = demo.run(tmp_path / "a")
    for name in ("synapt", "synapt.recall", "synapt.recall.journal"):
        monkeypatch.setitem(sys.modules, name, None)  # `import synapt...` now fails
    without = demo.run(tmp_path / "b")
    assert without["before"]["computed_by"].startswith("recall-sqlite's reading")
    if "synapt 0.30.0" in with_synapt["before"]["computed_by"]:
        assert {k: v for k, v in without["before"].items() if k != "computed_by"} == {
            k: v for k, v in with_synapt["before"].items() if k != "computed_by"
        }


def cli(*args: str, cwd: Path, hide_synapt: bool = False) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        + ("sys.modules['synapt'] = None\n" if hide_synapt else "")
        + "from recall_sqlite.cli import main\nsys.exit(main(sys.argv[1:]))"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=user_env(cwd),
        timeout=120,
    )


def test_cli_demo_text_and_json_give_the_same_figures(tmp_path: Path) -> None:
    j = cli("demo", str(tmp_path / "kept"), "--json", cwd=tmp_path, hide_synapt=True)
    assert j.returncode == 0, j.stderr
    d = json.loads(j.stdout)
    for rel in d["stores"]:
        assert (tmp_path / "kept" / rel).is_file()  # DIR keeps the layout
    assert Path(d["database"]).is_file()
    t = cli("demo", cwd=tmp_path, hide_synapt=True)
    assert t.returncode == 0, t.stderr
    b = d["before"]
    assert (
        f"{b['synapt_read_from_subdir_sessions']} of the worktree's"
        f" {b['sessions_in_worktree']} sessions ({', '.join(b['session_ids'])})"
    ) in t.stdout
    assert f"{d['read_from_subdir']['total']} of 5 sessions in worktree '.'" in t.stdout
    assert "(the newest among them)" in t.stdout and "temporary files removed" in t.stdout
    again = cli("demo", str(tmp_path / "kept"), cwd=tmp_path)
    assert again.returncode == 2 and "not an empty directory" in again.stderr
