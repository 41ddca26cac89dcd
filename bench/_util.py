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
