"""synapt_layout.py says where stock synapt 0.30.0 keeps its journal from any directory, and
what line it writes: held against synapt itself, run from the directories a user stands in
(its own `_journal_path`, its own `append_entry`), in every layout synapt knows."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from recall_sqlite import synapt_layout as layout
from tests.helpers import add_worktree, git, new_repo, user_env

pytest.importorskip("synapt")

# Runs synapt in each (directory, environment) given on stdin, in order (a store one call
# makes is where the next looks); prints the journal file of each, or the error.
_PROBE = r"""
import json, os, sys
from pathlib import Path
from synapt.recall.journal import JournalEntry, _journal_path, append_entry
out = []
for case in json.load(sys.stdin):
    for k in ("SYNAPT_RECALL_ROOT", "GRIPSPACE_ROOT", "SYNAPT_RECALL_WORKTREE"):
        os.environ.pop(k, None)
    os.environ.update(case["env"])
    os.chdir(case["dir"])
    try:
        path = _journal_path()
        if case.get("write"):
            append_entry(JournalEntry(timestamp="2026-01-01T00:00:00Z", focus=case["dir"]))
        out.append(str(path))
    except Exception as exc:
        out.append("error: " + type(exc).__name__)
print(json.dumps(out))
"""


def synapt_journals(cases: list[dict[str, Any]], home: Path) -> list[str]:
    res = subprocess.run(
        [sys.executable, "-c", _PROBE],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        env=user_env(home),
        check=True,
        timeout=120,
    )
    return list(json.loads(res.stdout))


def ours(cases: list[dict[str, Any]], home: Path) -> list[str]:
    got = []
    for case in cases:
        env = {**user_env(home), **case["env"]}
        try:
            path = layout.journal_for(case["dir"], env)
        except ValueError:
            got.append("error: ValueError")
            continue
        got.append(str(path))
        if case.get("write"):  # synapt's write is what makes a nested store initialized
            layout.append_lines(path, [layout.line({"timestamp": "x", "focus": case["dir"]})])
    return got


def _compare(build: Callable[[Path], list[dict[str, Any]]], tmp_path: Path) -> list[str]:
    """Build the layout twice, run synapt in one and ours in the other (each side's writes
    make its own nested stores), compare the journals relative to each layout's base."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    theirs, mine = tmp_path / "theirs", tmp_path / "mine"
    want = [p.replace(str(theirs), "<base>") for p in synapt_journals(build(theirs), home)]
    got = [p.replace(str(mine), "<base>") for p in ours(build(mine), home)]
    assert got == want
    return want


def _git_layout(w: Path) -> list[dict[str, Any]]:
    repo = new_repo(w / "repo")
    (repo / "server" / "api").mkdir(parents=True)
    linked = add_worktree(repo, w / "repo-feat")
    (linked / "lib").mkdir()
    return [
        {"dir": str(repo), "env": {}, "write": True},
        {"dir": str(repo / "server"), "env": {}, "write": True},
        {"dir": str(repo / "server" / "api"), "env": {}},
        {"dir": str(repo / "server"), "env": {}},
        {"dir": str(linked), "env": {}, "write": True},
        {"dir": str(linked / "lib"), "env": {}},
        {"dir": str(repo / "server"), "env": {"SYNAPT_RECALL_WORKTREE": "desk9"}},
        {"dir": str(repo / "server" / "api"), "env": {"SYNAPT_RECALL_ROOT": str(repo)}},
        {"dir": str(repo), "env": {"SYNAPT_RECALL_WORKTREE": "a/b"}},
        {"dir": str(repo), "env": {"SYNAPT_RECALL_ROOT": str(w / "missing")}},
    ]


def test_a_plain_git_repository_with_subdirectories_and_a_linked_worktree(tmp_path: Path) -> None:
    want = _compare(_git_layout, tmp_path)
    # The cases this suite is about, spelled out.
    assert want[0] == "<base>/repo/.synapt/recall/worktrees/repo/journal.jsonl"
    assert want[1] == "<base>/repo/server/.synapt/recall/worktrees/repo/journal.jsonl"
    assert want[2] == "<base>/repo/server/api/.synapt/recall/worktrees/repo/journal.jsonl"
    assert want[4] == "<base>/repo/.synapt/recall/worktrees/repo-feat/journal.jsonl"
    assert want[5] == "<base>/repo-feat/lib/.synapt/recall/worktrees/repo-feat/journal.jsonl"
    assert want[6] == "<base>/repo/server/.synapt/recall/worktrees/desk9/journal.jsonl"
    assert want[8:] == ["error: ValueError"] * 2


