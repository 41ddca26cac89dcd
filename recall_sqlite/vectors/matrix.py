"""The per-scope matrix cache of vector search.

The rows a filter (workspace, model, kinds, branch, worktree, shown versions) chooses are
cached as one contiguous float32 matrix of unit rows, so a warm search is one
matrix-vector product. A cache behind the model's generation catches up from the change
log (`refresh`: only the rows added since, ids only grow, and the rows `vector_changes`
names) instead of being read whole again (`build`). The product only nominates candidates:
every row within a proven error bound of the k-th best (vectors.py re-scores them exactly).
"""

from __future__ import annotations

import itertools
import json
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..db import as_int
from ..scope import Keys
from .owners import OwnerKind
from .stats import OWNER_JOINS
from .validate import NORMALISE_CHUNK, Float32Matrix, normalise_into, rowwise_dot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection, SQLiteValue

# The change log keeps the last max(this, a quarter of the model's rows) generations per
# (workspace, model); a cache further behind rebuilds, which is then about as cheap as
# replaying the log.
LOG_MIN_GENERATIONS = 4096
# Unit float32 rows: |fast - exact| <= (dim + 3) * 2**-24 for any summation order (the
# rounding of each product and partial sum, plus normalising both sides). The margin used is
# twice that, and candidates are taken within twice the margin of the k-th fast score.
_UNIT_ROUNDOFF = 2.0**-24
# A small product runs one row at a time (np.vecdot: a BLAS dot per row, on this thread):
# a matrix-vector BLAS call would hand it to worker threads, and on a busy machine that
# handoff alone cost more than the product (bench/RESULTS.md, row 'vectors: small
# products'). From about 10k x 384 rows up the
# matrix-vector call pays: its threads (as the host configured OpenBLAS) draw on more than
# one core's memory bandwidth when the cores are free.
_BLAS_MIN_ELEMENTS = 4_000_000

JOINS = OWNER_JOINS


@dataclass(frozen=True)
class Filter:
    """Which vectors a search looks at (also the cache's key, with the workspace)."""

    model: str
    kinds: tuple[OwnerKind, ...]
    branch: str | None
    worktree_pk: int | None  # None: all worktrees
    include_hidden: bool

    def where(self, workspace_pk: int) -> tuple[str, dict[str, SQLiteValue]]:
        """The WHERE clause over `vectors v` with JOINS that chooses this filter's rows,
        and its parameters. Entries are chosen as the journal's scope shows them
        (scope.py: the same head flags reads walk, unless hidden versions are asked for);
        the owner joins exclude orphans."""
        k = Keys(workspace_pk, self.worktree_pk, self.branch, False)
        params = k.params()
        params["model"] = self.model
        clauses = ["v.workspace_id = :ws", "v.model = :model"]
        if self.branch is not None:
            clauses.append("v.branch = :br")  # for both kinds, and the scope index's range
        per_kind: list[str] = []
        if "entry" in self.kinds:
            shown = k.shown_sql(
                "e", worktree="v.worktree_id", branch="v.branch", heads=not self.include_hidden
            )
            per_kind.append(f"(v.owner_kind = 'entry' AND e.seq IS NOT NULL AND {shown})")
        if "summary" in self.kinds:
            cond = ["v.owner_kind = 'summary'", "s.id IS NOT NULL"]
            if not self.include_hidden:
                cond.append("s.superseded_by IS NULL")
            per_kind.append("(" + " AND ".join(cond) + ")")
        clauses.append("(" + " OR ".join(per_kind) + ")")
        return " AND ".join(clauses), params

    def leaves_out(self) -> bool:
        """Whether the scope can leave any row of its basis out (a branch, or one worktree's
        entries); when not, there is nothing elsewhere."""
        return self.branch is not None or (self.worktree_pk is not None and "entry" in self.kinds)

    def outside_sql(
        self, workspace_pk: int, *, index: str = "", narrow: str = ""
    ) -> tuple[str, dict[str, SQLiteValue]]:
        """(vector id, category) of every row of the scope's basis that it leaves out
        (scope.py's categories OTHER_WORKTREE and OTHER_BRANCH, so a search counts elsewhere
        as a read does), and its parameters: a SELECT over `vectors v` with JOINS (`index`
        after its name, `narrow` an `AND ...` of the caller's)."""
        k = Keys(workspace_pk, self.worktree_pk, self.branch, False)
        params = k.params()
        params["model"] = self.model
        per_kind: list[str] = []
        if "entry" in self.kinds:
            basis = k.basis_sql("e", heads=not self.include_hidden)
            per_kind.append(f"(v.owner_kind = 'entry' AND e.seq IS NOT NULL AND {basis})")
        if "summary" in self.kinds:
            cond = ["v.owner_kind = 'summary'", "s.id IS NOT NULL"]
            if not self.include_hidden:
                cond.append("s.superseded_by IS NULL")
            per_kind.append("(" + " AND ".join(cond) + ")")
        # A summary belongs to no worktree: only a branch can leave it out.
        of_summary = "0" if self.branch is None else "CASE WHEN v.branch = :br THEN 0 ELSE 2 END"
        category = (
            f"CASE WHEN v.owner_kind = 'entry' THEN"
            f" ({k.category_sql('v.worktree_id', 'v.branch')}) ELSE {of_summary} END"
        )
        where = " OR ".join(per_kind)
        sql = (
            f"SELECT id, category FROM (SELECT v.id AS id, {category} AS category"
            f" FROM vectors AS v{index}{JOINS}"
            f" WHERE v.workspace_id = :ws AND v.model = :model AND ({where}){narrow})"
            " WHERE category IN (1, 2)"
        )
        return sql, params


