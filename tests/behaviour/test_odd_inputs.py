"""The earlier defects left over (issue 19, point 7), one test each: a bucket whose name is not
UTF-8, another workspace's positions, a --cwd too long for the filesystem, limits at 2^63,
lone surrogates in an import path and a model name, terminal escapes in search snippets
and summaries, a full disk while writing workspace.json."""

from __future__ import annotations

import contextlib
import errno
import json
import os
from pathlib import Path

import pytest

from recall_sqlite import CoverRange, InvalidInputError, RecallError, open_store
from recall_sqlite.limits import INT64_MAX
from tests.conftest import make_workspace
from tests.helpers import cli_here, run_cli


def _bucket(root: Path, name: bytes, focus: str) -> Path:
    directory = os.path.join(os.fsencode(root), b".synapt/recall/worktrees", name)
    os.makedirs(directory)
    path = os.path.join(directory, b"journal.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"timestamp": "2026-01-01T00:00:00Z", "focus": focus}) + "\n")
    return Path(os.fsdecode(path))


def test_a_bucket_whose_name_is_not_utf8_stops_nothing_else(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    _bucket(root, b"bad\xff", "in the odd bucket")
    _bucket(root, b"good", "in the good bucket")
    res = run_cli("--cwd", str(root), "import")
    assert res.returncode == 1, res.stderr  # not everything could be imported: said
    assert "internal error" not in res.stderr and "not valid UTF-8" in res.stdout
    res = run_cli("--cwd", str(root), "journal", "read", "--all-worktrees", "--json")
    assert [e["focus"] for e in json.loads(res.stdout)["entries"]] == ["in the good bucket"]
    for command in ("verify", "survey"):
        res = run_cli("--cwd", str(root), command)
        assert "internal error" not in res.stderr, res.stderr
        assert "not valid UTF-8" in res.stdout
    with open_store(root) as s:
        report = s.legacy.import_paths()
        assert not report.ok and any("UTF-8" in p.reason for p in report.problems)


def test_another_workspaces_positions_are_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared.db"
    a = open_store(make_workspace(tmp_path, "a"), db_path=shared)
    b = open_store(make_workspace(tmp_path, "b"), db_path=shared)
    try:
        mine = [a.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": "a0"})]
        theirs = b.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": "b0"})
        mine.append(a.journal.append({"timestamp": "2026-01-02T00:00:00Z", "focus": "a1"}))
        assert mine[0].seq < theirs.seq < mine[1].seq  # their seq lies inside a's range
        for call in (
            lambda: a.cursors.advance("c", "", to=theirs.seq),
            lambda: a.cursors.reset("c", "", to=theirs.seq),
            lambda: a.summaries.add("t", kind="k", covers=CoverRange(theirs.seq, mine[1].seq)),
        ):
            with pytest.raises(InvalidInputError, match="not the position of an entry") as info:
                call()
            assert "b0" not in str(info.value)
        assert a.cursors.advance("c", "", to=mine[1].seq).position == mine[1].seq
        assert a.cursors.advance("c", "", to=mine[1].seq).position == mine[1].seq  # again
        assert a.cursors.reset("c", "", to=0).position == 0
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize("command", ["import", "survey", "verify", "journal"])
def test_a_cwd_too_long_for_the_filesystem_is_a_usage_error(tmp_path: Path, command: str) -> None:
    long = str(tmp_path / ("a" * 300) / ("b" * 300))
    argv = [command] if command != "journal" else ["journal", "read"]
    res = run_cli("--cwd", long, *argv)
    assert res.returncode == 2, res.stderr
    assert res.stderr.count("\n") == 1 and "internal error" not in res.stderr


def test_limits_at_the_largest_integer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": "x"})
        assert len(s.cursors.unread("c", "", limit=INT64_MAX).items) == 1
        assert len(s.cursors.take("c", "", limit=INT64_MAX).items) == 1
        with pytest.raises(InvalidInputError):
            s.cursors.unread("c", "", limit=INT64_MAX + 1)
        for argv in (
            ["cursor", "unread", "c", "--limit", str(INT64_MAX)],
            ["cursor", "unread", "c", "--take", "--limit", str(INT64_MAX)],
            ["journal", "read", "-n", str(INT64_MAX)],
            ["summary", "list", "--limit", str(INT64_MAX)],
        ):
            code, _, err = cli_here(capsys, s, *argv)
            assert code == 0, (argv, err)


def test_lone_surrogates_in_an_import_path_and_a_model_name(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        # A path that does not exist: refused, or reported; never an encoding error.
        with contextlib.suppress(RecallError):
            assert not s.legacy.import_paths([str(tmp_path / "odd\udcff")]).ok
        s.legacy.survey([str(tmp_path / "odd\udcff")])
        s.legacy.verify([str(tmp_path / "odd\udcff")])
        e = s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": "x"})
        for call in (
            lambda: s.vectors.put(("entry", e.id), [1.0, 2.0], model="m\ud800"),
            lambda: s.vectors.search([1.0, 2.0], 1, model="m\udcff"),
            lambda: s.vectors.get(("entry", e.id), model="\udfff"),
        ):
            with pytest.raises(RecallError):
                call()
    odd = os.fsdecode(os.fsencode(str(tmp_path)) + b"/odd\xff")
    for argv in (["import", odd], ["vectors", "search", "--like", "00" * 16, "--model", "m\udcff"]):
        res = run_cli("--cwd", str(root), *argv)
        assert "internal error" not in res.stderr and res.returncode in (1, 2), res.stderr


def test_terminal_escapes_in_stored_text_are_shown_escaped(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    evil = "gateway \x1b[2J\x1b]0;owned\x07 token"
    with open_store(root) as s:
        s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "session_id": evil, "focus": evil})
        s.summaries.add(evil, kind="k\x1b[31m", author=evil)
        s.cursors.advance("c\x1b[1m", "", to=0)
    for argv in (
        ["journal", "search", "gateway"],
        ["journal", "search", "token", "--all-worktrees"],
        ["summary", "list", "--all-branches"],
        ["summary", "latest", "--all-branches"],
        ["summary", "search", "gateway"],
        ["cursor", "show", "--all-branches"],
        ["journal", "read"],
    ):
        res = run_cli("--cwd", str(root), *argv)
        assert res.returncode == 0, (argv, res.stderr)
        assert "\x1b" not in res.stdout and "\x07" not in res.stdout, (argv, res.stdout)
    res = run_cli("--cwd", str(root), "journal", "search", "gateway")
    assert "\\x1b[2J" in res.stdout and "**gateway**" in res.stdout


def test_a_full_disk_while_minting_the_workspace_id_is_a_runtime_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from recall_sqlite.cli import main
    from recall_sqlite.paths import idfile

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(idfile, "write_private", full)
    root = make_workspace(tmp_path)
    code = main(["--cwd", str(root), "journal", "write", "--focus", "x"])
    _, err = capsys.readouterr()
    assert code == 1 and "disk is full" in err and err.count("\n") == 1
