"""Differential tests against synapt 0.30.0 itself: one sequence of writes and reads through
its MCP tools (`recall_journal`, `recall_resume`), its CLI (`journal --write/--read/--list`)
and its session-start hook, run once on stock synapt (JSONL) and once activated, from the
workspace root of a plain git repository. The answers must be identical (timestamps and the
scratch path normalised).

The sequence runs in a child process per mode (`python -m tests.behaviour.test_synapt_differential
MODE`), because activation rebinds synapt for the whole process."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO, new_repo


def _cli(mode: str, argv: list[str], stdin: str = "") -> str:
    out = io.StringIO()
    old_stdin, old_argv = sys.stdin, sys.argv
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            if mode == "activated":
                from recall_sqlite.synapt.cli import main_synapt

                rc = main_synapt(argv)
            else:
                from synapt.cli import main

                sys.argv = ["synapt", *argv]
                try:
                    main()
                    rc = 0
                except SystemExit as exc:
                    rc = int(exc.code or 0)
    finally:
        sys.stdin, sys.argv = old_stdin, old_argv
    return f"rc={rc}\n{out.getvalue()}"


def sequence(mode: str) -> list[str]:
    """The user's session, as synapt's own surfaces see it."""
    if mode == "activated":
        import recall_sqlite.synapt

        recall_sqlite.synapt.activate()
    from synapt.recall import server

    def tool(action: str, **kw: str) -> str:
        return str(server.recall_journal(action, **kw))

    answers = [
        tool("read"),
        tool("list"),
        tool("pending"),
        _cli(mode, ["recall", "journal", "--read"]),
        tool(
            "write", focus="schema v1", done="wrote schema", next_steps="benchmarks\nreview the API"
        ),
        tool("read"),
        tool("pending"),
        _cli(
            mode,
            [
                "recall",
                "journal",
                "--write",
                "--focus",
                "cli work",
                "--done",
                "benchmarks",
                "--next",
                "ship it",
            ],
        ),
        tool("list"),
        tool("pending"),
        _cli(mode, ["recall", "journal", "--read"]),
        _cli(mode, ["recall", "journal", "--list"]),
        str(server.recall_resume()),
        _cli(mode, ["recall", "hook", "session-start"], stdin="{}"),
        tool("write", focus="third", done="review the API", decisions="keep JSONL mirror"),
        tool("read"),
        tool("pending"),
        tool("list"),
        _cli(mode, ["recall", "journal", "--list"]),
        _cli(mode, ["recall", "hook", "session-start"], stdin="{}"),
    ]
    return answers


_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_SECONDS = re.compile(r"\b\d+\.\d+s\b")  # the hook's own run time


def normalise(text: str, root: Path) -> str:
    text = text.replace(str(root), "<ROOT>")
    return _SECONDS.sub("<S>", _DATE.sub("<DATE>", _ISO.sub("<TS>", text)))


def _git_repo(path: Path) -> Path:
    return new_repo(path, commit=False)


def _run(mode: str, root: Path) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    res = subprocess.run(
        [sys.executable, "-m", "tests.behaviour.test_synapt_differential", mode],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    answers: list[str] = json.loads(res.stdout.splitlines()[-1])
    return [normalise(a, root) for a in answers]


@pytest.mark.slow
def test_stock_and_activated_answer_alike_from_the_root(tmp_path: Path) -> None:
    stock = _run("stock", _git_repo(tmp_path / "stock" / "repo"))
    activated_root = _git_repo(tmp_path / "activated" / "repo")
    activated = _run("activated", activated_root)
    assert len(stock) == len(activated)
    for i, (s, a) in enumerate(zip(stock, activated, strict=True)):
        assert a == s, f"answer {i} differs"
    # The sequence did write and read something (not two empty runs agreeing).
    assert any("review the API" in a for a in activated)
    assert 'Journal read: {"shown":3' in activated[-1]
    # ...and the activated run's entries are in the store.
    from recall_sqlite import open_store

    with open_store(activated_root) as store:
        assert store.journal.read(10).total == 3


if __name__ == "__main__":
    sys.stdout.write("\n" + json.dumps(sequence(sys.argv[1])) + "\n")
