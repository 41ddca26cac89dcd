"""Summaries and cursors benchmarks (issue 3): `cursors.unread` of a consumer 50 entries
behind and `summaries.latest`, each against a bare hand-written apsw query on the same
database and connection, at two journal sizes (flatness: big / small <= 1.5).

    python bench/bench_summaries_cursors.py [--quick]      # prints JSON rows

Full: 10k and 1M entries. Quick: 200 and 2k.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import WORDS, median_time, ratio_row, row, sentence  # noqa: E402

from recall_sqlite import Store, open_store  # noqa: E402
from recall_sqlite.cursors import _UNREAD_SQL  # noqa: E402
from recall_sqlite.journal.codec import tie_key  # noqa: E402
from recall_sqlite.store import context_of
from recall_sqlite.summaries import CoverRange  # noqa: E402

SUITE = "summaries+cursors"
BRANCHES = ("main", "feature/a", "feature/b", "release")
BEHIND = 50
CONSUMER = "bench-consumer"
CHUNK = 20_000

_INSERT = (
    "INSERT INTO journal_entries (id, workspace_id, worktree_id, session_id, branch, timestamp,"
    " ts_us, focus, done, decisions, next_steps, files_modified, git_log, auto, enriched, repair,"
    " griptree, agent_id, extra, stored_us, rich, meaningful, sid_order)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)

# The bare queries: what a host would write by hand against the schema for the same answer.
BARE_UNREAD = (
    "SELECT seq, id, worktree_id, session_id, branch, timestamp, focus, done, decisions,"
    " next_steps, files_modified, git_log, auto, enriched, repair, griptree, agent_id, extra"
    " FROM journal_entries WHERE workspace_id = ?1 AND branch = ?2 AND head_ws = 1"
    " AND seq > (SELECT position FROM cursors"
    "             WHERE workspace_id = ?1 AND branch = ?2 AND consumer = ?3)"
    " ORDER BY seq"
)
BARE_LATEST = (
    "SELECT s.*,"
    " (SELECT count(*) FROM journal_entries e WHERE e.workspace_id = s.workspace_id"
    "   AND e.branch = s.branch AND e.seq > s.covered_seq AND e.head_ws = 1),"
    " (SELECT json_group_array(lower(hex(e.id))) FROM summary_sources ss"
    "   JOIN journal_entries e ON e.seq = ss.entry_seq WHERE ss.summary_id = s.id)"
    " FROM summaries s WHERE s.workspace_id = ? AND s.branch = ? AND s.kind = ?"
    " ORDER BY s.created_us DESC LIMIT 1"
)
BARE_LATEST_ROW = (
    "SELECT * FROM summaries WHERE workspace_id = ? AND branch = ? AND kind = ?"
    " ORDER BY created_us DESC LIMIT 1"
)
_LISTS = ((7, "done"), (8, "decisions"), (9, "next_steps"), (10, "files_modified"), (11, "git_log"))


class _Text:
    """Pre-made sentences and lists, so a 1M-row build spends its time in SQLite, not in
    the random module."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.pool = {w: [sentence(rng, w) for _ in range(257)] for w in (5, 6, 7, 8, 9, 10)}
        self.files = [
            json.dumps([f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py" for _ in range(3)])
            for _ in range(257)
        ]
        self.git = [
            json.dumps([f"{rng.getrandbits(28):07x} {sentence(rng, 5)}" for _ in range(3)])
            for _ in range(257)
        ]

    def sentence(self, words: int) -> str:
        return self.pool[words][self.rng.randrange(257)]

    def items(self, words: int, count: int) -> str:
        return json.dumps([self.sentence(words) for _ in range(count)])


def _rows(n: int, workspace_pk: int, worktree_pk: int, seed: int = 11) -> Iterator[tuple[Any, ...]]:
    """n journal rows shaped like bench_journal's (about 30% of sessions an auto stub followed
    by a manual version, 4 branches, ~600 bytes of text), built straight as INSERT tuples:
    the journal's validation and hashing would dominate a 1M build and are not measured."""
    rng = random.Random(seed)
    text = _Text(rng)
    base_us = 1_700_000_000 * 1_000_000
    made = session = 0
    while made < n:
        session += 1
        sid = f"{session:08x}-5e55-4b1d-9c0d-{rng.getrandbits(48):012x}"
        branch = BRANCHES[rng.randrange(4)]
        t = base_us + session * 60_000_000
        files, git_log = text.files[rng.randrange(257)], text.git[rng.randrange(257)]
        versions = []
        if rng.random() < 0.3:
            versions.append((t, text.sentence(8), "[]", "[]", "[]", 1, 1, 0))
        versions.append(
            (
                t + 30_000_000,
                text.sentence(10),
                text.items(7, rng.randint(1, 3)),
                text.items(9, 1),
                text.items(6, rng.randint(1, 3)),
                0,
                4,
                1,
            )
        )
        for ts_us, focus, d, dec, ns, auto, rich, meaningful in versions:
            if made == n:
                return
            made += 1
            ident = hashlib.blake2b(f"{seed}:{made}".encode(), digest_size=16).digest()
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts_us // 1_000_000))
            yield (
                ident,
                workspace_pk,
                worktree_pk,
                sid,
                branch,
                stamp + "+00:00",
                ts_us,
                focus,
                d,
                dec,
                ns,
                files,
                git_log,
                auto,
                0,
                0,
                "",
                "",
                None,
                ts_us,
                rich,
                meaningful,
                tie_key(sid, ident),
            )


def build(root: Path, n: int) -> Store:
    """A store of n entries, written by direct INSERTs in one transaction (the schema's
    triggers still maintain heads and counts), then a few hundred summaries."""
    (root / ".grip").mkdir(parents=True, exist_ok=True)
    store = open_store(root)
    ctx = context_of(store)
    rows = _rows(n, ctx.workspace_pk, ctx.worktree_pk)
    with context_of(store).db.write() as conn:
        while True:
            chunk = list(itertools.islice(rows, CHUNK))
            if not chunk:
                break
            conn.executemany(_INSERT, chunk)
    context_of(store).db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return store


def _setup_reads(store: Store, behind: int) -> int:
    """Put the consumer `behind` deduplicated entries behind on main and write summary
    history: 200 older summaries across scopes, then the measured one of (main, session),
    covering the `behind` entries read before the cursor, so it is stale by the unread ones."""
    ws = context_of(store).workspace_pk
    heads = context_of(store).db.query(
        "SELECT seq, id FROM journal_entries WHERE workspace_id = ? AND branch = 'main'"
        " AND head_ws = 1 ORDER BY seq DESC LIMIT ?",
        (ws, 2 * behind + 1),
    )
    assert len(heads) == 2 * behind + 1, "too few entries on main for this many behind"
    position = heads[behind][0]
    store.cursors.reset(CONSUMER, "main", to=position)
    kinds = ("session", "day", "branch")
    for i in range(200):
        branch = None if i % 5 == 0 else BRANCHES[i % len(BRANCHES)]
        store.summaries.add(
            f"older summary {i}",
            branch=branch,
            kind=kinds[i % 3],
            covers=CoverRange(1, max(1, position - 500 + i)),
        )
    covered = [bytes(r[1]).hex() for r in heads[behind : 2 * behind]]
    latest = store.summaries.add(
        "the summary the benchmark reads",
        branch="main",
        kind="session",
        covers=covered,
        author="bench",
    )
    assert latest.newer_entries == behind, (latest.newer_entries, behind)
    return position


def _decode(rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    # What the bare query needs before a host can use its rows like ours: JSON lists decoded.
    out = []
    for r in rows:
        d = {
            "seq": r[0],
            "id": r[1].hex(),
            "session_id": r[3],
            "branch": r[4],
            "timestamp": r[5],
            "focus": r[6],
        }
        for i, name in _LISTS:
            d[name] = json.loads(r[i])
        d["extra"] = json.loads(r[17]) if r[17] else {}
        out.append(d)
    return out


def _cases(store: Store, behind: int, position: int) -> dict[str, Callable[[], Any]]:
    """The timed calls on one store, after checking ours and bare answer the same."""
    conn = context_of(store).db.conn
    ws = context_of(store).workspace_pk
    unread_params = (ws, "main", CONSUMER)
    latest_params = (ws, "main", "session")
    sql_params = (ws, "main", position, -1)
    ours_unread = store.cursors.unread(CONSUMER, "main")
    bare_rows = conn.execute(BARE_UNREAD, unread_params).fetchall()
    assert [i.position for i in ours_unread.items] == [r[0] for r in bare_rows]
    assert len(bare_rows) == behind
    ours_latest = store.summaries.latest("main", "session")
    bare_latest = conn.execute(BARE_LATEST, latest_params).fetchall()
    assert ours_latest is not None and ours_latest.id == bare_latest[0][0]
    assert ours_latest.newer_entries == bare_latest[0][-2] == behind
    return {
        "unread": lambda: store.cursors.unread(CONSUMER, "main"),
        "unread_sql": lambda: conn.execute(_UNREAD_SQL, sql_params).fetchall(),
        "unread_bare": lambda: conn.execute(BARE_UNREAD, unread_params).fetchall(),
        "unread_bare_decoded": lambda: _decode(conn.execute(BARE_UNREAD, unread_params).fetchall()),
        "latest": lambda: store.summaries.latest("main", "session"),
        "latest_bare": lambda: conn.execute(BARE_LATEST, latest_params).fetchall(),
        "latest_bare_row": lambda: conn.execute(BARE_LATEST_ROW, latest_params).fetchall(),
    }


def _interleaved(
    cases: dict[tuple[int, str], Callable[[], Any]], rounds: int, min_time: float
) -> dict[tuple[int, str], float]:
    """Median over rounds, each round timing every case once: on a shared machine a burst of
    load then hits ours, the bare query and both sizes alike instead of skewing a ratio."""
    for fn in cases.values():
        fn()
    samples: dict[tuple[int, str], list[float]] = {key: [] for key in cases}
    for _ in range(rounds):
        for key, fn in cases.items():
            samples[key].append(median_time(fn, repeat=1, warmup=0, min_time=min_time))
    return {key: statistics.median(v) for key, v in samples.items()}


def run(quick: bool) -> list[dict[str, Any]]:
    sizes = [200, 2_000] if quick else [10_000, 1_000_000]
    # 200 entries hold 30 sessions on main: the smoke run reads fewer, the same at both sizes.
    behind = 12 if quick else BEHIND
    out: list[dict[str, Any]] = []
    stores: list[Store] = []
    with tempfile.TemporaryDirectory(prefix="bench-sc-") as tmp:
        try:
            cases: dict[tuple[int, str], Callable[[], Any]] = {}
            built: dict[int, float] = {}
            for n in sizes:
                start = time.perf_counter()
                store = build(Path(tmp) / f"n{n}", n)
                stores.append(store)
                built[n] = time.perf_counter() - start
                position = _setup_reads(store, behind)
                for name, fn in _cases(store, behind, position).items():
                    cases[(n, name)] = fn
            t = _interleaved(cases, rounds=5 if quick else 11, min_time=0.05 if quick else 0.2)
        finally:
            for store in stores:
                store.close()
    for n in sizes:
        out.append(
            row(
                SUITE,
                f"cursors.unread, consumer {behind} behind on main",
                n=n,
                ours=t[(n, "unread")],
                limit=t[(n, "unread_bare")],
                limit_name="bare apsw query (rows as tuples)",
                target="<= 2x bare",
                ok=t[(n, "unread")] <= 2 * t[(n, "unread_bare")],
                bare_decoded=t[(n, "unread_bare_decoded")],
                ratio_vs_bare_decoded=t[(n, "unread")] / t[(n, "unread_bare_decoded")],
                ours_sql_only=t[(n, "unread_sql")],
                sql_ratio_vs_bare=t[(n, "unread_sql")] / t[(n, "unread_bare")],
                build_seconds=built[n],
            )
        )
        out.append(
            row(
                SUITE,
                "summaries.latest(main, session), 200 older summaries",
                n=n,
                ours=t[(n, "latest")],
                limit=t[(n, "latest_bare")],
                limit_name="bare apsw query (row + staleness + sources)",
                target="<= 2x bare",
                ok=t[(n, "latest")] <= 2 * t[(n, "latest_bare")],
                bare_row_only=t[(n, "latest_bare_row")],
            )
        )
    small, big = sizes
    for key, case in (("unread", "cursors.unread"), ("latest", "summaries.latest")):
        flat = t[(big, key)] / t[(small, key)]
        out.append(
            ratio_row(
                SUITE,
                f"{case} time at {big:,} / at {small:,}",
                n=big,
                ratio=flat,
                most=1.5,
                bare_flat=t[(big, key + "_bare")] / t[(small, key + "_bare")],
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    print(json.dumps(run("--quick" in args), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