def _grip_layout(w: Path) -> list[dict[str, Any]]:
    (w / "gr2" / ".grip").mkdir(parents=True)
    new_repo(w / "gr2" / "svc")
    (w / "gr2" / "svc" / "src").mkdir()
    (w / "gr2" / "desk2" / ".grip").mkdir(parents=True)
    (w / "plain" / "sub").mkdir(parents=True)
    (w / "gs" / ".gitgrip").mkdir(parents=True)
    (w / "gs" / ".gitgrip" / "griptrees.json").write_text("{}")
    new_repo(w / "gs" / "a")
    # A gripspace an earlier GRIPSPACE_ROOT-bound synapt call bound to gr2.
    (w / "gs2" / ".gitgrip").mkdir(parents=True)
    (w / "gs2" / ".gitgrip" / "griptrees.json").write_text("{}")
    new_repo(w / "gs2" / "b")
    (w / "gs2" / ".synapt").mkdir()
    (w / "gs2" / ".synapt" / "gripspace-root").write_text(str(w / "gr2") + "\n")
    return [
        {"dir": str(w / "gr2"), "env": {}},
        {"dir": str(w / "gr2" / "svc" / "src"), "env": {}},
        {"dir": str(w / "gr2" / "desk2"), "env": {}},
        {"dir": str(w / "plain" / "sub"), "env": {}},
        {"dir": str(w / "gs" / "a"), "env": {}},
        {"dir": str(w / "gs"), "env": {}},
        {"dir": str(w / "gs2" / "b"), "env": {}},
        # Last: synapt records this binding in the gripspace (a marker ours never writes).
        {"dir": str(w / "gs" / "a"), "env": {"GRIPSPACE_ROOT": str(w / "gr2")}},
    ]


def test_gr2_desks_and_a_gripspace(tmp_path: Path) -> None:
    want = _compare(_grip_layout, tmp_path)
    assert want[1] == "<base>/gr2/.synapt/recall/worktrees/gr2/journal.jsonl"
    assert want[2] == "<base>/gr2/desk2/.synapt/recall/worktrees/desk2/journal.jsonl"


def test_the_line_is_append_entrys(tmp_path: Path) -> None:
    fields = {
        "timestamp": "2026-03-01T10:00:00+00:00",
        "session_id": "s\u00e9",
        "focus": 'quote " and \\ and \n newline, \u2603',
        "done": ["a", "b\u0001"],
        "files_modified": ["x.py"],
        "auto": True,
    }
    code = (
        "import json, sys; from pathlib import Path\n"
        "from synapt.recall.journal import JournalEntry, append_entry\n"
        "append_entry(JournalEntry(**json.loads(sys.argv[1])), Path(sys.argv[2]))"
    )
    target = tmp_path / "b" / "journal.jsonl"
    subprocess.run(
        [sys.executable, "-c", code, json.dumps(fields), str(target)],
        check=True,
        env=user_env(tmp_path),
    )
    assert target.read_text(encoding="utf-8") == layout.line(fields) + "\n"
    with pytest.raises(ValueError, match="not synapt journal fields"):
        layout.line({"timestamp": "x", "nope": 1})


def test_files_laid_out_as_synapt_lays_them_out(tmp_path: Path) -> None:
    root = tmp_path / "r"
    data = layout.data_dir(root)
    assert layout.owner_of_data_dir(data) == root
    assert layout.owner_of_data_dir(root / ".synapse" / "recall") == root
    assert layout.owner_of_data_dir(root / ".synapse-recall") == root
    assert layout.owner_of_data_dir(root / "recall") is None
    bucket = layout.bucket_file(data, "b")
    assert layout.split_bucket_path(bucket) == (root, "b", "worktrees")
    assert layout.split_bucket_path(root / ".synapse-recall" / "journal.jsonl") == (
        root,
        "r",
        "flat",
    )
    assert layout.split_bucket_path(root / "elsewhere" / "journal.jsonl") is None
    layout.append_lines(bucket, [layout.line({"timestamp": "t"})])
    (data / "journal.jsonl").write_text("")
    assert not layout.is_initialized_store(root / "nothing")
    assert layout.is_initialized_store(data)
    assert [(f.name, n, k) for f, n, k in layout.journals_in(data)] == [
        ("journal.jsonl", "r", "flat"),
        ("journal.jsonl", "b", "worktrees"),
    ]
    assert layout.holds_journals(data)
    git(tmp_path, "--version")  # git is there for the layouts above


def test_the_line_pattern_captures_in_the_order_the_survey_unpacks() -> None:
    # lines.inspect unpacks match.groups() as CAPTURED names them
    from recall_sqlite import synapt_layout as layout

    index = layout.line_pattern().groupindex
    assert sorted(index, key=index.__getitem__) == list(layout.CAPTURED)
    assert list(layout.CAPTURED) == [f for f in layout.FIELDS if f in layout.CAPTURED]
