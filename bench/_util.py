"""Timing helpers shared by the benchmark suites: medians over repeated runs, never means."""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# The vocabulary of the suites' made-up text (foci, decisions, file names, commit lines).
WORDS = (
    "store",
    "journal",
    "cursor",
    "vector",
    "import",
    "bucket",
    "session",
    "schema",
    "index",
    "branch",
    "worktree",
    "summary",
    "query",
    "refactor",
    "test",
    "bench",
)


def sentence(rng: random.Random, words: int, vocabulary: Sequence[str] = WORDS) -> str:
    """`words` words drawn by `rng` from `vocabulary`, joined by spaces."""
    return " ".join(rng.choice(vocabulary) for _ in range(words))


def median_time(
    fn: Callable[[], Any], *, repeat: int = 7, warmup: int = 1, min_time: float = 0.0
) -> float:
    """Median wall time of fn() in seconds. With min_time, each sample loops fn until it has
    run that long and divides (for operations in the microseconds)."""
    for _ in range(warmup):
        fn()
    samples: list[float] = []
    for _ in range(repeat):
        loops = 0
        start = time.perf_counter()
        while True:
            fn()
            loops += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_time:
                break
        samples.append(elapsed / loops)
    return statistics.median(samples)


def interleaved_calls(fns: dict[str, Callable[[], Any]], calls: int) -> dict[str, list[float]]:
    """Each fn's wall time per call, the calls taken in turn (a, b, a, b, ...): the state a
    write leaves behind changes what the next write costs (a store just built is slower
    for its first writes; a WAL checkpoint lands on whichever commit crosses its size), so
    neither fn gets the early calls or a run of checkpoints to itself."""
    samples: dict[str, list[float]] = {name: [] for name in fns}
    clock = time.perf_counter
    for _ in range(calls):
        for name, fn in fns.items():
            start = clock()
            fn()
            samples[name].append(clock() - start)
    return samples


def row(
    suite: str,
    case: str,
    *,
    n: int | None,
    ours: float,
    limit: float | None = None,
    limit_name: str = "",
    peer: float | None = None,
    peer_name: str = "",
    target: str = "",
    ok: bool | None = None,
    unit: str = "s",
    **extra: Any,
) -> dict[str, Any]:
    """One result row. Ratios are ours/limit and ours/peer (peer/ours is the speed-up)."""
    r: dict[str, Any] = {
        "suite": suite,
        "case": case,
        "n": n,
        "unit": unit,
        "ours": ours,
        "limit_name": limit_name,
        "limit": limit,
        "peer_name": peer_name,
        "peer": peer,
        "ratio_vs_limit": (ours / limit) if limit else None,
        "speedup_vs_peer": (peer / ours) if peer and ours else None,
        "target": target,
        "ok": ok,
    }
    r.update(extra)
    return r


def ratio_row(
    suite: str, case: str, *, n: int | None, ratio: float, most: float, **extra: Any
) -> dict[str, Any]:
    """A result row whose measure is a ratio (time at a size / time at another, say) that
    passes at `most` or below."""
    return row(
        suite, case, n=n, ours=ratio, unit="ratio", target=f"<= {most:g}", ok=ratio <= most, **extra
    )


def fill_store(
    root: Path, entries: list[dict[str, Any]], *, jsonl: bool
) -> tuple[Path, Path | None]:
    """A store at `root` holding `entries` (in batches, its WAL checkpointed into the file
    so a size or a cold read sees all of it) and, with jsonl, the same entries as synapt's
    bucket for root's name. (the database file, the bucket or None)"""
    from recall_sqlite import open_store
    from recall_sqlite.store import context_of

    (root / ".grip").mkdir(parents=True, exist_ok=True)
    with open_store(root) as s:
        for start in range(0, len(entries), 50_000):
            s.journal.append_many(entries[start : start + 50_000])
        context_of(s).db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db = Path(s.workspace.db_path)
    if not jsonl:
        return db, None
    bucket = root / ".synapt" / "recall" / "worktrees" / root.name / "journal.jsonl"
    bucket.parent.mkdir(parents=True, exist_ok=True)
    with open(bucket, "w", encoding="utf-8") as f:
        for e in entries:
            f.write(json.dumps(e) + "\n")
    return db, bucket


# synapt's dedup order of a session's versions, best first (non-auto, newest, richest,
# smallest id), written out for the hand-written writers below.
_DEDUP_SQL = "auto, ts_us DESC, rich DESC, id"


