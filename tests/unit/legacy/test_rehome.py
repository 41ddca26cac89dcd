"""Re-homing (issue 10, item 3): `import --map BUCKET=WORKTREE` on a source already imported
moves its rows to that worktree; an entry supplied also by another source stays where that
source put it; derived state (heads, counts, vector copies) follows; the schema refuses
any other edit of an entry's worktree."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite import InvalidEntryError, InvalidInputError, Store, derived, open_store
from recall_sqlite.store import context_of
from tests.conftest import make_workspace


def jline(
    hour: int, sid: str, focus: str = "", *, auto: bool = False, steps: tuple[str, ...] = ()
) -> str:
    """A journal line as synapt writes it (all fields, its order)."""
    e: dict[str, Any] = {
        "timestamp": f"2026-01-01T{hour:02d}:00:00+00:00",
        "session_id": sid,
        "branch": "main",
        "focus": focus,
        "done": [],
        "decisions": [],
        "next_steps": list(steps),
        "files_modified": [],
        "git_log": [],
        "auto": auto,
        "enriched": False,
        "griptree": "",
        "agent_id": "",
        "repair": False,
    }
    return json.dumps(e)  # the literal above is in synapt's field order


def write_bucket(root: Path, name: str, lines: list[str]) -> Path:
    path = root / ".synapt" / "recall" / "worktrees" / name / "journal.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    return path


def workspace(base: Path) -> Path:
    """A gr2 workspace with a checkout `desk` (worktree key 'desk')."""
    root = make_workspace(base)
    (root / "desk" / ".git").mkdir(parents=True)
    (root / "desk" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


def worktree_of(store: Store) -> dict[str, str]:
    """session/focus -> worktree key of every stored version."""
    return {
        f"{s}/{f}": str(k)
        for s, f, k in context_of(store).db.query(
            "SELECT e.session_id, e.focus, t.key FROM journal_entries e"
            " JOIN worktrees t ON t.id = e.worktree_id"
        )
    }


def no_differences(store: Store) -> None:
    with context_of(store).db.read() as conn:
        assert derived.check(conn) == []


def source(report: Any, bucket: str) -> Any:
    return next(s for s in report.sources if s.bucket == bucket)


SHARED = jline(9, "shared", "carried by both buckets")
A_LINES = [
    jline(1, "a1", "", auto=True),
    jline(2, "a1", "a1 enriched", steps=("ship",)),
    jline(3, "a2", "a2"),
    SHARED,
    json.dumps({"timestamp": "2026-01-01T04:00:00Z", "focus": "no session"}),
]
B_LINES = [jline(5, "b1", "b1"), SHARED]


@pytest.fixture
def imported(tmp_path: Path) -> tuple[Path, Store]:
    """Buckets `alpha` (desk's history, filed under the main worktree by a wrong --map) and
    `beta` (the main worktree's own), imported; vectors on alpha's versions."""
    root = workspace(tmp_path)
    write_bucket(root, "alpha", A_LINES)
    write_bucket(root, "beta", B_LINES)
    s = open_store(root)
    first = s.legacy.import_paths(mapping={"alpha": ".", "beta": "."})
    assert first.ok and first.to_dict()["imported"] == 6
    seqs = [
        int(r[0]) for r in context_of(s).db.query("SELECT seq FROM journal_entries ORDER BY seq")
    ]
    ids = [
        str(r[0])
        for r in context_of(s).db.query("SELECT lower(hex(id)) FROM journal_entries ORDER BY seq")
    ]
    from recall_sqlite.vectors import Owner

    for i, entry_id in enumerate(ids):
        s.vectors.put(Owner.entry(entry_id), [1.0, float(i) + 1, 0.5], model="m")
    assert len(seqs) == 6
    return root, s


def test_rehome_moves_the_rows_and_derived_state_follows(imported: tuple[Path, Store]) -> None:
    root, s = imported
    before_all = _without_worktree(s.journal.read(50, all_worktrees=True).to_dict())
    gen0 = context_of(s).db.query("SELECT generation FROM vector_generations")[0][0]
    report = s.legacy.import_paths(mapping={"alpha": "desk"})
    assert report.ok, report.to_dict()
    a = source(report, "alpha")
    assert (a.action, a.worktree, a.moved, a.stayed) == ("rehomed", "desk", 4, 1)
    assert "1 left where another source" in a.note
    assert source(report, "beta").action == "unchanged"
    assert report.to_dict()["moved"] == 4 and report.to_dict()["stayed"] == 1
    # the shared entry stays where beta (still in '.') put it; the rest is desk's
    assert worktree_of(s) == {
        "a1/": "desk",
        "a1/a1 enriched": "desk",
        "a2/a2": "desk",
        "/no session": "desk",
        "shared/carried by both buckets": ".",
        "b1/b1": ".",
    }
    no_differences(s)
    assert s.doctor().ok
    # vectors carry their owner's new worktree, and search caches learn of it
    assert context_of(s).db.query(
        "SELECT count(*) FROM vectors v JOIN journal_entries e"
        " ON e.seq = v.entry_seq WHERE v.worktree_id IS NOT e.worktree_id"
    ) == [(0,)]
    assert context_of(s).db.query("SELECT generation FROM vector_generations")[0][0] > gen0
    assert context_of(s).db.query("SELECT count(*) FROM journal_rehome") == [(0,)]
    # the workspace as a whole reads as before; each worktree reads its own history
    assert _without_worktree(s.journal.read(50, all_worktrees=True).to_dict()) == before_all
    here = s.journal.read(50)
    assert {e.session_id for e in here.entries} == {"shared", "b1"}
    assert (here.total, here.elsewhere.other_worktrees) == (2, 3)
    with open_store(root / "desk") as d:
        got = d.journal.read(50)
        assert [e.focus for e in got.entries] == ["no session", "a2", "a1 enriched"]
        assert (got.total, got.elsewhere.other_worktrees) == (3, 2)
        assert list(d.journal.pending_next_steps().pending) == ["ship"]
    assert context_of(s).db.query(
        "SELECT t.key FROM import_sources s JOIN worktrees t"
        " ON t.id = s.worktree_id WHERE s.bucket = 'alpha'"
    ) == [("desk",)]
    assert s.legacy.verify(deep=True).ok


def _without_worktree(read: dict[str, Any]) -> dict[str, Any]:
    read["entries"] = [{k: v for k, v in e.items() if k != "worktree"} for e in read["entries"]]
    return read


def test_a_rerun_moves_nothing(imported: tuple[Path, Store]) -> None:
    _, s = imported
    s.legacy.import_paths(mapping={"alpha": "desk"})
    before = context_of(s).db.query(
        "SELECT seq, worktree_id, head_wt, head_ws, sid_order FROM journal_entries ORDER BY seq"
    )
    gens = context_of(s).db.query("SELECT * FROM vector_generations")
    again = s.legacy.import_paths(mapping={"alpha": "desk"})
    assert {(x.action, x.moved, x.stayed) for x in again.sources} == {("unchanged", 0, 0)}
    assert (
        context_of(s).db.query(
            "SELECT seq, worktree_id, head_wt, head_ws, sid_order FROM journal_entries ORDER BY seq"
        )
        == before
    )
    assert context_of(s).db.query("SELECT * FROM vector_generations") == gens


def test_rehoming_the_other_source_too_moves_what_stayed(imported: tuple[Path, Store]) -> None:
    _, s = imported
    s.legacy.import_paths(mapping={"alpha": "desk"})
    report = s.legacy.import_paths(mapping={"beta": "desk"})
    b = source(report, "beta")
    assert (b.action, b.moved, b.stayed) == ("rehomed", 2, 0)
    assert set(worktree_of(s).values()) == {"desk"}
    no_differences(s)
    # and back: the whole history of both buckets follows each re-home in turn
    s.legacy.import_paths(mapping={"alpha": ".", "beta": "."})
    assert set(worktree_of(s).values()) == {"."}
    no_differences(s)


def test_an_entry_a_live_process_wrote_stays(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    line = jline(7, "live", "written live, then found in a bucket")
    with open_store(root) as s:
        s.journal.append(json.loads(line))
        write_bucket(root, "gamma", [line, jline(8, "g", "only in gamma")])
        assert s.legacy.import_paths().ok
        r = source(s.legacy.import_paths(mapping={"gamma": "desk"}), "gamma")
        assert (r.moved, r.stayed) == (1, 1)
        assert worktree_of(s) == {
            "live/written live, then found in a bucket": ".",
            "g/only in gamma": "desk",
        }
        no_differences(s)


def test_rehome_to_a_new_worktree_then_appended_lines_follow(imported: tuple[Path, Store]) -> None:
    root, s = imported
    path = root / ".synapt/recall/worktrees/alpha/journal.jsonl"
    with path.open("a") as fh:
        fh.write(jline(12, "a3", "appended later") + "\n")
    report = s.legacy.import_paths(mapping={"alpha": "elsewhere"})
    a = source(report, "alpha")
    assert (a.action, a.moved, a.imported) == ("appended", 4, 1)
    assert "re-homed from worktree '.'" in a.note
    assert worktree_of(s)["a3/appended later"] == "elsewhere"
    assert context_of(s).db.query("SELECT key, root FROM worktrees WHERE key = 'elsewhere'") == [
        ("elsewhere", None)
    ]
    no_differences(s)


def test_a_rewritten_file_moves_every_version(imported: tuple[Path, Store]) -> None:
    root, s = imported
    write_bucket(root, "alpha", [jline(13, "a4", "after a rewrite")])  # compact_journal
    assert source(s.legacy.import_paths(), "alpha").action == "changed"
    a = source(s.legacy.import_paths(mapping={"alpha": "desk"}), "alpha")
    assert (a.moved, a.stayed) == (5, 1)
    assert context_of(s).db.query(
        "SELECT DISTINCT t.key FROM import_sources s JOIN worktrees t"
        " ON t.id = s.worktree_id WHERE s.bucket = 'alpha'"
    ) == [("desk",)]
    no_differences(s)


def test_the_schema_refuses_any_other_move(imported: tuple[Path, Store]) -> None:
    _, s = imported
    s.close()
    conn = apsw.Connection(str(context_of(s).db.path))
    desk = conn.execute("SELECT id FROM worktrees WHERE key = 'desk'").fetchall()
    if not desk:
        conn.execute(
            "INSERT INTO worktrees (workspace_id, key, name, first_seen, last_seen)"
            " VALUES (1, 'desk', 'desk', 'x', 'x')"
        )
        desk = conn.execute("SELECT id FROM worktrees WHERE key = 'desk'").fetchall()
    with pytest.raises(apsw.ConstraintError, match="immutable"):
        conn.execute("UPDATE journal_entries SET worktree_id = ?", (desk[0][0],))
    # even with the guard row (which only the re-home writer holds, inside its own
    # transaction): a head cannot move, and no version moves to another workspace
    conn.execute("BEGIN")
    conn.execute("INSERT INTO journal_rehome VALUES (1)")
    with pytest.raises(apsw.ConstraintError, match="head"):
        conn.execute("UPDATE journal_entries SET worktree_id = ? WHERE head_wt = 1", (desk[0][0],))
    conn.execute("INSERT INTO workspaces (uuid, first_seen, last_seen) VALUES ('o', 'x', 'x')")
    conn.execute(
        "INSERT INTO worktrees (workspace_id, key, name, first_seen, last_seen)"
        " SELECT id, '.', 'o', 'x', 'x' FROM workspaces WHERE uuid = 'o'"
    )
    with pytest.raises(apsw.ConstraintError, match="own workspace"):
        conn.execute(
            "UPDATE journal_entries SET worktree_id = (SELECT max(id) FROM worktrees)"
            " WHERE head_wt = 0"
        )
    conn.execute("ROLLBACK")
    conn.close()


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="no sqlite3 shell")
def test_the_stock_shell_is_refused_too(imported: tuple[Path, Store]) -> None:
    _, s = imported
    s.close()
    r = subprocess.run(
        [
            "sqlite3",
            str(context_of(s).db.path),
            "UPDATE journal_entries SET worktree_id = worktree_id + 1;",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode != 0 and "immutable" in r.stderr


# -- any sequence of imports, live writes, rewrites, forgets and re-homes -----------------

POOL = [
    jline(h, f"s{h % 3}", f"f{h}", auto=h % 4 == 0, steps=(f"n{h}",) if h % 2 else ())
    for h in range(8)
] + [json.dumps({"timestamp": "2026-01-02T00:00:00Z", "focus": "x"})]
BUCKETS = ("alpha", "beta", "gamma")
TARGETS = (".", "desk", "w2")

ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("append"),
            st.sampled_from(BUCKETS),
            st.lists(st.sampled_from(range(len(POOL))), min_size=1, max_size=3),
        ),
        st.tuples(
            st.just("rewrite"),
            st.sampled_from(BUCKETS),
            st.lists(st.sampled_from(range(len(POOL))), min_size=1, max_size=3),
        ),
        st.tuples(st.just("map"), st.sampled_from(BUCKETS), st.sampled_from(TARGETS)),
        st.tuples(st.just("import"), st.just(""), st.just("")),
        st.tuples(st.just("live"), st.sampled_from(range(len(POOL))), st.just("")),
        st.tuples(st.just("forget"), st.just(""), st.just("")),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_derived_state_and_homes_hold_after_any_sequence(steps: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = workspace(Path(tmp))
        vectors = 0
        with open_store(root) as s:
            for op, a, b in steps:
                path = root / ".synapt/recall/worktrees" / str(a) / "journal.jsonl"
                if op in ("append", "rewrite"):
                    path.parent.mkdir(parents=True, exist_ok=True)
                    with path.open("a" if op == "append" else "w") as fh:
                        fh.write("".join(POOL[i] + "\n" for i in b))
                    continue
                if op == "live":
                    try:
                        s.journal.append(json.loads(POOL[int(a)]))
                    except InvalidEntryError as exc:
                        # A forgotten version is never stored again (schema v7).
                        assert "forgotten" in str(exc)
                        continue
                elif op == "forget":
                    oldest = context_of(s).db.query(
                        "SELECT lower(hex(id)) FROM journal_entries ORDER BY seq LIMIT 1"
                    )
                    if oldest:
                        s.journal.forget(str(oldest[0][0]))
                elif op == "map" and not path.exists():
                    # --map of a bucket no store has is a mistake, and changes nothing.
                    with pytest.raises(InvalidInputError):
                        s.legacy.import_paths(mapping={str(a): str(b)})
                    continue
                else:
                    mapping = {str(a): str(b)} if op == "map" else {}
                    s.legacy.import_paths(mapping=mapping)
                # a vector on the newest version, so moves must carry vector copies too
                from recall_sqlite.vectors import Owner

                newest = context_of(s).db.query(
                    "SELECT lower(hex(id)) FROM journal_entries ORDER BY seq DESC LIMIT 1"
                )
                if newest:
                    vectors += 1
                    s.vectors.put(Owner.entry(str(newest[0][0])), [1.0, vectors, 2.0], model="m")
                no_differences(s)
                _homes_hold(s)


def _homes_hold(s: Store) -> None:
    """Every version an import created lies in the worktree of a source that supplied it;
    every source is filed where its bucket was last mapped (or first assigned)."""
    stray = context_of(s).db.query("""
        SELECT e.seq FROM journal_entries e
         WHERE EXISTS (SELECT 1 FROM entry_provenance p
                        WHERE p.entry_seq = e.seq AND p.status = 'imported')
           AND NOT EXISTS (SELECT 1 FROM entry_provenance p
                             JOIN import_sources src ON src.id = p.source_id
                            WHERE p.entry_seq = e.seq AND src.worktree_id = e.worktree_id)""")
    assert stray == []
    assert context_of(s).db.query(
        "SELECT count(*) FROM (SELECT path FROM import_sources"
        " GROUP BY path HAVING count(DISTINCT worktree_id) > 1)"
    ) == [(0,)]
