"""No tracebacks: thousands of CLI argument vectors and library calls with hostile values end
in a result, a one-line error with an honest exit code, or a typed RecallError."""

from __future__ import annotations

import contextlib
import io
import random
from pathlib import Path
from typing import Any

import pytest

from recall_sqlite import RecallError, open_store
from recall_sqlite.cli import main
from tests.conftest import make_workspace

VALUES = [
    "",
    "0",
    "-1",
    "5",
    "99999999999999999999",
    str(1 << 63),
    str((1 << 63) - 1),
    "\udcff",
    "a\x1b[31mred",
    "x" * 5000,
    "main",
    "--json",
    "/proc/nope/x.db",
    "00" * 16,
    "zz",
    "\x00",
    "é",
    "2026-01-01T00:00:00Z",
    "not-a-time",
    "-",
]
COMMANDS = [
    ["journal", "read"],
    ["journal", "read", "-n"],
    ["journal", "read", "--branch"],
    ["journal", "write", "--focus"],
    ["journal", "write", "--done"],
    ["journal", "write", "--focus", "f", "--timestamp"],
    ["journal", "write", "--focus", "f", "--branch"],
    ["journal", "pending"],
    ["journal", "forget"],
    ["journal", "forget", "--session"],
    ["where"],
    ["doctor"],
    ["cursor", "unread", "c", "main", "--limit"],
    ["cursor", "show"],
    ["cursor", "advance", "c", "main", "--to"],
    ["summary", "list", "--limit"],
    ["summary", "remove"],
    ["summary", "latest"],
    ["summary", "add", "--text"],
    ["vectors", "stats"],
    ["vectors", "search", "--like"],
    ["journal", "search"],
    ["journal", "search", "--branch"],
    ["summary", "search"],
    ["survey"],
    ["import", "--map"],
    ["verify", "--deep"],
    ["worktree", "list"],
    ["export", "-o"],
    ["export", "--worktree"],
    ["export", "--format"],
]


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code: Any
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: usage errors exit 2, --help 0
            code = exc.code
    return int(code or 0), err.getvalue()


def test_cli_fuzz_never_prints_a_traceback(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": "x\x1b[2J"})
    rng = random.Random(9)
    seen_codes: set[int] = set()
    for _ in range(1500):
        argv = ["--cwd", str(root)]
        if rng.random() < 0.1:
            argv += ["--db", rng.choice(VALUES)]
        if rng.random() < 0.1:
            argv.append("--read-only")
        argv += list(rng.choice(COMMANDS))
        argv += [rng.choice(VALUES) for _ in range(rng.randint(0, 3))]
        if rng.random() < 0.3:
            argv.append("--json")
        code, err = _run(argv)
        seen_codes.add(code)
        assert "Traceback" not in err, argv
        assert "internal error" not in err, (argv, err)
        assert code in (0, 1, 2), (argv, code, err)
        if code == 1 and err:
            assert err.count("\n") == 1, (argv, err)
    assert {0, 2} <= seen_codes


@pytest.mark.parametrize(
    "argv,code",
    [
        (["journal", "read", "-n", "99999999999999999999"], 2),
        (["journal", "read", "--branch", "\udcff"], 2),
        (["--db", "/proc/nope/x.db", "journal", "write", "--focus", "x"], 2),
        (["cursor", "unread", "c", "main", "--limit", str(1 << 63)], 2),
        (["summary", "remove", str(1 << 63)], 2),
        (["summary", "list", "--limit", str(1 << 63)], 2),
    ],
)
def test_the_reported_inputs(tmp_path: Path, argv: list[str], code: int) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": "x"})
    got, err = _run(["--cwd", str(root), *argv])
    assert got == code, err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_readable_output_escapes_control_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": "a\x1b[31mb\x07"})
    assert main(["--cwd", str(root), "journal", "read"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\\x1b[31m" in out


HOSTILE: list[Any] = [
    None,
    "",
    "x",
    "\udcff",
    1 << 64,
    -1,
    1.5,
    True,
    b"b",
    [],
    ["a"],
    {},
    {"a": 1},
    object(),
    "a\x00b",
    "x" * 2_000_000,
]


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"k": value}
    return value


def test_library_fuzz_raises_only_recall_errors(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    rng = random.Random(3)
    with open_store(root) as s:
        eid = s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": "x"}).id
        calls = [
            lambda v: s.journal.read(v),
            lambda v: s.journal.read(5, branch=v),
            lambda v: s.journal.read(5, all_worktrees=v),
            lambda v: s.journal.get(v),
            lambda v: s.journal.append(v),
            lambda v: s.journal.append({"timestamp": v}),
            lambda v: s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": v}),
            lambda v: s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "done": v}),
            lambda v: s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "extra": v}),
            lambda v: s.journal.write(focus="f", done=v),
            lambda v: s.journal.write(focus=v),
            lambda v: s.journal.forget(v),
            lambda v: s.journal.forget(session_id=v),
            lambda v: s.cursors.unread("c", "main", limit=v),
            lambda v: s.cursors.advance("c", "main", to=v),
            lambda v: s.summaries.list(v),
            lambda v: s.summaries.remove(v),
            lambda v: open_store(v).close(),
            lambda v: open_store(root, db_path=v).close(),
        ]
        for _ in range(600):
            call = rng.choice(calls)
            value = rng.choice(HOSTILE)
            with contextlib.suppress(RecallError):
                call(value)
        with pytest.raises(RecallError):
            s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "extra": _nested(1000)})
        with pytest.raises(RecallError):
            s.journal.write(focus="f", done="a thing")  # type: ignore[arg-type]
        with pytest.raises(RecallError, match="limit"):
            s.journal.write(focus="x" * (2 << 20))
        assert s.journal.get(eid) is not None


def test_a_damaged_store_gives_typed_errors_only(tmp_path: Path) -> None:
    """Bit flips anywhere in a store file: opening, reading, searching, doctor and the CLI
    end in an answer or a RecallError (CorruptStoreError, NotAStoreError, ...), never in a
    raw JSON/Unicode/apsw exception or a traceback."""
    import shutil

    root = make_workspace(tmp_path)
    with open_store(root) as store:
        store.journal.append_many(
            [
                {
                    "timestamp": f"2026-01-01T00:00:{i:02d}Z",
                    "session_id": f"s{i % 7}",
                    "focus": f"focus {i} gateway",
                    "done": [f"d{i}"],
                    "extra": {"k": [i, "v"]},
                }
                for i in range(60)
            ]
        )
        db = store.workspace.db_path
    pristine = tmp_path / "pristine.db"
    shutil.copyfile(db, pristine)
    size = pristine.stat().st_size
    rng = random.Random(11)
    for _trial in range(40):
        data = bytearray(pristine.read_bytes())
        for _ in range(rng.choice([1, 4, 32])):
            pos = rng.randrange(size)
            data[pos] ^= 1 << rng.randrange(8)
        db.write_bytes(bytes(data))
        for wal in (db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
            wal.unlink(missing_ok=True)
        try:
            with open_store(root, read_only=True) as s:
                s.journal.read(50, all_worktrees=True)
                s.journal.search("gateway", all_worktrees=True).to_dict()
                s.journal.pending_next_steps()
                s.doctor()
        except RecallError:
            pass
        code, err = _run(["--cwd", str(root), "journal", "read", "--json"])
        assert "Traceback" not in err and "internal error" not in err and code in (0, 1, 2), err


def test_demo_into_a_directory_that_cannot_be_made_is_one_line() -> None:
    code, err = _run(["demo", "/proc/nope/demo"])
    assert code == 2 and err.count("\n") == 1 and "cannot create" in err, err
