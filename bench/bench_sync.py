"""More than one machine (recall_sqlite/sync/), with the real Litestream 0.5.17 on a file
replica: what a crash loses (the loss window), what replication costs an append, the WAL
it leaves after a burst, and the merge of a large union. synapt 0.30.0 has no sync: there is
no peer; each row names the limit it is measured against."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _util import HandWriter, assert_same_heads, copy_counts, median_time, row

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "recall_sqlite.cli"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "RECALL_SQLITE_"))}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return env


def _clone(base: Path, name: str) -> Path:
    root = base / name
    root.mkdir(parents=True)
    for args in (["init", "-q"], ["remote", "add", "origin", "git@example.com:bench/sync.git"]):
        subprocess.run(["git", *args], cwd=root, env=_env(), check=True, capture_output=True)
    return root


def _cli(root: Path, *args: str) -> Any:
    done = subprocess.run(
        [*CLI, *args, "--json"], cwd=root, env=_env(), capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def _start(root: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [*CLI, "sync", "run", "--pull-every", "3600"],
        cwd=root,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = _cli(root, "sync", "status", "--no-count")
        if status["running"] and status["position"] is not None:
            return proc
        time.sleep(0.1)
    raise RuntimeError("sync run did not start replicating")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)


def _entry(i: int, ts: str) -> dict[str, Any]:
    return {"timestamp": ts, "session_id": f"s{i}", "focus": f"entry {i} of the bench"}


_WRITER = """
import sys, time
from datetime import datetime, timezone
from recall_sqlite.store import context_of
from recall_sqlite import open_store
s = open_store(sys.argv[1])
i = 0
while True:
    s.journal.append({"timestamp": datetime.now(timezone.utc).isoformat(),
                      "session_id": f"w{i}", "focus": f"write {i}"})
    i += 1
    time.sleep(0.005)
