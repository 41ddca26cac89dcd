"""Where a pull's new entry versions are written faster row by row (the schema's trigger)
and where through journal/bulk.py, per batch size: the measurement behind
recall_sqlite/sync/merge_rows.py's thresholds (bench/RESULTS.md, row 'merge: row or bulk
path').

`python bench/merge_paths.py [--entries 50000] [--repeat 15] [--append]`: a store of `--entries`
entries, each its own session; batches of new versions written in one write transaction
and rolled back, the two paths in turn (alternating which goes first), medians. Two kinds
of batch: versions that start sessions (`fresh`), and versions each added to a session
the store holds, beating its head (`held`)."""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SIZES = {
    "fresh": (1, 2, 4, 8, 16, 32, 64, 128, 256, 1024),
    "held": (1, 2, 4, 8, 16, 32, 64, 256, 1024, 4096),
}


def _ts(i: int) -> str:
    """A second of its own for each stored entry (as a journal's entries are spread)."""
    day, hour = 1 + i // 86400 % 28, i // 3600 % 24
    return f"2026-03-{day:02d}T{hour:02d}:{i // 60 % 60:02d}:{i % 60:02d}+00:00"


def _fill(store: Any, entries: int) -> None:
    """`entries` entries, each its own session, appended as bench_sync.py's merge row
    builds its stores (5,000 a call)."""
    for at in range(0, entries, 5000):
        store.journal.append_many(
            [
                {"timestamp": _ts(i), "session_id": f"s{i}", "focus": f"entry {i}"}
                for i in range(at, min(at + 5000, entries))
            ]
        )


class _Undo(Exception):
    """Raised inside the write to roll the batch back."""


def measure(entries: int, repeat: int) -> dict[str, list[tuple[int, float, float]]]:
    from recall_sqlite import open_store
    from recall_sqlite.journal.entry import JournalEntry
    from recall_sqlite.store import context_of
    from recall_sqlite.sync import merge_rows

    out: dict[str, list[tuple[int, float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # Built, then opened again.
        with open_store(root=root, db_path=root / "recall.db") as s:
            _fill(s, entries)
        with open_store(root=root, db_path=root / "recall.db") as s:
            ctx = context_of(s)
            ws, wt = ctx.workspace_pk, ctx.worktree_pk

            def batch(kind: str, n: int, k: int) -> list[tuple[Any, ...]]:
                rows = []
                for i in range(n):
                    sid = f"s{(i * 997 + k) % entries}" if kind == "held" else f"t{k}-{i}"
                    e = JournalEntry.from_mapping(
                        {
                            "timestamp": f"2026-05-01T00:{i // 60 % 60:02d}:{i % 60:02d}+00:00",
                            "session_id": sid,
                            "focus": f"path {k} {i}",
                        }
                    )
                    rid, content = e.encode()
                    rows.append((rid, ws, wt, 1, *content))
                return rows

            for kind, sizes in SIZES.items():
                out[kind] = []
                for n in sizes:
                    times: dict[bool, list[float]] = {False: [], True: []}
                    for k in range(repeat):
                        for bulk in (False, True) if k % 2 else (True, False):
                            rows = batch(kind, n, 2 * k + bulk)
                            merge_rows.BULK_MIN_ROWS = 0 if bulk else 10**9
                            try:
                                with ctx.db.write() as conn:
                                    start = time.perf_counter()
                                    merge_rows.store_versions(conn, rows)
                                    times[bulk].append(time.perf_counter() - start)
                                    raise _Undo
                            except _Undo:
                                pass
                    row, bulk_ = (statistics.median(times[b]) for b in (False, True))
                    out[kind].append((n, row, bulk_))
                    print(
                        f"{kind:5s} n={n:5d}  row {row * 1e3:8.2f} ms  bulk {bulk_ * 1e3:8.2f} ms"
                        f"  bulk/row {bulk_ / row:.2f}",
                        flush=True,
                    )
    return out


def measure_append(entries: int, repeat: int) -> dict[str, list[tuple[int, float, float]]]:
    """The same two kinds of batch through `journal.append_many` (each committed), whose
    own threshold (journal/journal.py's BULK_MIN_ROWS) chooses between the same paths."""
    from recall_sqlite import open_store
    from recall_sqlite.journal import journal

    out: dict[str, list[tuple[int, float, float]]] = {}
    with (
        tempfile.TemporaryDirectory() as tmp,
        open_store(root=Path(tmp), db_path=Path(tmp) / "recall.db") as s,
    ):
        _fill(s, entries)
        k = 0
        for kind in ("fresh", "held"):
            out[kind] = []
            for n in (1, 2, 3, 4, 8, 16, 32):
                times: dict[bool, list[float]] = {False: [], True: []}
                for r in range(repeat):
                    for bulk in (False, True) if r % 2 else (True, False):
                        k += 1
                        batch = [
                            {
                                "timestamp": _ts(entries + i),
                                "session_id": (
                                    f"s{(i * 997 + k) % entries}" if kind == "held" else f"t{k}-{i}"
                                ),
                                "focus": f"append {k} {i}",
                            }
                            for i in range(n)
                        ]
                        journal.BULK_MIN_ROWS = 0 if bulk else 10**9
                        start = time.perf_counter()
                        s.journal.append_many(batch)
                        times[bulk].append(time.perf_counter() - start)
                row, bulk_ = (statistics.median(times[b]) for b in (False, True))
                out[kind].append((n, row, bulk_))
                print(
                    f"append {kind:5s} n={n:3d}  row {row * 1e3:7.2f} ms"
                    f"  bulk {bulk_ * 1e3:7.2f} ms  bulk/row {bulk_ / row:.2f}",
                    flush=True,
                )
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument(
        "--append", action="store_true", help="journal.append_many's threshold instead"
    )
    args = parser.parse_args(argv)
    (measure_append if args.append else measure)(args.entries, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
