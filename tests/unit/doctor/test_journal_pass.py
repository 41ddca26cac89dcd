"""The quick doctor reads the journal's rows once (doctor/journal_pass.py, issue 33): every
statement it runs, on every connection, is read from SQLite's own program for it, and only
one full pass over journal_entries (its table or any of its indexes) is allowed beside
integrity_check's. And the pass finds what the checks it replaced find, one by one, each
reading the rows itself (which doctor still runs when damage stops the pass): on stores
with any combination of the damage the doctor suite injects, the same findings, with the
same rows for --repair. The SQL both share (the JSON rule, rich and meaningful, the heads'
windows) is held by what each damage must make doctor say, row by row."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import apsw.ext
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from recall_sqlite import open_store
from recall_sqlite.doctor import journal_pass, rows
from recall_sqlite.store import context_of
from tests.conftest import make_workspace
from tests.unit.doctor.test_doctor_damage import DAMAGE, _build

# Opcodes that start a pass over every row of a cursor's b-tree.
_WHOLE = ("Rewind", "Last", "Count")


def _passes(conn: apsw.Connection, sql: str, roots: set[int]) -> int:
    """Full passes over the b-trees `roots` in the program SQLite makes of `sql`: a cursor
    opened on one of them and rewound to its start (or end, or counted whole). A probe by
    key (SeekRowid, SeekGE) is not a pass."""
    params = apsw.ext.query_info(conn, sql).bindings_count
    program = conn.execute(f"EXPLAIN {sql}", (None,) * params).fetchall()
    cursors = {r[2] for r in program if r[1] in ("OpenRead", "ReopenIdx") and r[3] in roots}
    return sum(1 for r in program if r[1] in _WHOLE and r[2] in cursors)


@contextlib.contextmanager
def _statements(conn: apsw.Connection) -> Iterator[list[str]]:
    """Every statement run on `conn` and on any connection to its file opened meanwhile
    (doctor's second connection for integrity_check), as SQLite reports it when it
    finishes."""
    seen: list[str] = []

    def trace(c: apsw.Connection) -> None:
        if c.filename == conn.filename:
            c.trace_v2(apsw.SQLITE_TRACE_PROFILE, lambda event: seen.append(str(event["sql"])))

    apsw.connection_hooks.append(trace)
    trace(conn)
    try:
        yield seen
    finally:
        apsw.connection_hooks.remove(trace)
        conn.trace_v2(0, None)


def _journal_passes(store: Any, **doctor: Any) -> list[tuple[str, int]]:
    """(statement, its full passes over the journal) of every statement `store.doctor()`
    runs that makes one, integrity_check's aside."""
    conn = context_of(store).db.conn
    roots = {
        int(r[0])
        for r in conn.execute(
            "SELECT rootpage FROM sqlite_schema WHERE tbl_name = 'journal_entries'"
            " AND type IN ('table', 'index')"
        )
    }
    with _statements(conn) as seen:
        store.doctor(**doctor)
    out = []
    for sql in seen:
        if "integrity_check" in sql:
            continue
        n = _passes(conn, sql, roots)  # (doctor's SQL functions are registered on conn)
        if n:
            out.append((sql, n))
    return out


@pytest.mark.parametrize("beside", [True, False], ids=["beside", "in turn"])
def test_the_quick_doctor_reads_the_journal_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, beside: bool
) -> None:
    monkeypatch.setattr(rows, "BESIDE_BYTES", 0 if beside else 1 << 62)
    root = make_workspace(tmp_path)
    _build(root)
    with open_store(root) as s:
        found = _journal_passes(s)
        assert sum(n for _, n in found) == 1, found
        assert "recall_doctor_row" in found[0][0]
        assert s.doctor().ok