"""


def loss_window(trials: int) -> list[float]:
    """kill -9 of the writer and of `sync run` (with its Litestream) together after a few
    seconds of commits every 5 ms; the restore's newest entry against the newest the
    killed machine had committed."""
    from recall_sqlite import open_store

    losses = []
    for t in range(trials):
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp)
            root = _clone(base, "dies")
            _cli(root, "sync", "init", "--url", str(base / "replicas"))
            with open_store(root) as s:
                s.journal.append(_entry(0, "2026-01-01T00:00:00+00:00"))
            run = _start(root)
            writer = subprocess.Popen(
                [sys.executable, "-c", _WRITER, str(root)], env=_env(), start_new_session=True
            )
            time.sleep(2.0 + 0.37 * t)
            os.killpg(writer.pid, signal.SIGKILL)
            os.killpg(run.pid, signal.SIGKILL)
            writer.wait()
            run.wait()
            with open_store(root, read_only=True) as s:
                local = max(e.timestamp for e in s.journal.versions(all_worktrees=True))
            fresh = _clone(base, "rebuilt")
            _cli(fresh, "sync", "restore", "--url", str(base / "replicas"))
            with open_store(fresh, read_only=True) as s:
                restored = max(e.timestamp for e in s.journal.versions(all_worktrees=True))
            from recall_sqlite.timestamps import parse_timestamp

            losses.append((parse_timestamp(local) - parse_timestamp(restored)) / 1e6)
    return losses


def append_cost(n_before: int) -> tuple[float, float, float, float, float]:
    """Median append with and without `sync run` on the same store; the WAL's largest size
    during a burst of 5,000 appends with replication, right after it, and 10 s later."""
    from recall_sqlite import open_store

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root = _clone(base, "writer")
        _cli(root, "sync", "init", "--url", str(base / "replicas"))
        counter = iter(range(10**9))
        with open_store(root) as s:
            s.journal.append_many([_entry(i, _ts(i)) for i in range(n_before)])

            def one() -> None:
                i = next(counter)
                s.journal.append(_entry(10**6 + i, "2026-02-01T00:00:00+00:00"))

            alone = median_time(one, repeat=9, min_time=0.3)
            run = _start(root)
            try:
                with_sync = median_time(one, repeat=9, min_time=0.3)
                wal = Path(f"{s.workspace.db_path}-wal")
                peak = 0
                for _ in range(5000):
                    one()
                    peak = max(peak, wal.stat().st_size)
                burst = wal.stat().st_size
                time.sleep(10)
                later = wal.stat().st_size
            finally:
                _stop(run)
    return alone, with_sync, peak, burst, later


def peer_seen(trials: int) -> list[float]:
    """Two machines with `sync run` (the pull timer at an hour) on one file replica
    location: from an append on one until a read on the other returns it."""
    from recall_sqlite import open_store

    seen = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        roots = [_clone(base, name) for name in ("a", "b")]
        for root in roots:
            _cli(root, "sync", "init", "--url", str(base / "replicas"))
        runs = [_start(root) for root in roots]
        try:
            for t in range(trials):
                focus = f"seen elsewhere {t}"
                with open_store(roots[0]) as s:
                    s.journal.append(_entry(t, "2026-04-01T00:00:00+00:00") | {"focus": focus})
                began = time.monotonic()
                while time.monotonic() - began < 120:
                    with open_store(roots[1], read_only=True) as s:
                        if any(e.focus == focus for e in s.journal.versions(all_worktrees=True)):
                            break
                    time.sleep(0.05)
                seen.append(time.monotonic() - began)
                time.sleep(1.0 + 0.7 * (t % 3))  # not in step with anything periodic
        finally:
            for proc in runs:
                _stop(proc)
    return seen


def merge_union(half: int) -> tuple[float, float, float, float, float]:
    """A holds `half` entries, B the same and `half` more (a 2 x half union): B's file
    merged into A. Against two floors: the bare copy of the missing rows (INSERT ... SELECT
    from the attached file, no checks, no derived state, into a table with no index), and
    the same rows as the merge stored them (already validated, with their seqs and head
    flags) inserted by hand-written SQL into the real schema, nothing of ours: one
    transaction, the head trigger stood aside as any batch writer does (journal_bulk), the
    13 indexes, the list and tombstone checks, and the search index in one statement.
    Also the identity floor: json + hashlib over the new rows' content, nothing else; and
    the same work as the merge's write by hand (_same_work_insert)."""
    import apsw

    from recall_sqlite import open_store
    from recall_sqlite.store import context_of
    from recall_sqlite.sync import peers
    from recall_sqlite.sync.peers import PeerBook
    from recall_sqlite.sync.pull import merge_file

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        a_db, b_db = base / "a.db", base / "b.db"
        rows = [_entry(i, _ts(i)) for i in range(2 * half)]
        for path, batch in ((a_db, rows[:half]), (b_db, rows)):
            (base / path.stem).mkdir()
            with open_store(root=base / path.stem, db_path=path) as s:
                peers.set_sync_key(context_of(s), "bench")
                for i in range(0, len(batch), 5000):
                    s.journal.append_many(batch[i : i + 5000])
        shutil.copy(a_db, base / "bare.db")
        shutil.copy(a_db, base / "floor.db")
        shutil.copy(a_db, base / "same.db")
        bare = apsw.Connection(str(base / "bare.db"))
        start = time.perf_counter()
        bare.execute(f"ATTACH '{b_db}' AS peer")
        bare.execute(
            "CREATE TABLE copied AS SELECT * FROM peer.journal_entries"
            " WHERE id NOT IN (SELECT id FROM main.journal_entries)"
        )
        limit = time.perf_counter() - start
        bare.close()
        (before,) = apsw.Connection(str(a_db)).execute("SELECT max(seq) FROM journal_entries")
        with open_store(root=base / "a", db_path=a_db) as s:
            book = PeerBook(base / "peers.json")
            start = time.perf_counter()
            report = merge_file(context_of(s), b_db, book, machine="b" * 16)
            ours = time.perf_counter() - start
            assert report.entries == half, report
        floor = _floor_insert(a_db, base / "floor.db", before[0])
        same = _same_work_insert(a_db, base / "same.db", before[0])
        identity = _identity_floor(b_db, half)
    return ours, limit, floor, identity, same


