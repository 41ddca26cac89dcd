"""Search benchmarks: a two-word query through `Journal.search` against a bare FTS5 MATCH
on the same index (the limit) and against a Python scan of the JSONL bucket for the words
(what a synapt user does today); the index's size beside the journal's; and what the index
costs a legacy import.

Two queries, because the answer depends on how many entries match: a rare pair (planted in
20 entries whatever the size: a question about one topic) and a common pair (two words of
the Zipf head, matching a fixed share of the entries, so its work grows with the journal).
"""

from __future__ import annotations

import itertools
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import apsw  # noqa: E402
from _util import fill_store, median_time, ratio_row, row  # noqa: E402

from recall_sqlite import open_store  # noqa: E402
from recall_sqlite.store import context_of  # noqa: E402

SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "zi", "pa", "do", "fe", "gu", "hi")
RARE = ("websocket", "gateway")
PLANTED = 20
BARE = "SELECT rowid FROM journal_fts WHERE journal_fts MATCH ? ORDER BY rank LIMIT 10"


def _rows_by_seq(conn: Any, seqs: list[int]) -> list[Any]:
    """The entry rows of `seqs` (in seq order), as the store selects them."""
    from recall_sqlite.journal.journal import ENTRY_COLUMNS

    rows: list[Any] = conn.execute(
        f"SELECT {ENTRY_COLUMNS} FROM journal_entries WHERE seq IN ({','.join('?' * len(seqs))})",
        seqs,
    ).fetchall()
    return rows


def _bare_with_entries(store: Any, conn: Any, match: str) -> list[Any]:
    """The bare query, then what any search that returns entries must add: the ten rows
    it names, fetched by seq and decoded into JournalEntries (no scope, no heads)."""
    seqs = [s for (s,) in conn.execute(BARE, (match,)).fetchall()]
    entries: list[Any] = store.journal.host.entries(_rows_by_seq(conn, seqs))
    return entries


# The least any answer in scope can be: the matches joined to the index of shown versions
# (the full-text index holds every version of every worktree), the best ten in scope, then
# their entries, in one read transaction. No counts, no categories, no Python of ours.
FLOOR = (
    "SELECT e.seq FROM journal_fts f CROSS JOIN journal_entries e"
    " INDEXED BY journal_heads_by_seq ON e.seq = f.rowid"
    " WHERE journal_fts MATCH ? AND e.workspace_id = ? AND e.head_wt = 1 AND e.worktree_id = ?"
    " ORDER BY f.rank, e.ts_us DESC, e.sid_order LIMIT 10"
)


def _scoped_floor(store: Any, conn: Any, match: str, ws: int, wt: int) -> list[Any]:
    """FLOOR by hand, then the rows it names decoded as _bare_with_entries does, in the
    ranking's order."""
    conn.execute("BEGIN")
    try:
        seqs = [s for (s,) in conn.execute(FLOOR, (match, ws, wt)).fetchall()]
        rows = _rows_by_seq(conn, seqs)
    finally:
        conn.execute("COMMIT")
    # The IN list comes back in seq order; the answer is in the ranking's.
    by_seq = dict(zip((r[0] for r in rows), store.journal.host.entries(rows), strict=True))
    return [by_seq[s] for s in seqs]


def _vocab(size: int = 6000) -> list[str]:
    words = ["".join(p) for k in (2, 3, 4) for p in itertools.product(SYLLABLES, repeat=k)]
    return [w for w in words if w not in RARE][:size]


VOCAB = _vocab()
COMMON = (VOCAB[8], VOCAB[21])
_CUM = list(itertools.accumulate(1.0 / (r + 1) ** 1.07 for r in range(len(VOCAB))))


def _text(rng: random.Random, k: int) -> str:
    return " ".join(rng.choices(VOCAB, cum_weights=_CUM, k=k))


