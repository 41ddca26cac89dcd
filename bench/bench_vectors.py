"""Vector search: recall-sqlite's store.vectors against bare numpy (the matrix already in
memory: the memory-bandwidth limit) and sqlite-vec's vec0 (the workspace as partition key,
the branch as a metadata column), side by side on the same vectors.

    python bench/bench_vectors.py [--quick]      # prints JSON rows

Full size: 100k vectors x 384 dimensions in one workspace across 4 branches (quick: 2k).
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import median_time, row  # noqa: E402

from recall_sqlite import open_store  # noqa: E402
from recall_sqlite.store import context_of

SUITE = "vectors"
MODEL = "all-MiniLM-L6-v2"
DIM = 384
BRANCHES = ("main", "feature-a", "feature-b", "fix-c")
K = 10
NUMPY = "numpy matmul+argpartition (matrix in memory)"
VEC0 = "sqlite-vec vec0 (partition key + metadata column)"


def blas_info() -> dict[str, Any]:
    """Which OpenBLAS kernel numpy runs (threadpoolctl when installed, else ask the bundled
    library directly), since a matmul's speed is the BLAS kernel's."""
    info: dict[str, Any] = {
        "numpy": np.__version__,
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "OPENBLAS_L2_SIZE": os.environ.get("OPENBLAS_L2_SIZE"),
    }
    try:
        from threadpoolctl import threadpool_info  # type: ignore[import-not-found]

        for pool in threadpool_info():
            if pool.get("internal_api") == "openblas":
                info.update(
                    blas_core=pool.get("architecture"),
                    blas_threads=pool.get("num_threads"),
                    via="threadpoolctl",
                )
                return info
    except ImportError:
        pass
    libs = glob.glob(
        os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs", "libscipy_openblas*")
    )
    for path in libs:
        lib = ctypes.CDLL(path)
        for prefix in ("scipy_openblas", "openblas"):
            core = getattr(lib, f"{prefix}_get_corename64_", None)
            threads = getattr(lib, f"{prefix}_get_num_threads64_", None)
            if core is not None:
                core.restype = ctypes.c_char_p
                info["blas_core"] = core().decode()
                if threads is not None:
                    threads.restype = ctypes.c_int
                    info["blas_threads"] = threads()
                info["via"] = "ctypes"
                return info
    info["blas_core"] = "unknown"
    return info


def _entries(n: int) -> list[dict[str, Any]]:
    return [
        {
            "timestamp": f"2026-01-01T00:00:00.{i:06d}+00:00",
            "session_id": f"s{i}",
            "branch": BRANCHES[i % len(BRANCHES)],
            "focus": f"entry {i}",
        }
        for i in range(n)
    ]


def _bare_numpy(matrix: np.ndarray, q: np.ndarray) -> np.ndarray:
    scores = matrix @ q
    n = len(scores)
    top = np.argpartition(scores, n - K)[n - K :]
    return top[np.argsort(-scores[top])]


def _bare_einsum(matrix: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The same product through numpy's own loop (what store.vectors uses), for reference."""
    scores = np.einsum("ij,j->i", matrix, q)
    n = len(scores)
    top = np.argpartition(scores, n - K)[n - K :]
    return top[np.argsort(-scores[top])]


