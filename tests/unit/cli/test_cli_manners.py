"""The small things a new user met (issue 16's list), one test each: global options before a
host command, a store the user cannot write, permission errors as runtime failures, a
broken pipe, the survey's last line after an import, entries without a session id, the
reasons given for a byte-order mark and a huge integer, and the DELETE recipe of
docs/database.md."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from recall_sqlite import open_store
from recall_sqlite.legacy.lines import classify
from tests.helpers import CLI, REPO, new_repo, run_cli, stock_write, user_env

DATABASE_DOC = REPO / "docs" / "database.md"


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory another user can enter (pytest's own tmp dirs are private to us)."""
    d = Path(tempfile.mkdtemp(prefix="recall16-"))
    d.chmod(0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _as_someone_else(argv: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """Run `argv` as a user who can read the workspace but write none of it: `nobody`
    when we are root (root writes anywhere), else ourselves with the write bits off."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("needs setpriv to drop root")
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    return subprocess.run(
        [*prefix, *argv], cwd=cwd, env=user_env(home), capture_output=True, text=True, timeout=120
    )


def _readable_not_writable(root: Path) -> None:
    for p in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(p.lstat().st_mode)
        if p.is_dir():
            p.chmod((mode | 0o555) & ~0o222)
        else:
            p.chmod((mode | 0o444) & ~0o222)


def _writable_again(root: Path) -> None:
    for p in [root, *root.rglob("*")]:
        p.chmod(stat.S_IMODE(p.lstat().st_mode) | 0o200)


@pytest.fixture
def repo_with_history(shared_dir: Path) -> tuple[Path, Path]:
    home = shared_dir / "home"
    home.mkdir()
    home.chmod(0o777)  # synapt, run as another user, keeps its own state there
    repo = new_repo(shared_dir / "proj")
    stock_write(repo, home, "stock work")
    res = run_cli("import", cwd=repo, env=user_env(home))
    assert res.returncode == 0, res.stderr
    return repo, home


def test_read_only_before_a_host_command_is_accepted(repo_with_history: tuple[Path, Path]) -> None:
    repo, home = repo_with_history
    db = repo / ".synapt/recall/recall-sqlite.db"

    def state() -> tuple[int, list[str]]:
        # (Empty -wal/-shm files a read-only open leaves are issue 19's, not looked at.)
        names = sorted(p.name for p in db.parent.iterdir() if not p.name.endswith(("-wal", "-shm")))
        return db.stat().st_mtime_ns, names

    before = state()
    res = run_cli(
        "--read-only", "synapt", "recall", "journal", "--list", cwd=repo, env=user_env(home)
    )
    assert res.returncode == 0, res.stderr
    assert "stock work" in res.stdout
    res = run_cli(
        "--read-only",
        "--cwd",
        str(repo),
        "synapt",
        "recall",
        "journal",
        "--write",
        "--focus",
        "refused",
        cwd=home,
        env=user_env(home),
    )
    assert res.returncode == 1 and res.stderr.count("\n") == 1 and "read-only" in res.stderr
    with open_store(repo, read_only=True) as s:
        assert [e.focus for e in s.journal.read(10).entries] == ["stock work"]
    assert state() == before


def test_the_adapter_reads_a_store_this_user_cannot_write(
    repo_with_history: tuple[Path, Path],
) -> None:
    repo, home = repo_with_history
    _readable_not_writable(repo)
    try:
        argv = [*CLI, "synapt", "recall", "journal", "--list"]
        res = _as_someone_else(argv, repo, home)
        assert res.returncode == 0, res.stderr
        assert "stock work" in res.stdout
        write = [*CLI, "synapt", "recall", "journal", "--write", "--focus", "x"]
        res = _as_someone_else(write, repo, home)
        # A runtime failure (1), one line, no advice to do what cannot be done.
        assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
        assert "read-only" in res.stderr and "--read-only" not in res.stderr
        res = _as_someone_else([*CLI, "journal", "write", "--focus", "x"], repo, home)
        assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
    finally:
        _writable_again(repo)


def test_permission_errors_are_runtime_failures(repo_with_history: tuple[Path, Path]) -> None:
    repo, home = repo_with_history
    # workspace.json is private to its owner: another user cannot even read it.
    for argv in (["journal", "read"], ["journal", "write", "--focus", "x"], ["doctor"]):
        res = _as_someone_else([*CLI, *argv], repo, home)
        assert res.returncode == 1, (argv, res.returncode, res.stderr)
        assert "Permission denied" in res.stderr and res.stderr.count("\n") == 1


def _closed_stdout(argv: list[str], cwd: Path, home: Path) -> tuple[int, str]:
    """Run with standard output a pipe nobody reads (`... | head` after head exits)."""
    p = subprocess.Popen(
        argv, cwd=cwd, env=user_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()
    err = p.stderr.read().decode()
    return p.wait(timeout=120), err


def test_a_broken_pipe_ends_quietly(repo_with_history: tuple[Path, Path]) -> None:
    repo, home = repo_with_history
    for argv in (
        ["journal", "read"],
        ["journal", "read", "--json"],
        ["synapt", "recall", "journal", "--list"],  # synapt's own print meets the pipe
    ):
        code, err = _closed_stdout([*CLI, *argv], repo, home)
        assert (code, err) == (0, ""), (argv, err)


def test_the_survey_after_a_complete_import_says_an_import_would_change_nothing(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    repo = new_repo(tmp_path / "proj")
    (repo / "server").mkdir()
    for cwd, focus in ((repo, "one"), (repo / "server", "two"), (repo, "three")):
        stock_write(cwd, home, focus)
    before = run_cli("survey", cwd=repo, env=user_env(home))
    assert "An import would create 3 row(s)" in before.stdout
    assert run_cli("import", cwd=repo, env=user_env(home)).returncode == 0
    after = run_cli("survey", cwd=repo, env=user_env(home))
    assert after.returncode == 0
    assert after.stdout.rstrip().endswith(
        "Every line found is imported already: an import would change nothing."
    )
    assert "would create" not in after.stdout
    stock_write(repo, home, "four")
    data = json.loads(run_cli("survey", "--json", cwd=repo, env=user_env(home)).stdout)
    assert data["not_imported"] == {
        "lines": 1,
        "rows_to_create": 1,
        "duplicates": 0,
        "quarantined": 0,
    }


def test_entries_without_a_session_id_are_counted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    repo = new_repo(tmp_path / "proj")
    for i in range(3):  # synapt's CLI writes entries with session_id ""
        stock_write(repo, home, f"f{i}")
    res = run_cli("survey", cwd=repo, env=user_env(home))
    assert "3 entries have no session id" in res.stdout
    assert "each reads as a session of its own" in res.stdout
    data = json.loads(run_cli("survey", "--json", cwd=repo, env=user_env(home)).stdout)
    assert data["entries_without_session"] == 3 and data["sessions"] == 0


def test_a_byte_order_mark_gets_a_reason_of_its_own() -> None:
    line = b'\xef\xbb\xbf{"timestamp": "2026-01-01T00:00:00Z", "focus": "x"}'
    fate = classify(line, True)
    assert not hasattr(fate, "id")
    assert "byte-order mark" in fate.detail and "Expecting value" not in fate.detail
    # synapt itself skips such a line: the quarantine is no loss against it.
    with pytest.raises(json.JSONDecodeError):
        json.loads(line.decode("utf-8"))


def test_a_huge_integer_reason_gives_no_python_advice() -> None:
    line = b'{"timestamp": "2026-01-01T00:00:00Z", "focus": ' + b"9" * 5000 + b"}"
    fate = classify(line, True)
    assert not hasattr(fate, "id")
    assert "set_int_max_str_digits" not in fate.detail and "digits" in fate.detail


def test_the_docs_delete_recipe_names_the_table() -> None:
    text = DATABASE_DOC.read_text(encoding="utf-8")
    deletes = [line for line in text.splitlines() if "DELETE FROM" in line]
    assert deletes and all("DELETE FROM journal_entries" in line for line in deletes)


def test_the_survey_counts_a_rewritten_file_whole(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    repo = new_repo(tmp_path / "proj")
    for focus in ("one", "two"):
        stock_write(repo, home, focus)
    assert run_cli("import", cwd=repo, env=user_env(home)).returncode == 0
    bucket = repo / ".synapt/recall/worktrees/proj/journal.jsonl"
    first = bucket.read_text().splitlines()[0]
    bucket.write_text(first.replace('"one"', '"uno"') + "\n")  # rewritten, shorter
    data = json.loads(run_cli("survey", "--json", cwd=repo, env=user_env(home)).stdout)
    assert data["not_imported"]["lines"] == 1 and data["not_imported"]["rows_to_create"] == 1


def test_forget_names_the_session_as_write_does(tmp_path: Path) -> None:
    """`journal write --session-id S` then `journal forget --session-id S` (a user's first
    guess, met in a walkthrough); `--session S` still works."""
    home = tmp_path / "home"
    home.mkdir()
    repo = new_repo(tmp_path / "proj")
    env = user_env(home)
    for sid in ("s1", "s2"):
        run_cli(
            "journal", "write", "--focus", f"from {sid}", "--session-id", sid, cwd=repo, env=env
        )
    res = run_cli("journal", "forget", "--session-id", "s1", "--json", cwd=repo, env=env)
    assert res.returncode == 0, res.stderr
    res = run_cli("journal", "forget", "--session", "s2", "--json", cwd=repo, env=env)
    assert res.returncode == 0, res.stderr
    with open_store(repo, read_only=True) as s:
        assert s.journal.read(10).total == 0


@pytest.mark.parametrize(
    ("argv", "prog", "extra"),
    [
        (["summary", "add", "--text", "x"], "recall-sqlite summary add", "--text"),
        (
            ["cursor", "unread", "--consumer", "bot"],
            "recall-sqlite cursor unread",
            "--consumer",
        ),
        (["where", "--bogus"], "recall-sqlite where", "--bogus"),
    ],
)
def test_an_unknown_option_points_at_the_help_that_lists_the_right_ones(
    tmp_path: Path, argv: list[str], prog: str, extra: str
) -> None:
    ws = tmp_path / "ws"
    (ws / ".grip").mkdir(parents=True)
    res = run_cli(*argv, cwd=ws, env=user_env(tmp_path))
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr == f"{prog}: unrecognized arguments: {extra} (see {prog} --help)\n"
    assert run_cli(*prog.split()[1:], "--help", cwd=ws, env=user_env(tmp_path)).returncode == 0