def test_the_checks_one_by_one_read_it_many_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the count above tells apart: without the pass (damage stops it), each check
    reads the journal again."""

    def stopped(conn: apsw.Connection) -> Any:
        raise apsw.CorruptError("database disk image is malformed")

    monkeypatch.setattr(journal_pass, "run", stopped)
    root = make_workspace(tmp_path)
    _build(root)
    with open_store(root) as s:
        assert sum(n for _, n in _journal_passes(s)) >= 6
        assert s.doctor().ok


def _report(root: Path) -> list[tuple[Any, ...]]:
    with open_store(root) as s:
        return [
            (f.kind, f.severity, f.message, f.repairable, f.data, f.fix)
            for f in s.doctor().findings
        ]


def _around(db: Path, triggers: tuple[str, ...], *sql: str) -> None:
    """A writer that went around the triggers and CHECKs named (a tool, an old version)."""
    shell = apsw.Connection(str(db))
    made = [
        shell.execute("SELECT sql FROM sqlite_schema WHERE name = ?", (t,)).fetchall()[0][0]
        for t in triggers
    ]
    shell.execute("PRAGMA foreign_keys = OFF")
    shell.execute("PRAGMA ignore_check_constraints = ON")
    for t in triggers:
        shell.execute(f"DROP TRIGGER {t}")
    for statement in sql:
        shell.execute(statement)
    for statement in made:
        shell.execute(statement)
    shell.close()


# Two more the pass checks that the suite above does not inject, with what it must say.
MORE: dict[str, tuple[Any, set[str], bool]] = {
    "lists that are not JSON": (
        lambda db: _around(
            db,
            ("journal_entries_immutable",),
            "UPDATE journal_entries SET done = '[\"broken' WHERE seq = 12",
            "UPDATE journal_entries SET git_log = '[1,' WHERE seq = 30",
            "UPDATE journal_entries SET extra = '[]' WHERE seq = 40",
        ),
        {"json"},
        False,
    ),
    "an entry of no worktree": (
        lambda db: _around(
            db,
            ("journal_entries_immutable", "journal_entries_rehome_guard"),
            "UPDATE journal_entries SET worktree_id = 999 WHERE seq = 17",
        ),
        {"foreign_keys"},
        False,
    ),
}
DAMAGE = {**DAMAGE, **MORE}


@pytest.mark.parametrize("name", sorted(MORE))
def test_the_pass_finds_the_damage_it_alone_looks_for(tmp_path: Path, name: str) -> None:
    inject, kinds, _ = MORE[name]
    root = make_workspace(tmp_path)
    _build(root)
    with open_store(root) as s:
        db = s.workspace.db_path
    inject(db)
    found = {f[0]: f[4] for f in _report(root)}
    assert kinds <= set(found)
    assert found[next(iter(kinds))] == SAYS[name]


SAYS = {
    "lists that are not JSON": {"seqs": [12, 30, 40]},
    "an entry of no worktree": {"rows": 1, "tables": ["journal_entries"]},
}


# Damage by SQL first; then the byte flips, one per text they flip (each finds its text
# once in the file, so two on one text cannot both land).
_SQL = sorted(n for n in DAMAGE if "bit flip" not in n and n != "an index page")
_FLIPS = (
    ["an index page"],
    [n for n in DAMAGE if "bit flip" in n and "entry" in n],
    [n for n in DAMAGE if "bit flip" in n and "summary" in n],
)
damages = st.tuples(
    st.lists(st.sampled_from(_SQL), unique=True, max_size=len(_SQL)),
    *(st.sampled_from([None, *flips]) for flips in _FLIPS),
).map(lambda t: [*t[0], *(n for n in t[1:] if n is not None)])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(damages)
def test_the_pass_finds_what_the_checks_one_by_one_find(
    tmp_path_factory: pytest.TempPathFactory, chosen: list[str]
) -> None:
    assume(chosen)
    base = tmp_path_factory.mktemp("pass")
    root = make_workspace(base)
    _build(root)
    with open_store(root) as s:
        db = s.workspace.db_path
    for name in chosen:
        try:
            DAMAGE[name][0](db)
        except (AssertionError, apsw.Error):
            # A flip's text moved by the SQL damage before it, or SQL through a flipped index.
            assume(False)
    by_pass = _report(root)
    real = journal_pass.run
    try:

        def stopped(conn: apsw.Connection) -> Any:
            raise apsw.CorruptError("database disk image is malformed")

        journal_pass.run = stopped
        one_by_one = _report(root)
    finally:
        journal_pass.run = real
    assert by_pass == one_by_one
    quick = {k for n in chosen for k in DAMAGE[n][1] if not DAMAGE[n][2]}
    if quick:
        assert by_pass, chosen
    shutil.rmtree(base)