def make_entries(n: int, seed: int = 11) -> list[dict[str, Any]]:
    """n entries shaped like bench_journal's (~600 bytes of JSON), with a Zipf vocabulary;
    RARE appears together in PLANTED of them, each word alone in as many again."""
    rng = random.Random(seed)
    plant = set(range(n // (PLANTED + 1), n, max(1, n // (PLANTED + 1))))
    out: list[dict[str, Any]] = []
    for i in range(n):
        focus = _text(rng, 10)
        if i in plant:
            focus = f"{focus} {RARE[0]} {RARE[1]}"
        elif (i + 7) in plant:
            focus = f"{focus} {RARE[i % 2]}"
        out.append(
            {
                "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1_700_000_000 + i * 60))
                + "+00:00",
                "session_id": f"{i:08x}-5e55",
                "branch": ("main", "feat")[i % 2],
                "focus": focus,
                "done": [_text(rng, 7) for _ in range(rng.randint(1, 3))],
                "decisions": [_text(rng, 9)],
                "next_steps": [_text(rng, 6) for _ in range(rng.randint(1, 2))],
                "files_modified": [f"src/{_text(rng, 1)}/{_text(rng, 1)}.py" for _ in range(3)],
                "git_log": [f"{rng.getrandbits(28):07x} {_text(rng, 5)}" for _ in range(2)],
            }
        )
    return out


def build(root: Path, n: int) -> tuple[Path, Path]:
    db, bucket = fill_store(root, make_entries(n), jsonl=True)
    assert bucket is not None
    return db, bucket


def scan(bucket: Path, words: tuple[str, ...]) -> list[dict[str, Any]]:
    """A synapt user's search today: parse every line, keep the entries holding the words."""
    found = []
    with open(bucket, encoding="utf-8") as f:
        for line in f:
            e = json.loads(line)
            text = " ".join(
                [e.get("focus", "")]
                + [
                    x
                    for k in ("done", "decisions", "next_steps", "files_modified")
                    for x in e.get(k, [])
                ]
            ).lower()
            toks = set(text.replace("/", " ").replace(".", " ").split())
            if all(w in toks for w in words):
                found.append(e)
    found.sort(key=lambda e: e["timestamp"], reverse=True)
    return found[:10]


def bench_queries(tmp: Path, sizes: list[int], peer_max: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    by_size: dict[tuple[str, int], float] = {}
    for n in sizes:
        root = tmp / f"q{n}"
        db, bucket = build(root, n)
        bare_conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        # One workspace and one worktree here: the scope's keys, read by hand.
        ws, wt = bare_conn.execute(
            "SELECT workspace_id, worktree_id FROM journal_entries LIMIT 1"
        ).fetchone()
        with open_store(root) as s:
            for label, words in (("rare", RARE), ("common", COMMON)):
                q = " ".join(words)
                match = " ".join(f'"{w}"' for w in words)
                got = s.journal.search(q)
                ours = median_time(lambda q=q: s.journal.search(q), repeat=9, min_time=0.05)
                bare = median_time(
                    lambda m=match, c=bare_conn: c.execute(BARE, (m,)).fetchall(),
                    repeat=9,
                    min_time=0.05,
                )
                with_entries = median_time(
                    lambda m=match, c=bare_conn: _bare_with_entries(s, c, m),
                    repeat=9,
                    min_time=0.05,
                )
                floor = median_time(
                    lambda m=match, c=bare_conn, k=(ws, wt): _scoped_floor(s, c, m, *k),
                    repeat=9,
                    min_time=0.05,
                )
                floored = _scoped_floor(s, bare_conn, match, ws, wt)
                assert [e.id for e in floored] == [h.entry.id for h in got.hits], label
                peer = None
                if n <= peer_max:
                    peer = median_time(
                        lambda w=words, f=bucket: scan(f, w), repeat=3 if n >= 100_000 else 5
                    )
                by_size[(label, n)] = ours
                rows.append(
                    row(
                        "search",
                        f"journal search, two words ({label}: {got.total} matches)",
                        n=n,
                        ours=ours,
                        limit=bare,
                        limit_name="bare FTS5 MATCH ORDER BY rank LIMIT 10",
                        peer=peer,
                        peer_name="Python scan of the JSONL",
                        target="<= 1.5x limit" + ("; >= 100x scan" if n == 100_000 else ""),
                        ok=(ours <= 1.5 * bare)
                        and (peer is None or n != 100_000 or peer >= 100 * ours),
                        matches=got.total,
                        bare_with_entries=with_entries,
                        ratio_vs_bare_with_entries=ours / with_entries,
                        scoped_floor=floor,
                        scoped_floor_vs_bare=floor / bare,
                        ratio_vs_scoped_floor=ours / floor,
                    )
                )
        bare_conn.close()
    lo, hi = min(sizes), max(sizes)
    for label in ("rare", "common"):
        ratio = by_size[(label, hi)] / by_size[(label, lo)]
        rows.append(
            ratio_row(
                "search",
                f"time at {hi:,} / time at {lo:,} ({label} pair)",
                n=hi,
                ratio=ratio,
                most=5,
            )
        )
    return rows


def bench_size(tmp: Path, n: int) -> list[dict[str, Any]]:
    root = tmp / "size"
    db, _ = build(root, n)
    conn = apsw.Connection(str(db))
    conn.execute("VACUUM")
    sizes = dict(
        conn.execute(
            "SELECT CASE WHEN d.name LIKE 'journal_fts%' THEN 'fts'"
            " WHEN m.tbl_name IN ('journal_entries', 'journal_counts_wt', 'journal_counts_ws')"
            " THEN 'journal' ELSE 'other' END AS part, sum(d.pgsize)"
            " FROM dbstat d JOIN sqlite_schema m ON m.name = d.name GROUP BY part"
        ).fetchall()
    )
    conn.close()
    ratio = sizes["fts"] / sizes["journal"]
    return [
        row(
            "search",
            "entry index bytes / journal bytes (table + indexes)",
            n=n,
            ours=ratio,
            unit="ratio",
            fts_bytes=sizes["fts"],
            journal_bytes=sizes["journal"],
            target="<= 0.40",
            ok=ratio <= 0.40,
        )
    ]


def _import(root: Path, db: Path, *, index: bool) -> float:
    """One import of the bucket; without `index`, no full-text indexing at all: the row
    trigger dropped and the bulk path's batch statement (journal/bulk.py) made a no-op."""
    import recall_sqlite.journal.bulk as bulk

    batch_sql = bulk._INDEX_SQL
    with open_store(root, db_path=db) as s:
        if not index:
            context_of(s).db.conn.execute("DROP TRIGGER journal_fts_after_insert")
            bulk._INDEX_SQL = "SELECT ?1, ?2 WHERE 0"
        try:
            start = time.perf_counter()
            s.legacy.import_paths([root])
            return time.perf_counter() - start
        finally:
            bulk._INDEX_SQL = batch_sql


def bench_import(tmp: Path, n: int, repeat: int) -> list[dict[str, Any]]:
    root = tmp / "imp" / "proj"
    bucket = root / ".synapt" / "recall" / "worktrees" / "proj" / "journal.jsonl"
    bucket.parent.mkdir(parents=True)
    (root / ".grip").mkdir()
    with open(bucket, "w", encoding="utf-8") as f:
        for e in make_entries(n, seed=5):
            f.write(json.dumps(e) + "\n")
    with_index, without = [], []
    for i in range(repeat):
        without.append(_import(root, tmp / "imp" / f"plain{i}.db", index=False))
        with_index.append(_import(root, tmp / "imp" / f"fts{i}.db", index=True))
    ours, base = sorted(with_index)[repeat // 2], sorted(without)[repeat // 2]
    return [
        row(
            "search",
            "legacy import with the search index",
            n=n,
            ours=ours,
            limit=base,
            limit_name="the same import, no full-text indexing",
            target="<= 1.25x limit",
            ok=ours <= 1.25 * base,
        )
    ]


def run(quick: bool) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="recall-bench-") as d:
        tmp = Path(d)
        sizes = [1_000, 4_000] if quick else [10_000, 100_000, 1_000_000]
        rows = bench_queries(tmp, sizes, peer_max=4_000 if quick else 1_000_000)
        rows += bench_size(tmp, 1_000 if quick else 100_000)
        rows += bench_import(tmp, 2_000 if quick else 1_000_000, 3 if quick else 1)
    return rows


if __name__ == "__main__":
    print(json.dumps(run("--quick" in sys.argv), indent=2))
