"""Integrity benchmarks (issue 9): doctor on a large store, the rebuild of a batch's
sessions from derived.py's definition against the bulk path's Python replay, forget of one
entry, and a single append with the schema's CHECKs and list trigger. Issue 19: what forget
costs now that it merges the full-text index until the forgotten tokens are gone (stated at
the size the run builds), and what `secure_delete` on every connection costs an append.
Issue 33: doctor against integrity_check alone on two cores (integrity_check beside the
one pass over the journal's rows), and the same two with the process pinned to one core.

    python bench/run.py --only integrity [--quick]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _util import median_time, row
from bench_summaries_cursors import _rows, build

from recall_sqlite import derived
from recall_sqlite.journal.bulk import bulk_insert
from recall_sqlite.store import context_of

SUITE = "integrity"


def _batch(store: Any, n: int, seed: int) -> list[tuple[Any, ...]]:
    """n new rows in codec.ROW_COLUMNS order (bench_summaries_cursors yields stored_us late)."""
    ctx = context_of(store)
    return [
        (*r[0:3], r[19], *r[3:19], *r[20:23])
        for r in _rows(n, ctx.workspace_pk, ctx.worktree_pk, seed=seed)
    ]


def _rolled_back(store: Any, fn: Any) -> float:
    conn = context_of(store).db.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        start = time.perf_counter()
        fn(conn)
        return time.perf_counter() - start
    finally:
        conn.execute("ROLLBACK")


def _via_rebuild(store: Any, rows: list[tuple[Any, ...]]) -> Any:
    ws = context_of(store).workspace_pk

    def run(conn: Any) -> None:
        since = int(
            conn.execute("SELECT coalesce(max(seq), 0) FROM journal_entries").fetchall()[0][0]
        )
        conn.execute("INSERT INTO journal_bulk (workspace_id) VALUES (?)", (ws,))
        # Staged and moved by one statement, as bulk.py writes its rows: the two differ
        # only in how the heads are found.
        cols = (
            "id, workspace_id, worktree_id, stored_us, session_id, branch, timestamp, ts_us,"
            " focus, done, decisions, next_steps, files_modified, git_log, auto, enriched,"
            " repair, griptree, agent_id, extra, rich, meaningful, sid_order"
        )
        conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS rebuild_stage ({cols})")
        conn.executemany(f"INSERT INTO temp.rebuild_stage VALUES ({','.join('?' * 23)})", rows)
        conn.execute(
            f"INSERT INTO journal_entries ({cols}) SELECT {cols} FROM temp.rebuild_stage"
            " ORDER BY rowid"
        )
        conn.execute("DELETE FROM temp.rebuild_stage")
        derived.rebuild(conn, ws, sessions={r[4] for r in rows if r[4]}, since_seq=since)
        conn.execute("DELETE FROM journal_bulk WHERE workspace_id = ?", (ws,))

    return run


_counter = iter(range(10**9))


def _append_time(store: Any) -> float:
    return median_time(
        lambda: store.journal.append(
            {
                "timestamp": "2026-01-01T00:00:00Z",
                "session_id": f"b{next(_counter)}",
                "focus": "bench",
                "done": ["a", "b"],
                "next_steps": ["c"],
            }
        ),
        repeat=5,
        min_time=0.05,
    )


def _scrub_alone(store: Any, n: int) -> dict[str, Any]:
    """The index merge and checkpoint of a forget, without its delete: one forgotten row
    among n (the merge's cost grows with the index, not with what was forgotten)."""
    from recall_sqlite.db import merge_fts

    ids = [
        r[0]
        for r in context_of(store).db.query(
            "SELECT lower(hex(id)) FROM journal_entries ORDER BY seq LIMIT 1 OFFSET ?",
            (n // 2,),
        )
    ]
    with context_of(store).db.write() as conn:
        conn.execute("DELETE FROM journal_entries WHERE id = ?", (bytes.fromhex(ids[0]),))
    start = time.perf_counter()
    merge_fts(context_of(store).db, "journal_fts")
    return row(
        SUITE,
        "forget's index merge and checkpoint alone (one row deleted)",
        n=n,
        ours=time.perf_counter() - start,
        target="report",
    )


def _repair_lock(store: Any, n: int) -> dict[str, Any]:
    """doctor --repair on a healthy store: how long it runs, and how long it holds the
    write lock (BEGIN IMMEDIATE to COMMIT of every write it makes: none when healthy)."""
    db = context_of(store).db
    held: list[float] = []
    real_write = db.write

    def timed_write(**kwargs: Any) -> Any:
        import contextlib

        @contextlib.contextmanager
        def wrapped() -> Any:
            start = time.perf_counter()
            with real_write(**kwargs) as conn:
                yield conn
            held.append(time.perf_counter() - start)

        return wrapped()

    db.write = timed_write
    try:
        start = time.perf_counter()
        store.doctor(repair=True)
        took = time.perf_counter() - start
    finally:
        del db.write
    return row(
        SUITE,
        "doctor --repair on a healthy store (run; write lock held)",
        n=n,
        ours=took,
        limit=max(held, default=0.0) or None,
        limit_name="the longest write transaction it made",
        target="no write lock when healthy",
        ok=not held,
    )


# The child that times doctor and integrity_check on one core: pinned before it opens the
# store, so doctor's second connection (integrity_check beside the rest) shares that core.
_ONE_CORE = """
import json, os, sys, time
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
from recall_sqlite import open_store
from recall_sqlite.store import context_of
repeat = int(sys.argv[2])
with open_store(sys.argv[1]) as store:
    conn = context_of(store).db.conn
    def best(fn):
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return sorted(times)[len(times) // 2]
    doctor = best(lambda: store.doctor())
    check = best(lambda: conn.execute("PRAGMA integrity_check").fetchall())
    # The floor: integrity_check, the journal pass's statement with its Python part (the
    # UTF-8 and tie-order verdicts) a constant, and the other tables' foreign keys: what
    # SQLite alone spends on those checks.
    from recall_sqlite.doctor import journal_pass, text
    sql = journal_pass.statement(text.text_columns(conn, journal_pass.TABLE)).replace(
        f"{journal_pass.FUNCTION}(sid_order, id,", "0 AND coalesce(sid_order, id,")
    linked = [t for (t,) in conn.execute(
        "SELECT DISTINCT m.name FROM sqlite_schema m JOIN pragma_foreign_key_list(m.name)"
        " WHERE m.type = 'table' AND m.name <> 'journal_entries'")]
    def by_sql():
        conn.execute("PRAGMA integrity_check").fetchall()
        conn.execute(sql).fetchall()
        for table in linked:
            conn.execute(f'PRAGMA foreign_key_check("{table}")').fetchall()
    floor = best(by_sql)
print(json.dumps([doctor, check, floor]))
"""


def _two_core_floor(store: Any) -> float:
    """The quick doctor's checks by SQL alone, as doctor runs them on two cores:
    integrity_check on a second read-only connection in a thread, beside the journal
    pass's statement with its Python verdicts a constant and the other tables'
    foreign_key_check (_ONE_CORE's floor, in parallel)."""
    import threading

    import apsw

    from recall_sqlite.doctor import journal_pass, text

    path = str(context_of(store).db.path)
    conns = [apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY) for _ in range(2)]
    try:
        for c in conns:
            c.execute("PRAGMA cache_size=-65536")
        main, other = conns
        sql = journal_pass.statement(text.text_columns(main, journal_pass.TABLE)).replace(
            f"{journal_pass.FUNCTION}(sid_order, id,", "0 AND coalesce(sid_order, id,"
        )
        linked = [
            str(t)
            for (t,) in main.execute(
                "SELECT DISTINCT m.name FROM sqlite_schema m JOIN pragma_foreign_key_list(m.name)"
                " WHERE m.type = 'table' AND m.name <> 'journal_entries'"
            )
        ]
        start = time.perf_counter()
        beside = threading.Thread(target=lambda: other.execute("PRAGMA integrity_check").fetchall())
        beside.start()
        main.execute(sql).fetchall()
        for table in linked:
            main.execute(f'PRAGMA foreign_key_check("{table}")').fetchall()
        beside.join()
        return time.perf_counter() - start
    finally:
        for c in conns:
            c.close()


def _one_core(store: Any, n: int, repeat: int) -> dict[str, Any]:
    """doctor and integrity_check alone, each in a child pinned to one core (the target
    of a machine where doctor cannot have a second core)."""
    case = "doctor on one core (the process pinned: integrity_check shares it with the rest)"
    target = "<= 1.6x (one core)"
    if not hasattr(os, "sched_setaffinity"):
        return row(SUITE, case, n=n, ours=0.0, target=target, unit="info", note="no affinity")
    res = subprocess.run(
        [sys.executable, "-c", _ONE_CORE, str(store.workspace.root), str(repeat)],
        capture_output=True,
        text=True,
        check=True,
    )
    doctor, check, floor = json.loads(res.stdout)
    return row(
        SUITE,
        case,
        n=n,
        ours=doctor,
        limit=check,
        limit_name="PRAGMA integrity_check alone, same file, same core",
        target=target,
        ok=doctor <= 1.6 * check,
        sql_floor=floor,
        sql_floor_name="integrity_check + the journal pass's statement, its Python verdicts a"
        " constant + foreign_key_check of the other tables",
        vs_sql_floor=doctor / floor,
    )


def run(quick: bool) -> list[dict[str, Any]]:
    n = 2_000 if quick else 1_000_000
    batch_n = 500 if quick else 5_000
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = build(Path(tmp) / "ws", n)
        try:
            # Three of each: a single pair swings by a fifth between quiet runs
            # (bench/RESULTS.md, the doctor section).
            t = median_time(lambda: store.doctor(), repeat=3, warmup=0)
            check = median_time(
                lambda: context_of(store).db.conn.execute("PRAGMA integrity_check").fetchall(),
                repeat=3,
                warmup=0,
            )
            floor = median_time(lambda: _two_core_floor(store), repeat=3, warmup=0)
            out.append(
                row(
                    SUITE,
                    "doctor (integrity_check beside one pass over the journal's rows, derived"
                    " state, JSON, identity)",
                    n=n,
                    ours=t,
                    limit=check,
                    limit_name="PRAGMA integrity_check alone, same file",
                    target="<= 1.3x (two cores)",
                    ok=t <= 1.3 * check,
                    sql_floor=floor,
                    sql_floor_name="integrity_check on a second connection beside the journal"
                    " pass's statement (its Python verdicts a constant) and the other tables'"
                    " foreign_key_check",
                    vs_sql_floor=t / floor,
                )
            )
            out.append(_one_core(store, n, 3 if quick else 1))
            t = median_time(lambda: store.doctor(deep=True), repeat=1, warmup=0)
            out.append(
                row(
                    SUITE,
                    "doctor --deep (every row re-hashed, full-text indexes token by token)",
                    n=n,
                    ours=t,
                    target="report",
                )
            )
            out.append(_repair_lock(store, n))
            rows = _batch(store, batch_n, seed=99)
            replay = min(_rolled_back(store, lambda c: bulk_insert(c, rows)) for _ in range(3))
            rebuilt = min(_rolled_back(store, _via_rebuild(store, rows)) for _ in range(3))
            out.append(
                row(
                    SUITE,
                    f"batch of {batch_n}: insert + derived.rebuild of its sessions",
                    n=n,
                    ours=rebuilt,
                    peer=replay,
                    peer_name="bulk.py Python replay",
                    target="as fast as the replay to replace it",
                    ok=rebuilt <= replay,
                )
            )
            ids = [
                r[0]
                for r in context_of(store).db.query(
                    "SELECT lower(hex(id)) FROM journal_entries ORDER BY seq DESC LIMIT 5"
                )
            ]
            samples = []
            for eid in ids[:3]:
                start = time.perf_counter()
                store.journal.forget(eid)
                samples.append(time.perf_counter() - start)
            out.append(
                row(
                    SUITE,
                    "forget one entry (rows, full-text index merged until its tokens are"
                    " gone, secure_delete, WAL checkpoint)",
                    n=n,
                    ours=sorted(samples)[len(samples) // 2],
                    target="report",
                )
            )
            out.append(_scrub_alone(store, n))
            t = _append_time(store)
            out.append(
                row(
                    SUITE,
                    "single append with commit (CHECKs + list trigger)",
                    n=n,
                    ours=t,
                    target="within 10% of before (bench journal)",
                )
            )
            context_of(store).db.conn.execute("PRAGMA secure_delete=OFF")
            try:
                bare = _append_time(store)
            finally:
                context_of(store).db.conn.execute("PRAGMA secure_delete=ON")
            out.append(
                row(
                    SUITE,
                    "single append with commit, secure_delete on (every connection)",
                    n=n,
                    ours=t,
                    limit=bare,
                    limit_name="the same append with secure_delete off",
                    target="report",
                )
            )
        finally:
            store.close()
    return out
