"""`recall-sqlite hook session-start`: what a session should know at its start, as text and as
Claude Code's SessionStart hook JSON; never a failed session, never a wait on the lock."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recall_sqlite import open_store
from tests.helpers import CLI, add_worktree, modules_loaded_by_cli, new_repo, run_cli, user_env


def _write(cwd: Path, focus: str, *extra: str) -> None:
    res = run_cli("journal", "write", "--focus", focus, *extra, cwd=cwd)
    assert res.returncode == 0, res.stderr


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, Path]:
    """A repository on main with a linked worktree (branch `side`), entries in both, a
    second branch in main's worktree, and summaries of main and of the workspace."""
    main = new_repo(tmp_path / "repo")
    side = add_worktree(main, tmp_path / "side")
    for i in range(5):
        _write(main, f"main focus {i}", "--session-id", f"m{i}")
    with open_store(main) as store:  # an auto-extracted focus alone: not meaningful
        store.journal.append(
            {
                "timestamp": "2099-01-01T00:00:00Z",
                "focus": "thin auto",
                "auto": True,
                "session_id": "thin",
                "branch": "main",
            }
        )
    _write(main, "main open work", "--next", "ship the hook", "--session-id", "m9")
    _write(main, "old branch work", "--branch", "feature", "--session-id", "f1")
    _write(side, "side focus", "--session-id", "s1")
    _write(side, "side on main", "--branch", "main", "--session-id", "s2")
    for text, branch in (("workspace summary", []), ("main summary", ["--branch", "main"])):
        assert run_cli("summary", "add", text, *branch, cwd=main).returncode == 0
    return main, side


def _hook(cwd: Path, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return run_cli("hook", "session-start", *args, cwd=cwd, input="", **kw)  # type: ignore[arg-type]


def test_the_text_holds_this_worktree_and_branch_pending_summary_and_elsewhere(
    workspace: tuple[Path, Path],
) -> None:
    main, side = workspace
    res = _hook(main)
    assert res.returncode == 0 and res.stderr == ""
    out = res.stdout
    # the newest 3 meaningful entries of this worktree and branch, newest first
    assert out.index("main open work") < out.index("main focus 4") < out.index("main focus 3")
    assert "main focus 2" not in out
    assert "thin auto" not in out
    assert "side " not in out and "old branch work" not in out
    assert "  - ship the hook" in out
    assert "main summary" in out and "workspace summary" not in out
    assert "1 more in other worktrees" in out and "1 more on other branches" in out
    # a branch without summaries of its own gets the workspace-wide one
    other = _hook(side).stdout
    assert "workspace summary" in other and "main summary" not in other
    assert "side focus" in other and "main focus" not in other and "side on main" not in other


def test_claude_code_format_is_the_hook_json_of_the_text(workspace: tuple[Path, Path]) -> None:
    main, _ = workspace
    text = _hook(main).stdout
    res = run_cli(
        "hook",
        "session-start",
        "--format",
        "claude-code",
        cwd=main,
        input=json.dumps({"session_id": "x", "hook_event_name": "SessionStart"}),
    )
    assert res.returncode == 0 and res.stderr == ""
    data = json.loads(res.stdout)
    assert list(data) == ["hookSpecificOutput"]
    assert data["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = data["hookSpecificOutput"]["additionalContext"]
    assert isinstance(context, str) and context == text.rstrip("\n")


def test_argparse_reads_the_same_line_as_the_quick_path(workspace: tuple[Path, Path]) -> None:
    main, _ = workspace
    quick = _hook(main, "--format", "claude-code").stdout
    # `--format=claude-code` is read here; `-n 3` spelled out as well
    assert _hook(main, "--format=claude-code", "-n", "3").stdout == quick
    assert run_cli("hook", "--help", cwd=main).returncode == 0


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["session-start", "--bogus"], "unrecognized arguments: --bogus"),
        (["session-start", "-n", "x"], "must be an integer, got 'x'"),
        (["session-start", "-n", "0"], "must be >= 1, got 0"),
        (["session-start", "--format", "yaml"], "invalid choice: 'yaml'"),
        (["session-stop"], "invalid choice: 'session-stop'"),
    ],
)
def test_a_mistaken_hook_line_says_so_in_one_line_and_exits_0(
    workspace: tuple[Path, Path], args: list[str], said: str
) -> None:
    """A mistake in an agent's settings never fails its session: nothing on stdout, the
    mistake on one line of stderr, exit 0."""
    main, _ = workspace
    res = run_cli("hook", *args, cwd=main, input="")
    assert (res.returncode, res.stdout) == (0, "")
    assert len(res.stderr.splitlines()) == 1 and said in res.stderr, res.stderr