def _floor_target(target: Path, merged: Path) -> Any:
    """A connection to `target` for a floor by hand, with the settings every connection of
    the store has (db.py: the page cache above all, without which the 13 indexes' pages are
    read and written again and again), `merged` attached as `src`."""
    import apsw

    conn = apsw.Connection(str(target))
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA cache_size=-65536")
    conn.execute("PRAGMA secure_delete=ON")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("ATTACH ? AS src", (str(merged),))
    return conn


def _floor_insert(merged: Path, target: Path, after: int) -> float:
    """The rows `merged` stored after seq `after` (as the merge stored them) written into
    `target` (the store before the merge) by hand-written SQL, one INSERT ... SELECT from
    the attached file per transaction; the time of the writing."""

    from recall_sqlite.sync.merge import WRITE_ROWS

    conn = _floor_target(target, merged)
    cols = ", ".join(str(r[1]) for r in conn.execute("PRAGMA main.table_info(journal_entries)"))
    (top,) = conn.execute("SELECT max(seq) FROM src.journal_entries").fetchall()[0]
    start = time.perf_counter()
    # In the merge's own transactions (merge.WRITE_ROWS rows each: the lock is never held
    # for a whole pull), each of them one INSERT ... SELECT and its search index.
    for low in range(after, int(top), WRITE_ROWS):
        high = min(low + WRITE_ROWS, int(top))
        with conn:
            conn.execute(
                "INSERT INTO journal_bulk (workspace_id)"
                " SELECT DISTINCT workspace_id FROM src.journal_entries WHERE seq > ?",
                (after,),
            )
            conn.execute(
                f"INSERT INTO main.journal_entries ({cols}) SELECT {cols}"
                " FROM src.journal_entries WHERE seq > ? AND seq <= ? ORDER BY seq",
                (low, high),
            )
            conn.execute(
                "INSERT INTO journal_fts (rowid, focus, done, decisions, next_steps,"
                " files_modified) SELECT seq, focus, done, decisions, next_steps,"
                " files_modified FROM journal_fts_content WHERE seq > ? AND seq <= ?",
                (low, high),
            )
            conn.execute("DELETE FROM journal_bulk")
    copy_counts(conn)
    took = time.perf_counter() - start
    conn.close()
    return took


def _same_work_insert(merged: Path, target: Path, after: int) -> float:
    """The merge's work after the proof, by hand-written SQL, nothing of ours: the rows
    `merged` stored after seq `after` read into Python (a merge holds each arriving row to
    prove it), then per transaction of merge.WRITE_ROWS rows bound into a stage, their
    heads computed by SQL and the stored heads they beat demoted, moved into the journal,
    indexed for search (_util.HandWriter); the time of the reading and the writing."""

    from recall_sqlite.sync.merge import WRITE_ROWS

    conn = _floor_target(target, merged)
    hand = HandWriter(conn)
    start = time.perf_counter()
    rows = conn.execute(
        f"SELECT {', '.join(hand.plain)} FROM src.journal_entries WHERE seq > ? ORDER BY seq",
        (after,),
    ).fetchall()
    for at in range(0, len(rows), WRITE_ROWS):
        batch = rows[at : at + WRITE_ROWS]
        with conn:
            conn.execute("INSERT INTO journal_bulk (workspace_id) VALUES (1)")
            hand.write(batch, after + at, after + at + len(batch))
            conn.execute("DELETE FROM journal_bulk")
    copy_counts(conn)
    took = time.perf_counter() - start
    assert_same_heads(conn)
    conn.close()
    return took