def run(quick: bool) -> list[dict[str, Any]]:
    n = 2_000 if quick else 100_000
    repeat = 5 if quick else 9
    rows: list[dict[str, Any]] = []
    rng = np.random.default_rng(20261129)
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    queries = rng.standard_normal((repeat * 4 + 8, DIM)).astype(np.float32)
    branch_of = np.array([i % len(BRANCHES) for i in range(n)])

    with tempfile.TemporaryDirectory(prefix="bench-vectors-") as tmp:
        root = Path(tmp) / "ws"
        (root / ".grip").mkdir(parents=True)
        store = open_store(root, db_path=Path(tmp) / "recall.db")
        t0 = time.perf_counter()
        ids = [r.id for r in store.journal.append_many(_entries(n))]
        journal_s = time.perf_counter() - t0
        owners = [("entry", i) for i in ids]

        # -- batch put ---------------------------------------------------------------
        t0 = time.perf_counter()
        store.vectors.put_many(owners, vectors, model=MODEL)
        put_s = time.perf_counter() - t0
        replace = rng.standard_normal((n, DIM)).astype(np.float32)
        t0 = time.perf_counter()
        store.vectors.put_many(owners, replace, model=MODEL)
        replace_s = time.perf_counter() - t0
        vectors = replace

        # -- the peers: bare numpy and vec0 ------------------------------------------
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        unit_branch = np.ascontiguousarray(unit[branch_of == 0])
        vec = _vec0(Path(tmp) / "vec0.db", vectors, branch_of)
        vec0_put_s = vec.pop("put_s")

        rows.append(
            row(
                SUITE,
                "batch put (insert)",
                n=n,
                ours=n / put_s,
                unit="vectors/s",
                peer=n / vec0_put_s,
                peer_name=VEC0 + " insert",
                target=">= 20000 vectors/s",
                ok=n / put_s >= 20_000,
                seconds=put_s,
                journal_append_many_s=journal_s,
            )
        )
        rows.append(
            row(
                SUITE,
                "batch put (replace all)",
                n=n,
                ours=n / replace_s,
                unit="vectors/s",
                target=">= 20000 vectors/s",
                ok=n / replace_s >= 20_000,
                seconds=replace_s,
            )
        )

        # -- cold, warm, filtered ------------------------------------------------------
        qi = iter(range(10**9))

        def q() -> np.ndarray:
            return queries[next(qi) % len(queries)]

        def ours_all() -> Any:
            return store.vectors.search(q(), K, model=MODEL, all_worktrees=True)

        def ours_branch() -> Any:
            return store.vectors.search(q(), K, model=MODEL, branch=BRANCHES[0], all_worktrees=True)

        def cold() -> Any:
            store.vectors.clear_cache()
            return ours_all()

        cold_s = median_time(cold, repeat=3, warmup=0)
        store.vectors.clear_cache()
        agree = _agreement(store, queries[:8], unit, unit_branch, vec, branch_of)

        for case, fn, bare_m, vec_branch in (
            ("warm search top-10, whole workspace", ours_all, unit, None),
            ("warm search top-10, one branch", ours_branch, unit_branch, BRANCHES[0]),
        ):
            fn()
            ours_s = median_time(fn, repeat=repeat, min_time=0.05)
            bare_s = median_time(lambda m=bare_m: _bare_numpy(m, q()), repeat=repeat, min_time=0.05)
            einsum_s = median_time(
                lambda m=bare_m: _bare_einsum(m, q()), repeat=repeat, min_time=0.05
            )
            vec_s = median_time(
                lambda b=vec_branch: vec["search"](q(), b), repeat=repeat, min_time=0.05
            )
            rows.append(
                row(
                    SUITE,
                    case,
                    n=n,
                    ours=ours_s,
                    limit=bare_s,
                    limit_name=NUMPY,
                    peer=vec_s,
                    peer_name=VEC0,
                    target="<= 1.5x numpy and <= vec0",
                    ok=ours_s <= 1.5 * bare_s and ours_s <= vec_s,
                    rows_searched=int(len(bare_m)),
                    bare_numpy_einsum_s=einsum_s,
                )
            )

        # -- first search after a write -------------------------------------------------
        for case, fn in (
            ("first search after a put, whole workspace", ours_all),
            ("first search after a put, one branch", ours_branch),
        ):
            fn()
            samples = []
            for i in range(repeat):
                j = int(rng.integers(0, n // len(BRANCHES))) * len(BRANCHES)  # a branch-0 owner
                store.vectors.put(owners[j], queries[i], model=MODEL)
                t0 = time.perf_counter()
                fn()
                samples.append(time.perf_counter() - t0)
            first_s = statistics.median(samples)
            warm_s = median_time(fn, repeat=repeat, min_time=0.05)
            rows.append(
                row(
                    SUITE,
                    case,
                    n=n,
                    ours=first_s,
                    limit=warm_s,
                    limit_name="the same search warm",
                    target="<= 0.100 s",
                    ok=first_s <= 0.1,
                )
            )

        # A richer version of a session hides the older one's vector (a head change) and
        # brings its own: the log replays both.
        samples = []
        for i in range(repeat):
            s = int(rng.integers(0, n))
            new = store.journal.append(
                {
                    "timestamp": "2026-06-01T00:00:00+00:00",
                    "session_id": f"s{s}",
                    "branch": BRANCHES[s % 4],
                    "focus": f"entry {s}, enriched {i}",
                    "done": ["x"],
                }
            )
            store.vectors.put(("entry", new.id), queries[i], model=MODEL)
            t0 = time.perf_counter()
            ours_all()
            samples.append(time.perf_counter() - t0)
        rows.append(
            row(
                SUITE,
                "first search after a new entry version + its put",
                n=n,
                ours=statistics.median(samples),
                target="<= 0.100 s",
                ok=statistics.median(samples) <= 0.1,
            )
        )

        info = store.vectors.cache_info()
        rows.append(
            row(SUITE, "cold search (matrix read from SQLite)", n=n, ours=cold_s, target="(stated)")
        )
        rows.append(
            row(
                SUITE,
                "cache memory (2 filters held)",
                n=n,
                ours=float(info.bytes),
                unit="bytes",
                limit=float(vectors.nbytes + unit_branch.nbytes),
                limit_name="the two float32 matrices themselves",
                target="(stated)",
                cache=info.to_dict(),
            )
        )
        rows.append(
            row(
                SUITE,
                "agreement with exact top-10",
                n=n,
                ours=agree["ours"],
                unit="fraction",
                peer=agree["vec0"],
                peer_name=VEC0,
                target="1.0",
                ok=agree["ours"] == 1.0,
            )
        )
        rows.append(row(SUITE, "environment", n=None, ours=0.0, unit="info", **blas_info()))
        store.close()
        vec["close"]()
    return rows


def _vec0(path: Path, vectors: np.ndarray, branch_of: np.ndarray) -> dict[str, Any]:
    import apsw
    import sqlite_vec

    conn = apsw.Connection(str(path))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(
        f"CREATE VIRTUAL TABLE items USING vec0(workspace_id integer partition key,"
        f" branch text, embedding float[{DIM}] distance_metric=cosine)"
    )
    t0 = time.perf_counter()
    with conn:
        conn.executemany(
            "INSERT INTO items (rowid, workspace_id, branch, embedding) VALUES (?, 1, ?, ?)",
            [(i + 1, BRANCHES[int(b)], vectors[i].tobytes()) for i, b in enumerate(branch_of)],
        )
    put_s = time.perf_counter() - t0

    def search(q: np.ndarray, branch: str | None) -> list[int]:
        sql = "SELECT rowid FROM items WHERE embedding MATCH ? AND k = ? AND workspace_id = 1"
        params: list[Any] = [q.astype(np.float32).tobytes(), K]
        if branch is not None:
            sql += " AND branch = ?"
            params.append(branch)
        return [int(r[0]) - 1 for r in conn.execute(sql, params)]

    return {"search": search, "put_s": put_s, "close": conn.close}


def _agreement(
    store: Any,
    queries: np.ndarray,
    unit: np.ndarray,
    unit_branch: np.ndarray,
    vec: dict[str, Any],
    branch_of: np.ndarray,
) -> dict[str, float]:
    """Fraction of the exact top-10 (float64 brute force) each engine returned."""
    ids = np.array(
        context_of(store).db.query("SELECT lower(hex(id)) FROM journal_entries ORDER BY seq")
    )[: len(unit), 0]
    ours = theirs = 0
    for q in queries:
        exact = np.argsort(-(unit.astype(np.float64) @ q.astype(np.float64)))[:K]
        got = store.vectors.search(q, K, model=MODEL, all_worktrees=True)
        ours += len({ids[i] for i in exact} & {h.owner.id for h in got.hits})
        theirs += len(set(exact.tolist()) & set(vec["search"](q, None)))
    total = K * len(queries)
    return {"ours": ours / total, "vec0": theirs / total}


if __name__ == "__main__":
    print(json.dumps(run("--quick" in sys.argv[1:]), indent=2))
