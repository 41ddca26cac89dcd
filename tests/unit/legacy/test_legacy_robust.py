"""No line stops a migration, an interrupted import is called interrupted, and two imports
of the same workspace at once both succeed when every line is accounted for."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recall_sqlite import open_store
from recall_sqlite.demo import synapt_line
from recall_sqlite.legacy.lines import Bad, classify, inspect
from recall_sqlite.store import context_of
from tests.conftest import make_workspace
from tests.helpers import CLI

UUID = "6f1c0e56-0000-4000-8000-000000000000"
BASE = synapt_line(
    timestamp="2026-01-01T10:00:00+00:00", session_id="s", focus="f", done=["d"]
).encode()

fragments = st.sampled_from(
    [
        b"9" * 4400,
        b"[" * 2000,
        b"{",
        b"}",
        b'"',
        b"\\u0000",
        b"\\ud800",
        b"\xff",
        b"\x00",
        b"0001-01-01T00:00:00+01:00",
        b"9999-12-31T23:59:59-01:00",
        b"1e999999",
        b"NaN",
        b'"extra": ' + b"[" * 300 + b"]" * 300,
        b"true",
        b"null",
        b",",
        b":",
        b" ",
    ]
)


@settings(max_examples=500, deadline=None)
@given(
    cut=st.integers(0, len(BASE)),
    insert=st.lists(fragments, max_size=3),
    raw=st.binary(max_size=40),
    terminated=st.booleans(),
    mode=st.integers(0, 2),
)
def test_no_line_raises_and_survey_agrees_with_import(
    cut: int, insert: list[bytes], raw: bytes, terminated: bool, mode: int
) -> None:
    if mode == 0:
        line = BASE[:cut] + b"".join(insert) + BASE[cut:]
    elif mode == 1:
        line = raw
    else:
        line = BASE[:-1] + b', "x": ' + b"".join(insert or [b"1"]) + b"}"
    line = line.replace(b"\n", b" ")
    fate = classify(line, terminated)
    seen = inspect(line, terminated)
    assert isinstance(fate, Bad) == isinstance(seen, Bad)
    if isinstance(fate, Bad):
        assert isinstance(seen, Bad) and seen.reason == fate.reason


def test_survey_and_import_quarantine_what_used_to_crash(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    bad = [
        '{"timestamp": "2026-01-01T10:00:00+00:00", "n": ' + "9" * 5000 + "}",
        '{"timestamp": "0001-01-01T00:00:00+01:00", "session_id": "early"}',
        '{"timestamp": "2026-01-01T10:00:00+00:00", "x": ' + "[" * 1000 + "]" * 1000 + "}",
    ]
    good = synapt_line(timestamp="2026-01-02T10:00:00+00:00", session_id="after")
    path = root / ".synapt/recall/worktrees/proj/journal.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join([*bad, good]) + "\n")
    with open_store(root) as store:
        s = store.legacy.survey()
        assert (s.quarantined, s.valid) == (3, 1)
        assert dict(s.buckets[0].malformed) == {
            "invalid-json": 1,
            "bad-timestamp": 1,
            "too-deep": 1,
        }
        r = store.legacy.import_paths().to_dict()
        assert (r["quarantined"], r["imported"]) == (3, 1) and r["ok"]
        assert [e.session_id for e in store.journal.read(10).entries] == ["after"]
        assert store.legacy.verify(deep=True).ok


def test_a_timestamp_in_digits_that_are_not_ascii_imports(tmp_path: Path) -> None:
    # It stopped the import with an internal error (the fast path encoded it as ascii).
    root = make_workspace(tmp_path)
    odd = synapt_line(timestamp="\u0662\u0660\u0662\u0666-01-01T10:00:00+00:00", session_id="odd")
    good = synapt_line(timestamp="2026-01-02T10:00:00+00:00", session_id="after")
    path = root / ".synapt/recall/worktrees/proj/journal.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(odd + "\n" + good + "\n")
    with open_store(root) as store:
        s = store.legacy.survey()
        r = store.legacy.import_paths().to_dict()
        assert (r["quarantined"], r["imported"]) == (s.quarantined, s.valid) == (0, 2)
        assert r["ok"] and store.legacy.verify(deep=True).ok
        assert [e.session_id for e in store.journal.read(10).entries] == ["after", "odd"]


def test_an_interrupted_import_is_called_interrupted(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    path = root / ".synapt/recall/worktrees/proj/journal.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(
        "".join(
            synapt_line(timestamp=f"2026-01-01T10:{i // 60:02d}:{i % 60:02d}Z", session_id=f"s{i}")
            + "\n"
            for i in range(300)
        )
    )

    def stop(done: int, total: int) -> None:
        if 0 < done < total:
            raise KeyboardInterrupt

    with open_store(root) as store:
        with pytest.raises(KeyboardInterrupt):
            store.legacy.import_paths(chunk_lines=50, progress=stop)
        v = store.legacy.verify()
        assert not v.ok
        assert v.sources[0].status == "interrupted"
        assert "interrupted" in v.sources[0].detail and "added" not in v.sources[0].detail
        assert store.legacy.import_paths().ok
        assert store.legacy.verify(deep=True).ok


def test_two_imports_at_once_both_succeed(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    for name in ("proj", "server", "docs"):
        path = root / f".synapt/recall/worktrees/{name}/journal.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text(
            "".join(
                synapt_line(
                    timestamp=f"2026-01-{1 + i % 28:02d}T10:00:00Z",
                    session_id=f"{name}{i}",
                    focus="x" * 200,
                )
                + "\n"
                for i in range(4000)
            )
        )
    open_store(root).close()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNAPT_", "RECALL_"))}
    cmd = [*CLI, "import", "--json"]
    procs = [
        subprocess.Popen(
            cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    reports = [json.loads(o[0]) for o in outs]
    assert sum(r["imported"] for r in reports) == 12000
    assert sorted(r["waited"] for r in reports) == [False, True]
    with open_store(root) as store:
        assert store.legacy.verify(deep=True).ok
        assert context_of(store).db.query("SELECT count(*) FROM entry_provenance") == [(12000,)]


def test_survey_of_a_missing_path_prints_no_table(tmp_path: Path) -> None:
    r = subprocess.run(
        [*CLI, "survey", str(tmp_path / "nonexistent")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1
    assert "BUCKET" not in r.stdout and "does not exist" in r.stdout