def _identity_floor(peer: Path, n: int) -> float:
    """json + hashlib alone over the content of the peer's newest `n` rows: what proving
    each arriving version's id costs at least (the canonical JSON rebuilt from the decoded
    fields and hashed), with no validation and nothing of ours."""
    import hashlib

    import apsw

    conn = apsw.Connection(str(peer), flags=apsw.SQLITE_OPEN_READONLY)
    rows: list[Any] = conn.execute(
        "SELECT timestamp, session_id, branch, focus, done, decisions, next_steps,"
        " files_modified, git_log FROM journal_entries ORDER BY seq DESC LIMIT ?",
        (n,),
    ).fetchall()
    conn.close()
    names = ("timestamp", "session_id", "branch", "focus")
    lists = ("done", "decisions", "next_steps", "files_modified", "git_log")
    dumps, loads, sha = json.dumps, json.loads, hashlib.sha256
    start = time.perf_counter()
    for r in rows:
        fields: dict[str, Any] = dict(zip(names, r[:4], strict=True))
        for name, value in zip(lists, r[4:], strict=True):
            fields[name] = loads(value)
        sha(dumps(fields, sort_keys=True, separators=(",", ":")).encode()).digest()
    return time.perf_counter() - start


def _ts(i: int) -> str:
    day, hour = 1 + i // 86400 % 28, i // 3600 % 24
    return f"2026-03-{day:02d}T{hour:02d}:{i // 60 % 60:02d}:{i % 60:02d}+00:00"


def run(quick: bool) -> list[dict[str, Any]]:
    import statistics

    rows = []
    losses = loss_window(1 if quick else 7)
    rows.append(
        row(
            "sync",
            "loss window: kill -9 of writer and Litestream, then restore (median)",
            n=len(losses),
            ours=statistics.median(losses),
            limit=0.25,
            limit_name="Litestream's sync interval, as generated",
            target="<= 0.5 s median",
            ok=statistics.median(losses) <= 0.5,
            losses=losses,
        )
    )
    seen = peer_seen(1 if quick else 9)
    rows.append(
        row(
            "sync",
            "a peer's write read on this machine, both running sync run (median)",
            n=len(seen),
            ours=statistics.median(seen),
            limit=30.0,
            limit_name="the pull timer's default period (--pull-every)",
            target="<= 2 s median",
            ok=statistics.median(seen) <= 2.0,
            seen=seen,
        )
    )
    alone, with_sync, peak, burst, later = append_cost(200 if quick else 10_000)
    rows.append(
        row(
            "sync",
            "append with `sync run` replicating",
            n=10_000,
            ours=with_sync,
            limit=alone,
            limit_name="the same append without sync run",
            target="<= 1.2x",
            ok=with_sync / alone <= 1.2,
        )
    )
    rows.append(
        row(
            "sync",
            "WAL's largest size during a 5,000-append burst with sync run",
            n=5000,
            ours=peak / 1024,
            unit="KiB",
            target="goal < 32 MiB",
            ok=peak < 32 * 2**20,
        )
    )
    rows.append(
        row(
            "sync",
            "WAL right after a 5,000-append burst with sync run",
            n=5000,
            ours=burst / 1024,
            unit="KiB",
            target="goal < 8 MiB",
            ok=burst < 8 * 2**20,
        )
    )
    rows.append(
        row(
            "sync",
            "the same WAL 10 s later",
            n=5000,
            ours=later / 1024,
            unit="KiB",
            target="goal < 8 MiB",
            ok=later < 8 * 2**20,
        )
    )
    half = 500 if quick else 50_000
    ours, bare, floor, identity, same = merge_union(half)
    whole = same + identity
    rows.append(
        row(
            "sync",
            f"merge of a {2 * half:,}-entry union (half new)",
            n=2 * half,
            ours=ours,
            limit=whole,
            limit_name="the same work by hand: the new rows read into Python and proven"
            " (json + hashlib), bound into the real schema, heads by SQL",
            target="<= 1 s at 100k, or <= 1.3x the same work by hand",
            ok=(ours <= 1.0 or ours <= 1.3 * whole) if not quick else None,
            # Its parts: the write with the rows read (_same_work_insert) and the proof
            # (json + hashlib alone over the new rows); the new rows copied by SQL from
            # the merged file with their heads given (the limit of the last round), and
            # into a table without indexes (of earlier rounds).
            same_work_write=same,
            identity_floor=identity,
            sql_copy_floor=floor,
            vs_sql_copy_and_identity=ours / (floor + identity),
            bare_copy=bare,
        )
    )
    return rows