class Matrix:
    """The unit rows one filter chose, as of one generation. Slots of rows that left the
    filter are freed (scored -inf) and reused, so catching up with a write touches only the
    changed rows instead of copying the matrix."""

    def __init__(
        self,
        dim: int,
        generation: int,
        high: int,
        rows: Float32Matrix,
        ids: npt.NDArray[np.int64],
        n: int,
    ) -> None:
        self.dim = dim
        self.generation = generation
        self.high = high  # the highest vector id in the table at `generation`
        self.rows = rows  # (capacity, dim) unit float32
        self.ids = ids  # (capacity,) vector id per slot, -1 = free
        self.n = n  # slots in use (live or free)
        self.free: list[int] = []
        self._free_idx = np.empty(0, dtype=np.intp)
        self.outside: Outside | None = None  # None: the filter leaves nothing out

    @property
    def nbytes(self) -> int:
        extra = self.outside.nbytes if self.outside is not None else 0
        return int(self.rows.nbytes + self.ids.nbytes) + extra

    @property
    def elsewhere(self) -> tuple[int, int]:
        """(other worktrees, other branches): the basis rows the filter leaves out."""
        return self.outside.counts() if self.outside is not None else (0, 0)

    @property
    def live(self) -> int:
        return self.n - len(self.free)

    def candidates(self, q: Float32Matrix, k: int) -> npt.NDArray[np.int64]:
        """Vector ids of every row whose exact score could be in the top k."""
        n = self.n
        if self.live == 0:
            return np.empty(0, dtype=np.int64)
        if k >= self.live:
            return self.ids[:n][self.ids[:n] >= 0]
        matrix = self.rows[:n]
        scores: npt.NDArray[np.float32] = (
            matrix @ q if matrix.size >= _BLAS_MIN_ELEMENTS else rowwise_dot(matrix, q)
        )
        if self.free:
            scores[self._free_idx] = -np.inf
        kth = float(np.partition(scores, n - k)[n - k])
        margin = 4.0 * (self.dim + 3) * _UNIT_ROUNDOFF
        return self.ids[:n][scores >= kth - margin]

    def apply(self, changed: Sequence[int], current: list[tuple[int, bytes]]) -> None:
        """Catch up: `changed` are the vectors added or logged since, `current` those of them
        that match the filter now, with their stored bytes."""
        n = self.n
        hit = np.flatnonzero(np.isin(self.ids[:n], np.asarray(changed, dtype=np.int64)))
        slot_of = {int(self.ids[s]): int(s) for s in hit}
        still = {vid for vid, _ in current}
        for vid, slot in slot_of.items():
            if vid not in still:
                self.ids[slot] = -1
                self.free.append(slot)
        if current:
            slots = np.empty(len(current), dtype=np.intp)
            for i, (vid, _) in enumerate(current):
                known = slot_of.get(vid)
                slot = (
                    known
                    if known is not None
                    else (self.free.pop() if self.free else self._append_slot())
                )
                slots[i] = slot
                self.ids[slot] = vid
            raw = np.frombuffer(b"".join(b for _, b in current), dtype="<f4")
            block = np.empty((len(current), self.dim), dtype=np.float32)
            normalise_into(block, raw.reshape(len(current), self.dim))
            self.rows[slots] = block
        if len(self.free) > max(64, self.n // 4):
            self._compact()
        self._free_idx = np.asarray(sorted(self.free), dtype=np.intp)

    def _append_slot(self) -> int:
        self._reserve(self.n + 1)
        self.n += 1
        return self.n - 1

    def _reserve(self, needed: int) -> None:
        if needed <= len(self.ids):
            return
        capacity = max(needed, len(self.ids) + max(64, len(self.ids) // 8))
        rows = np.empty((capacity, self.dim), dtype=np.float32)
        rows[: self.n] = self.rows[: self.n]
        ids = np.full(capacity, -1, dtype=np.int64)
        ids[: self.n] = self.ids[: self.n]
        self.rows, self.ids = rows, ids

    def extend(self, ids: list[int], blob: bytes) -> None:
        """Append rows read in bulk (a full build)."""
        m = len(ids)
        self._reserve(self.n + m)
        self.ids[self.n : self.n + m] = ids
        raw = np.frombuffer(blob, dtype="<f4").reshape(m, self.dim)
        normalise_into(self.rows[self.n : self.n + m], raw)
        self.n += m

    def trim(self) -> None:
        """Give back a build's over-allocation, keeping headroom for appends."""
        want = self.n + max(64, self.n // 16)
        if want < len(self.ids) // 2:
            self.rows, self.ids = self.rows[:want].copy(), self.ids[:want].copy()

    def _compact(self) -> None:
        keep = np.flatnonzero(self.ids[: self.n] >= 0)
        capacity = len(keep) + max(64, len(keep) // 16)
        rows = np.empty((capacity, self.dim), dtype=np.float32)
        rows[: len(keep)] = self.rows[keep]
        ids = np.full(capacity, -1, dtype=np.int64)
        ids[: len(keep)] = self.ids[keep]
        self.rows, self.ids, self.n, self.free = rows, ids, len(keep), []


class Outside:
    """The vectors of a filter's basis that its scope leaves out, by id with their category,
    kept beside the matrix so that counting elsewhere catches up with the change log as the
    matrix does instead of walking the model at each generation."""

    __slots__ = ("ids", "categories")

    def __init__(self, rows: Sequence[tuple[SQLiteValue, ...]]) -> None:
        self.ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        self.categories = np.fromiter((r[1] for r in rows), dtype=np.int8, count=len(rows))

    @property
    def nbytes(self) -> int:
        return int(self.ids.nbytes + self.categories.nbytes)

    def counts(self) -> tuple[int, int]:
        c = self.categories
        return int(np.count_nonzero(c == 1)), int(np.count_nonzero(c == 2))

    def apply(self, logged: Sequence[int], current: Sequence[tuple[SQLiteValue, ...]]) -> None:
        """Catch up: `logged` rows may have left (or changed category), `current` are the
        logged and added rows that are out of the scope now."""
        if logged:
            keep = ~np.isin(self.ids, np.asarray(logged, dtype=np.int64))
            self.ids, self.categories = self.ids[keep], self.categories[keep]
        if current:
            new = Outside(current)
            self.ids = np.concatenate((self.ids, new.ids))
            self.categories = np.concatenate((self.categories, new.categories))


def read_outside(conn: Connection, flt: Filter, ws: int) -> Outside | None:
    """The filter's Outside read whole (a full build, inside the caller's read)."""
    if not flt.leaves_out():
        return None
    sql, params = flt.outside_sql(ws)
    return Outside(conn.execute(sql, params).fetchall())


def _refresh_outside(
    conn: Connection, flt: Filter, ws: int, mat: Matrix, logged: list[int]
) -> None:
    """Catch `mat.outside` up: the rows added since (a rowid range, as the matrix's), then
    the logged rows by id."""
    if mat.outside is None:
        return
    sql, params = flt.outside_sql(ws, index=" NOT INDEXED", narrow=" AND v.id > :high")
    rows = conn.execute(sql, {**params, "high": mat.high}).fetchall()
    if logged:
        sql, params = flt.outside_sql(
            ws, narrow=" AND v.id IN (SELECT value FROM json_each(:logged))"
        )
        rows += conn.execute(sql, {**params, "logged": json.dumps(logged)}).fetchall()
    # By id: a row added since and changed again is in the log too.
    current = {as_int(vid): as_int(category) for vid, category in rows}
    mat.outside.apply(logged, list(current.items()))


@dataclass
class MatrixCache:
    limit: int
    entries: OrderedDict[tuple[int, Filter], Matrix] = field(default_factory=OrderedDict)
    builds: int = 0
    refreshes: int = 0
    hits: int = 0

    def get(self, key: tuple[int, Filter]) -> Matrix | None:
        mat = self.entries.get(key)
        if mat is not None:
            self.entries.move_to_end(key)
        return mat

    def keep(self, key: tuple[int, Filter], mat: Matrix) -> None:
        """Hold `mat` if it fits, evicting the least recently used; a matrix larger than the
        whole limit is not held (the limit is a bound, not a hint)."""
        self.entries.pop(key, None)
        if mat.nbytes > self.limit:
            return
        self.entries[key] = mat
        total = sum(m.nbytes for m in self.entries.values())
        while total > self.limit:
            _, old = self.entries.popitem(last=False)
            total -= old.nbytes

    @property
    def nbytes(self) -> int:
        return sum(m.nbytes for m in self.entries.values())


def high(conn: Connection) -> int:
    """The highest vector id in the table (a cache has seen every row up to it)."""
    return as_int(conn.execute("SELECT coalesce(max(id), 0) FROM vectors").fetchall()[0][0])


def build(conn: Connection, flt: Filter, ws: int, dim: int, generation: int, total: int) -> Matrix:
    """The filter's matrix read whole, as of `generation` (inside the caller's read)."""
    where, params = flt.where(ws)
    # The model's row count (same snapshot) bounds the filter's, so one allocation
    # normally serves; what the filter left unused is trimmed below.
    mat = Matrix(
        dim,
        generation,
        high(conn),
        np.empty((total + 64, dim), dtype=np.float32),
        np.full(total + 64, -1, dtype=np.int64),
        0,
    )
    cursor = conn.execute(f"SELECT v.id, v.embedding FROM vectors v{JOINS} WHERE {where}", params)
    while batch := list(itertools.islice(cursor, NORMALISE_CHUNK)):
        mat.extend([vid for vid, _ in batch], b"".join(blob for _, blob in batch))
    mat.trim()
    mat.outside = read_outside(conn, flt, ws)
    return mat


def refresh(conn: Connection, flt: Filter, ws: int, mat: Matrix, generation: int) -> None:
    """Catch `mat` up to `generation` from the rows added since and the change log."""
    where, params = flt.where(ws)
    # Rows added since: a rowid range (NOT INDEXED keeps the planner off the scope
    # index, which would walk the whole model to find them).
    added = {
        int(vid): bytes(blob)
        for vid, blob in conn.execute(
            f"SELECT v.id, v.embedding FROM vectors AS v NOT INDEXED{JOINS}"
            f" WHERE v.id > :high AND {where}",
            {**params, "high": mat.high},
        )
    }
    logged = [
        int(v)
        for (v,) in conn.execute(
            "SELECT DISTINCT vector_id FROM vector_changes"
            " WHERE workspace_id = ? AND model = ? AND generation > ?",
            (ws, flt.model, mat.generation),
        )
    ]
    if logged:
        # Probe the logged rows by id rather than walk the filter.
        added.update(
            (int(vid), bytes(blob))
            for vid, blob in conn.execute(
                f"SELECT v.id, v.embedding FROM json_each(:logged) AS j CROSS JOIN vectors AS v"
                f" ON v.id = j.value{JOINS} WHERE {where}",
                {**params, "logged": json.dumps(logged)},
            )
        )
    if added or logged:
        mat.apply(sorted({*logged, *added}), list(added.items()))
    _refresh_outside(conn, flt, ws, mat, logged)
    mat.generation, mat.high = generation, high(conn)