def test_no_store_prints_nothing_creates_nothing(tmp_path: Path) -> None:
    ws = new_repo(tmp_path / "ws")
    before = sorted(p.name for p in ws.iterdir())
    for fmt in ("text", "claude-code"):
        res = _hook(ws, "--format", fmt)
        assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert sorted(p.name for p in ws.iterdir()) == before


def test_a_damaged_store_prints_one_line_on_stderr_and_exits_0(tmp_path: Path) -> None:
    ws = new_repo(tmp_path / "ws")
    _write(ws, "one entry")
    db = ws / ".synapt" / "recall" / "recall-sqlite.db"
    assert db.exists()
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    db.write_bytes(b"")
    for fmt in ("text", "claude-code"):
        res = _hook(ws, "--format", fmt)
        assert res.returncode == 0 and res.stdout == ""
        assert len(res.stderr.splitlines()) == 1 and "Traceback" not in res.stderr


def test_a_writer_holding_the_lock_does_not_make_it_wait(workspace: tuple[Path, Path]) -> None:
    main, _ = workspace
    db = main / ".synapt" / "recall" / "recall-sqlite.db"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import apsw, sys, time\n"
            "c = apsw.Connection(sys.argv[1]); c.execute('BEGIN IMMEDIATE')\n"
            "print('locked', flush=True); time.sleep(60)",
            str(db),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        start = time.monotonic()
        res = _hook(main)
        took = time.monotonic() - start
    finally:
        holder.kill()
        holder.wait()
    assert res.returncode == 0 and res.stderr == "" and "main open work" in res.stdout
    assert took < 2.5, took  # busy_timeout would be 5 s or more


def test_stdin_left_open_is_not_waited_on(workspace: tuple[Path, Path]) -> None:
    main, _ = workspace
    proc = subprocess.Popen(
        [*CLI, "hook", "session-start"],
        cwd=main,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=user_env(),
    )
    try:
        # stdin never closed: the hook must finish anyway (its output fits the pipe)
        assert proc.wait(timeout=20) == 0
        assert proc.stdout is not None
        out = proc.stdout.read()
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.kill()
    assert "main open work" in out


def test_the_hook_loads_no_other_family_nor_argparse(workspace: tuple[Path, Path]) -> None:
    main, _ = workspace
    loaded = modules_loaded_by_cli(
        main.parent, "--cwd", str(main), "hook", "session-start", "--format", "claude-code"
    )
    assert "recall_sqlite.cli.hook" in loaded and "recall_sqlite.journal.journal" in loaded
    heavy = {"argparse", "gettext", "locale", "pathlib", "numpy", "mcp", "synapt", "shutil"}
    heavy |= {"threading", "sqlite_utils", "unicodedata", "fnmatch", "urllib"}
    assert not loaded & heavy, sorted(loaded & heavy)
    for room in ("cursors", "vectors", "legacy", "synapt", "search", "doctor", "sync.sync"):
        name = f"recall_sqlite.{room}"
        assert not any(m == name or m.startswith(f"{name}.") for m in loaded), room


def test_the_hook_loads_none_of_the_heavy_modules(workspace: tuple[Path, Path]) -> None:
    main, _ = workspace
    loaded = modules_loaded_by_cli(main.parent, "--cwd", str(main), "hook", "session-start")
    assert "recall_sqlite.summaries" in loaded  # it did read the summary
    heavy = {"dataclasses", "typing", "hashlib", "datetime", "enum", "re", "contextlib"}
    heavy |= {"functools", "warnings", "json", "inspect", "importlib"}
    assert not loaded & heavy, sorted(loaded & heavy)
