"""doctor finds every kind of damage injected here and repairs it (issue 19, point 4): heads,
counts, sid_order and rich, the full-text index (rows, and tokens replaced under a kept
docsize), summary chains, vectors, orphans, guard rows, index pages, bit flips in entries
and summaries (valid and undecodable text); afterwards every answer equals the clean
store's. Damaged table pages are reported as what they are, with the way out. The checks
run outside the write lock and a repair writes in short transactions: a writer in another
process succeeds while doctor --repair runs."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
import pytest

from recall_sqlite import ALL_BRANCHES, Store, open_store
from recall_sqlite.doctor.schema import differences
from recall_sqlite.journal import deferred
from recall_sqlite.store import context_of
from recall_sqlite.vectors import Owner
from tests.conftest import make_workspace
from tests.helpers import run_cli

FLIP_FOCUS = "bitflip target ABCDEFGHIJKLMNOP gateway"
FLIP_SUMMARY = "summary flip target QRSTUVWXYZ about the gateway"


def _build(root: Path) -> None:
    with open_store(root) as s:
        for i in range(60):
            s.journal.append(
                {
                    "timestamp": f"2026-01-0{1 + i % 9}T{i % 24:02d}:00:00Z",
                    "session_id": f"s{i % 10}",
                    "branch": ["main", "feat"][i % 2],
                    "focus": f"gateway work {i}" if i % 7 else "",
                    "done": [f"done {i}"] if i % 3 else [],
                    "next_steps": [f"next {i}"] if i % 4 == 0 else [],
                    "auto": i % 5 == 0,
                }
            )
        target = s.journal.append(
            {"timestamp": "2026-01-10T00:00:00Z", "session_id": "t", "focus": FLIP_FOCUS}
        )
        for k in range(3):
            s.summaries.add(f"day {k} of the gateway", branch="main", kind="day")
        s.summaries.add(FLIP_SUMMARY, kind="week", covers=[target.id or ""])
        ids = [e.id or "" for e in s.journal.versions()][:6]
        s.vectors.put_many(
            [Owner.entry(i) for i in ids], [[1.0, float(j), 0.5] for j in range(6)], model="m"
        )
        s.cursors.advance("hook", "main", to=10)


def answers(s: Store) -> dict[str, Any]:
    j = s.journal
    first = next(iter(j.versions()), None)
    return {
        "read": j.read(200, all_worktrees=True).to_dict(),
        "read_main": j.read(200, branch="main", meaningful=True).to_dict(),
        "versions": [e.to_dict() for e in j.versions()],
        "pending": j.pending_next_steps().to_dict(),
        "search": j.search("gateway", 100, all_worktrees=True).to_dict(),
        "search_flip": j.search("ABCDEFGHIJKLMNOP").total,
        "summaries": [x.to_dict() for x in s.summaries.list(ALL_BRANCHES, limit=100)],
        "summary_search": s.summaries.search("gateway", 20, include_superseded=True).to_dict(),
        "vectors": first
        and s.vectors.search_like(Owner.entry(first.id or ""), 5, model="m").to_dict(),
        "cursor": s.cursors.unread("hook", "main").to_dict(),
    }


def _shell(db: Path, *sql: str) -> None:
    shell = apsw.Connection(str(db))
    shell.execute("PRAGMA foreign_keys=OFF")
    for statement in sql:
        shell.execute(statement)
    shell.close()


def _lifting(trigger: str, db: Path, sql: str) -> None:
    """A writer that went around a trigger (an old version, a tool): the damage it leaves."""
    shell = apsw.Connection(str(db))
    made = shell.execute("SELECT sql FROM sqlite_schema WHERE name = ?", (trigger,)).fetchall()
    shell.execute(f"DROP TRIGGER {trigger}")
    shell.execute(sql)
    shell.execute(made[0][0])
    shell.close()


def _flip(db: Path, needle: bytes, at: int, mask: int) -> None:
    data = bytearray(db.read_bytes())
    offset = data.find(needle)
    assert offset >= 0 and data.find(needle, offset + 1) < 0, "the text must be on one page"
    data[offset + at] ^= mask
    db.write_bytes(bytes(data))


def _index_page_flip(db: Path) -> None:
    """Flip the last byte of the first cell of an index leaf page: an entry of the index
    now names another row (what a bit flip in an index page does)."""
    shell = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    (pageno,) = shell.execute(
        "SELECT pageno FROM dbstat WHERE name = 'journal_by_session' AND pagetype = 'leaf'"
        " ORDER BY pageno LIMIT 1"
    ).fetchall()[0]
    size = shell.execute("PRAGMA page_size").fetchall()[0][0]
    shell.close()
    data = bytearray(db.read_bytes())
    page = (pageno - 1) * size
    cell = page + int.from_bytes(data[page + 8 : page + 10], "big")
    length, used = data[cell], 1  # a short cell: its payload size is one varint byte
    assert length < 0x80
    data[cell + used + length - 1] ^= 0x01
    db.write_bytes(bytes(data))


Damage = Callable[[Path], None]
DAMAGE: dict[str, tuple[Damage, set[str], bool]] = {
    # name: (inject, the finding kinds expected, needs --deep to be found)
    "heads": (
        lambda db: _shell(db, "UPDATE journal_entries SET head_ws = 1 - head_ws WHERE seq = 5"),
        {"heads"},
        False,
    ),
    "counts": (
        lambda db: _shell(
            db, "UPDATE journal_counts_wt SET heads = heads + 3", "DELETE FROM journal_counts_ws"
        ),
        {"counts_wt", "counts_ws"},
        False,
    ),
    "sid_order": (
        lambda db: _lifting(
            "journal_entries_immutable",
            db,
            "UPDATE journal_entries SET sid_order = sid_order + 1 WHERE session_id = 's3'",
        ),
        {"entry_derived"},
        False,
    ),
    "rich and meaningful": (
        lambda db: _lifting(
            "journal_entries_immutable",
            db,
            "UPDATE journal_entries SET rich = 4 - rich, meaningful = 1 - meaningful"
            " WHERE seq IN (3, 4, 20)",
        ),
        {"entry_derived"},
        False,
    ),
    "full-text rows": (
        lambda db: _shell(
            db,
            "INSERT INTO journal_fts (journal_fts, rowid, focus, done, decisions, next_steps,"
            " files_modified) SELECT 'delete', seq, focus, done, decisions, next_steps,"
            " files_modified FROM journal_fts_content WHERE seq IN (7, 8)",
        ),
        {"search_index"},
        False,
    ),
    "full-text tokens under a kept docsize": (
        lambda db: _shell(
            db,
            "INSERT INTO journal_fts (journal_fts, rowid, focus, done, decisions, next_steps,"
            " files_modified) SELECT 'delete', seq, focus, done, decisions, next_steps,"
            " files_modified FROM journal_fts_content WHERE seq = 9",
            "INSERT INTO journal_fts (rowid, focus) VALUES (9, 'replaced tokens only')",
        ),
        {"search_index"},
        True,
    ),
    "two current summaries": (
        lambda db: _shell(
            db,
            "UPDATE summaries SET superseded_by = NULL WHERE id = (SELECT min(id) FROM summaries)",
        ),
        {"summary_chain"},
        False,
    ),
    "vector counts and copies": (
        lambda db: (
            _shell(db, "UPDATE vector_generations SET vectors = vectors + 5"),
            _lifting(
                "vectors_check_update", db, "UPDATE vectors SET branch = 'nowhere' WHERE id = 2"
            ),
        ),
        {"vector_counts", "vector_copies"},
        False,
    ),
    "orphans": (
        lambda db: _shell(
            db,
            "INSERT INTO summary_sources (summary_id, entry_seq) VALUES (1, 99999)",
            "DROP TRIGGER vectors_follow_entry_delete",
            "DELETE FROM journal_entries WHERE seq = (SELECT max(entry_seq) FROM vectors)",
        ),
        {"orphan_vectors", "foreign_keys"},
        False,
    ),
    "guard rows": (
        lambda db: _shell(db, "INSERT INTO journal_rehome VALUES (1)"),
        {"rehome_guard"},
        False,
    ),
    "an index page": (_index_page_flip, {"index"}, False),
    "a bit flip in an entry's text": (
        lambda db: _flip(db, FLIP_FOCUS.encode(), 20, 0x01),
        {"entry_content"},
        True,
    ),
    "a bit flip making an entry's text undecodable": (
        lambda db: _flip(db, FLIP_FOCUS.encode(), 22, 0x80),
        {"undecodable_text"},
        False,
    ),
    "a bit flip in a summary": (
        lambda db: _flip(db, FLIP_SUMMARY.encode(), 25, 0x02),
        {"summary_content"},
        True,
    ),
    "a bit flip making a summary undecodable": (
        lambda db: _flip(db, FLIP_SUMMARY.encode(), 21, 0x80),
        {"undecodable_text"},
        False,
    ),
}
# Damage the store cannot repair by itself also removes rows: not compared after repair.
CHANGES_ANSWERS = {"orphans"}


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_injected_damage_is_found_repaired_and_answers_equal_a_clean_store(
    tmp_path: Path, name: str
) -> None:
    inject, kinds, deep = DAMAGE[name]
    root = make_workspace(tmp_path)
    _build(root)
    with open_store(root) as s:
        clean = answers(s)
        db = s.workspace.db_path
    inject(db)
    with open_store(root) as s:
        if not deep:
            found = {f.kind for f in s.doctor().findings}
            assert kinds <= found, (kinds, found)
        found = {f.kind for f in s.doctor(deep=True).findings}
        assert kinds <= found, (kinds, found)
        fixed = s.doctor(repair=True, deep=True)
        assert fixed.ok, fixed.to_dict()
        assert fixed.repaired
        if name in CHANGES_ANSWERS:
            # The shell deleted an entry: the clean store without it.
            assert s.journal.read(200, all_worktrees=True).total >= clean["read"]["total"] - 1
        else:
            assert answers(s) == clean
        assert s.doctor(deep=True).ok


def test_a_healthy_store_is_ok_deep_and_repair_changes_nothing(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    _build(root)
    with open_store(root) as s:
        before = answers(s)
        assert s.doctor(deep=True).ok
        report = s.doctor(repair=True, deep=True)
        assert report.ok and report.repaired == ()
        assert answers(s) == before


def test_damaged_table_pages_are_reported_with_the_way_out(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    _build(root)
    with open_store(root) as s:
        db = s.workspace.db_path
        (pageno,) = context_of(s).db.query(
            "SELECT pageno FROM dbstat WHERE name = 'journal_entries' AND pagetype = 'leaf'"
            " ORDER BY pageno LIMIT 1"
        )[0]
        size = context_of(s).db.query("PRAGMA page_size")[0][0]
    data = bytearray(db.read_bytes())
    data[(pageno - 1) * size] = 0x01  # not a page type: the page cannot be read at all
    db.write_bytes(bytes(data))
    res = run_cli("--cwd", str(root), "doctor", "--json")
    assert res.returncode == 1
    import json

    findings = json.loads(res.stdout)["findings"]
    pages = [f for f in findings if f["kind"] in ("damaged_pages", "unreadable")]
    assert pages and any(".recover" in f["message"] for f in pages), findings
    assert any("journal_entries" in f["message"] for f in pages)
    res = run_cli("--cwd", str(root), "journal", "read", "-n", "100", "--all-worktrees")
    assert res.returncode == 1 and res.stderr.count("\n") == 1
    assert ".recover" in res.stderr and "Traceback" not in res.stderr
    res = run_cli("--cwd", str(root), "doctor", "--repair")
    assert res.returncode == 1 and "Traceback" not in res.stderr


WRITER = (
    "import sys\n"
    "from recall_sqlite import open_store\n"
    "from recall_sqlite.store import context_of\n"
    "with open_store(sys.argv[1]) as s:\n"
    "    context_of(s).db.conn.set_busy_timeout(200)\n"
    "    s.journal.append({'timestamp': '2026-03-01T00:00:00Z', 'focus': sys.argv[2]})\n"
)


def _write_elsewhere(root: Path, focus: str) -> None:
    res = subprocess.run(
        [sys.executable, "-c", WRITER, str(root), focus], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr


def test_a_writer_succeeds_while_doctor_repair_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall_sqlite.doctor import repairs, rows

    root = make_workspace(tmp_path)
    _build(root)
    with open_store(root) as s:
        db = s.workspace.db_path
    _shell(db, "UPDATE journal_counts_wt SET heads = heads + 3")
    _shell(db, "UPDATE journal_entries SET head_ws = 1 - head_ws WHERE seq = 5")
    writes: list[str] = []
    real_guards, real_heads = rows._guards, repairs._REPAIRS["heads"]

    def guards(conn: Any) -> Any:  # inside a check's snapshot
        writes.append(f"during check {len(writes)}")
        _write_elsewhere(root, writes[-1])
        return real_guards(conn)

    def heads(db: Any, f: Any) -> Any:  # between two repairs
        out = real_heads(db, f)
        writes.append("between repairs")
        _write_elsewhere(root, writes[-1])
        return out

    monkeypatch.setattr(rows, "_guards", guards)
    monkeypatch.setitem(repairs._REPAIRS, "heads", heads)
    with open_store(root) as s:
        report = s.doctor(repair=True)
        assert report.ok, report.to_dict()
        focuses = {e.focus for e in s.journal.versions()}
    assert "between repairs" in writes and set(writes) <= focuses


@pytest.mark.slow
def test_random_bit_flips_that_change_an_answer_are_found_and_never_repaired_wrongly(
    tmp_path: Path,
) -> None:
    """A bit flipped anywhere in the file: when any answer differs from the clean store's
    (or reads fail), doctor --deep finds it, or the store cannot be opened at all (its
    schema or first pages: the CLI doctor reports that, with the way out); and when
    --repair reports the store healthy, every answer equals the clean store's."""
    import json
    import random

    from recall_sqlite import RecallError

    root = make_workspace(tmp_path)
    _build(root)
    with open_store(root) as s:
        clean = json.dumps(answers(s), sort_keys=True, default=str)
        db = s.workspace.db_path
    pristine = db.read_bytes()
    rng = random.Random(19)
    changed = repaired = 0
    for _ in range(300):
        data = bytearray(pristine)
        at = rng.randrange(len(data))
        data[at] ^= 1 << rng.randrange(8)
        db.write_bytes(bytes(data))
        try:
            with open_store(root, read_only=True) as s:
                got = json.dumps(answers(s), sort_keys=True, default=str)
        except RecallError:
            got = "a read failed"
        if got == clean:
            continue
        changed += 1
        try:
            s = open_store(root)
        except RecallError:
            continue  # it cannot be opened at all: the CLI's doctor reports damaged_store
        with s:
            assert not s.doctor(deep=True).ok, f"a flip at byte {at} changed answers unseen"
            report = s.doctor(repair=True, deep=True)  # never raises on a store it opened
        if report.ok:
            repaired += 1
            with open_store(root, read_only=True) as s:
                after = json.dumps(answers(s), sort_keys=True, default=str)
            assert after == clean, f"the flip at byte {at} was 'repaired' into other answers"
    assert changed and repaired


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_integrity_check_beside_the_other_checks_finds_the_same(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large store's integrity_check runs on a second connection beside the other checks
    (doctor/rows.py): the report is the one the checks give in turn."""
    from recall_sqlite.doctor import rows

    inject, _, deep = DAMAGE[name]
    root = make_workspace(tmp_path)
    _build(root)
    with open_store(root) as s:
        db = s.workspace.db_path
    inject(db)
    reports = {}
    for beside, size in (("beside", 0), ("in turn", 1 << 62)):
        monkeypatch.setattr(rows, "BESIDE_BYTES", size)
        with open_store(root) as s:
            reports[beside] = [f.to_dict() for f in s.doctor(deep=deep).findings]
    assert reports["beside"] == reports["in turn"]
    assert reports["beside"], "the damage was found"


def _woken(s: Store) -> list[Any]:
    """What the activated session-start hook reads, on a feature branch and at the
    unclean-end check, as plain values."""
    w = s.journal.host.wake("feat")
    return [
        [e.to_dict() for e in w.versions],
        [e.to_dict() for e in w.heads],
        w.rich_heads,
        w.complete,
        [(e.to_dict(), us) for e, us in s.journal.host.unclean_candidates("s3", 0, 2**62)],
    ]


def test_head_indexes_an_import_left_unbuilt_change_no_answer_and_doctor_says_so(
    tmp_path: Path,
) -> None:
    """A killed bulk import leaves the journal's head indexes unbuilt (journal/deferred.py):
    every answer, the session start's index-hinted queries too, stays what it was; doctor
    says which are missing, as a warning, and --repair builds them."""
    root = make_workspace(tmp_path)
    _build(root)
    with open_store(root) as s:
        clean, woken = answers(s), _woken(s)
        assert woken[0] and woken[4], "the session-start reads found nothing to compare"
        with context_of(s).db.write() as conn:
            deferred.drop(conn)
        assert answers(s) == clean
        assert _woken(s) == woken
        (finding,) = s.doctor().findings
        assert (finding.kind, finding.severity, finding.repairable) == ("schema", "warning", True)
        assert "5 of the journal's head indexes are missing (journal_heads_wt," in (finding.message)
        assert s.doctor(repair=True).repaired
        with context_of(s).db.read() as conn:
            assert not deferred.missing(conn)
            assert not differences(conn)
        assert s.doctor(deep=True).ok
        assert answers(s) == clean and _woken(s) == woken


def test_a_changed_head_index_is_no_unbuilt_one(tmp_path: Path) -> None:
    """Only head indexes that are absent read as an import's unbuilt ones: one whose
    definition changed is the error it always was, even with the others missing."""
    root = make_workspace(tmp_path)
    _build(root)
    with open_store(root) as s:
        db = s.workspace.db_path
    _shell(
        db,
        "DROP INDEX journal_heads_wt",
        "DROP INDEX journal_heads_wt_branch",
        "DROP INDEX journal_heads_ws",
        "CREATE INDEX journal_heads_ws ON journal_entries (workspace_id, seq)",
    )
    with open_store(root) as s:
        (finding,) = s.doctor().findings
        assert (finding.kind, finding.severity) == ("schema", "error")