class HandWriter:
    """New journal rows written by hand-written SQL, nothing of recall-sqlite's: the floor of
    the bulk writers (import, merge). Each batch's rows (every column but the head flags,
    as Python tuples: what a writer holds once it has parsed or proven them) are bound into
    a TEMP stage; their head flags are computed by SQL, row_number() over synapt's dedup
    order per session and per worktree and session, the batch's rows with the stored heads
    of the sessions it touches; the stored heads the batch beats are demoted (one UPDATE per
    flag), the rows moved into the journal and given their full-text index. The caller
    holds the transaction and the journal_bulk row that stands the head trigger aside."""

    def __init__(self, conn: Any, workspace: int = 1) -> None:
        names = [str(r[1]) for r in conn.execute("PRAGMA main.table_info(journal_entries)")]
        self.plain = [n for n in names if n not in ("head_ws", "head_wt")]
        cols = ", ".join(self.plain)
        self.conn = conn
        conn.execute(f"CREATE TEMP TABLE hand_stage ({cols})")
        conn.execute("CREATE TEMP TABLE hand_flags (seq INTEGER PRIMARY KEY, hws, hwt)")
        self._stage = f"INSERT INTO temp.hand_stage VALUES ({', '.join('?' * len(self.plain))})"
        self._heads = (
            "INSERT INTO temp.hand_flags"
            " WITH cand AS ("
            "  SELECT seq, session_id AS sid, worktree_id AS wt, auto, ts_us, rich, id"
            "  FROM temp.hand_stage WHERE session_id <> ''"
            "  UNION ALL"
            "  SELECT e.seq, e.session_id, e.worktree_id, e.auto, e.ts_us, e.rich, e.id"
            "  FROM (SELECT DISTINCT session_id FROM temp.hand_stage WHERE session_id <> '') s"
            "  CROSS JOIN main.journal_entries e"
            f"  ON e.workspace_id = {int(workspace)} AND e.session_id = s.session_id"
            "  WHERE e.head_ws = 1 OR e.head_wt = 1)"
            f" SELECT seq, row_number() OVER (PARTITION BY sid ORDER BY {_DEDUP_SQL}) = 1,"
            f" row_number() OVER (PARTITION BY sid, wt ORDER BY {_DEDUP_SQL}) = 1 FROM cand"
        )
        self._move = (
            f"INSERT INTO main.journal_entries ({cols}, head_ws, head_wt)"
            f" SELECT {', '.join('s.' + c for c in self.plain)}, coalesce(f.hws, 1),"
            " coalesce(f.hwt, 1) FROM temp.hand_stage s LEFT JOIN temp.hand_flags f"
            " ON f.seq = s.seq ORDER BY s.seq"
        )

    def write(self, rows: list[Any], stored: int, top: int) -> None:
        """`rows`: self.plain's columns, the seqs above `stored` (the highest seq written
        before) up to `top`."""
        conn = self.conn
        conn.executemany(self._stage, rows)
        conn.execute(self._heads)
        for column, flag in (("head_ws", "hws"), ("head_wt", "hwt")):
            conn.execute(
                f"UPDATE main.journal_entries SET {column} = 0 WHERE seq IN"
                f" (SELECT seq FROM temp.hand_flags WHERE {flag} = 0 AND seq <= ?)"
                f" AND {column} = 1",
                (stored,),
            )
        conn.execute(self._move)
        conn.execute(
            "INSERT INTO journal_fts (rowid, focus, done, decisions, next_steps,"
            " files_modified) SELECT seq, focus, done, decisions, next_steps,"
            " files_modified FROM journal_fts_content WHERE seq > ? AND seq <= ?",
            (stored, top),
        )
        conn.execute("DELETE FROM temp.hand_stage")
        conn.execute("DELETE FROM temp.hand_flags")


def copy_counts(conn: Any) -> None:
    """The journal's counts of the attached `src` store written over this one's: a floor
    by hand writes them once at the end (the demotions' triggers wrote some meanwhile)."""
    with conn:
        conn.execute(
            "INSERT OR REPLACE INTO main.journal_counts_ws SELECT * FROM src.journal_counts_ws"
        )
        conn.execute(
            "INSERT OR REPLACE INTO main.journal_counts_wt SELECT * FROM src.journal_counts_wt"
        )


def assert_same_heads(conn: Any) -> None:
    """Every row of the attached `src` store's journal is in this one, with the same id and
    head flags: a floor by hand ended where ours did."""
    (same,) = conn.execute(
        "SELECT count(*) FROM main.journal_entries m JOIN src.journal_entries e USING (seq)"
        " WHERE m.head_ws = e.head_ws AND m.head_wt = e.head_wt AND m.id = e.id"
    ).fetchall()[0]
    (total,) = conn.execute("SELECT count(*) FROM src.journal_entries").fetchall()[0]
    assert same == total, (same, total)
