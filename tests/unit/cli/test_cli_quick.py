"""A `journal read` command line read without argparse (cli.quick_read) gives exactly the
options argparse gives, or declines and leaves the line to argparse: never another answer,
and never an answer where argparse refuses the line."""

from __future__ import annotations

import contextlib
import io
import subprocess
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from recall_sqlite.cli import build_parser, quick_read
from tests.helpers import CLI

# Tokens a command line is made of: every option of `journal read` and the global ones,
# spelled exactly and otherwise (abbreviated, attached, `=`), values good and bad.
_TOKENS = [
    "journal",
    "read",
    "pending",
    "--cwd",
    "--cwd=/w",
    "--cw",
    "--db",
    "--db=x.db",
    "--read-only",
    "--force",
    "-n",
    "-n3",
    "-n=2",
    "--n",
    "--branch",
    "--branch=main",
    "--bra",
    "--all-worktrees",
    "--all",
    "--meaningful",
    "--json",
    "--",
    "-h",
    "--help",
    "--version",
    "5",
    "0",
    "-1",
    " 7 ",
    "9223372036854775808",
    "abc",
    "",
    "main",
    "/some/dir",
    "-",
]


def _argparse(argv: list[str]) -> dict[str, object] | None:
    """What argparse makes of the line; None where it refuses it (or prints and exits)."""
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            return vars(build_parser(["journal"]).parse_args(argv))
    except SystemExit:
        return None


lines = st.lists(st.sampled_from(_TOKENS), max_size=9)
read_lines = st.tuples(
    st.lists(st.sampled_from(_TOKENS[3:10] + ["/w", "x.db"]), max_size=4),
    st.lists(st.sampled_from(_TOKENS[10:]), max_size=6),
).map(lambda parts: [*parts[0], "journal", "read", *parts[1]])


@given(lines | read_lines)
def test_a_line_read_without_argparse_is_read_as_argparse_reads_it(argv: list[str]) -> None:
    quick = quick_read(argv)
    if quick is None:
        return
    assert vars(quick) == _argparse(argv)


def test_the_lines_hooks_run_are_read_without_argparse() -> None:
    for argv in (
        ["journal", "read"],
        ["--cwd", "/w", "journal", "read", "-n", "5", "--json"],
        ["--db", "x.db", "--read-only", "journal", "read", "--all-worktrees", "--meaningful"],
        ["journal", "read", "--branch", "", "-n", "0"],
        ["--cwd=/w", "--force", "journal", "read"],
    ):
        quick = quick_read(argv)
        assert quick is not None, argv
        assert vars(quick) == _argparse(argv)


def test_what_argparse_refuses_is_left_to_it() -> None:
    for argv in (["journal", "read", "-n", "-1"], ["journal", "read", "-n", "x"], ["-h"]):
        assert quick_read(argv) is None


def test_a_quick_read_answers_what_an_argparse_read_answers(tmp_path: Path) -> None:
    """The whole command both ways (the second spelling is an abbreviation, which only
    argparse reads): the same bytes out."""
    from recall_sqlite import open_store

    (tmp_path / ".grip").mkdir()
    with open_store(tmp_path) as s:
        for i in range(3):
            s.journal.append({"timestamp": f"2026-01-0{i + 1}T10:00:00Z", "focus": f"focus #{i}"})

    def run(*args: str) -> str:
        return subprocess.run(
            [*CLI, "--cwd", str(tmp_path), *args],
            capture_output=True,
            text=True,
            check=True,
            env={"HOME": str(tmp_path.parent), "PATH": "/usr/bin:/bin"},
        ).stdout

    for shown in (["--json"], []):
        quick = run("journal", "read", "-n", "2", *shown)
        assert quick == run("journal", "read", "-n2", *[o[:5] for o in shown])
        # (Words no id can hold: "f0" was in a random workspace id one run in eight.)
        assert "focus #2" in quick and "focus #1" in quick and "focus #0" not in quick
