"""The local vector table: hosts store embeddings of journal entries and summaries (the store
never computes them) and search them by cosine similarity, scoped like journal reads.

numpy is imported here and only here (the package `__init__` loads this module on first
use of a name that needs it), so the journal path never loads numpy.

How a search works, and why:

* SQL chooses the rows. A filter (workspace, model, kinds, branch, worktree, shown versions)
  is a WHERE clause over `vectors` joined to the owners, so scoping follows the same columns
  journal reads use and an orphan (a vector whose owner is gone) can never be chosen.
* The chosen rows are cached per (workspace, model, filter) as one contiguous float32 matrix
  of unit rows, so a warm search is one matrix-vector product: the memory-bandwidth limit.
* Every search first reads one row of `vector_generations` (a primary-key lookup). The
  triggers in schema.sql bump that generation on any change that can alter a result, from any
  process. A cache a few generations behind re-reads only the rows added since (ids only
  grow) and the rows `vector_changes` names (updated, deleted, owner shown or hidden), so the
  first search after a write is not a rebuild.
* The float32 product only nominates candidates: every row within a proven error bound of the
  k-th best. Those few are re-scored exactly (float64, from the stored BLOBs, one row at a time
  so a row's score does not depend on where it sits in the matrix) and ranked by score, then
  by owner: entries before summaries, entries by id, summaries by id. The ranking therefore
  does not depend on the BLAS kernel, on insertion order, or on which store of a merged pair
  answered.
"""

from __future__ import annotations

import itertools
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..context import StoreContext
from ..errors import (
    InvalidInputError,
    InvalidOwnerError,
    InvalidVectorError,
    NotFoundError,
    UnknownModelError,
    UnknownOwnerError,
)
from ..timestamps import utc_now_iso
from .owner import KINDS, Owner, OwnerKind, OwnerLike
from .stats import VectorStats, vector_stats

# A matrix cache larger than this is used for the search that built it and then dropped;
# hosts with bigger workspaces raise it (100k x 384 float32 is 147 MiB).
DEFAULT_CACHE_BYTES = 512 * 1024 * 1024
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
# handoff alone cost 5x the product (2k x 384 rows). From about 10k x 384 rows up the
# matrix-vector call pays: its threads (as the host configured OpenBLAS) draw on more than
# one core's memory bandwidth when the cores are free.
_BLAS_MIN_ELEMENTS = 4_000_000
_MAX_MODEL_LEN = 200
_NORMALISE_CHUNK = 8192

Float32Matrix = npt.NDArray[np.float32]


# -- results ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PutResult:
    model: str
    dim: int | None  # None only for an empty batch of a model not stored yet
    added: int  # (owner, model) pairs that had no vector before
    replaced: int  # pairs whose vector was overwritten (or re-stored unchanged)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "dim": self.dim,
            "added": self.added,
            "replaced": self.replaced,
        }


@dataclass(frozen=True)
class SearchScope:
    workspace_id: str
    model: str
    worktree: str | None  # None = every worktree (entries); summaries have none
    branch: str | None  # None = every branch; summaries without one only then
    kinds: tuple[OwnerKind, ...]
    include_hidden: bool  # False = only the versions journal reads show

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace_id": self.workspace_id,
            "model": self.model,
            "worktree": self.worktree,
            "branch": self.branch,
            "kinds": list(self.kinds),
            "include_hidden": self.include_hidden,
        }

    def describe(self) -> str:
        where = "all worktrees" if self.worktree is None else f"worktree {self.worktree}"
        branch = "all branches" if self.branch is None else f"branch {self.branch or '(none)'}"
        hidden = ", hidden versions too" if self.include_hidden else ""
        return f"model {self.model}, {'+'.join(self.kinds)}, {where}, {branch}{hidden}"


@dataclass(frozen=True)
class Hit:
    owner: Owner
    score: float  # cosine similarity in [-1, 1], exact (float64)
    branch: str | None
    worktree: str | None  # entries only

    def to_dict(self) -> dict[str, Any]:
        return {
            "owner": self.owner.to_dict(),
            "score": self.score,
            "branch": self.branch,
            "worktree": self.worktree,
        }


@dataclass(frozen=True)
class SearchResult:
    hits: list[Hit]
    scope: SearchScope
    searched: int  # vectors in scope
    outside: int  # vectors of this model in the workspace the scope left out

    def to_dict(self) -> dict[str, Any]:
        return {
            "hits": [h.to_dict() for h in self.hits],
            "scope": self.scope.to_dict(),
            "searched": self.searched,
            "outside": self.outside,
        }


@dataclass(frozen=True)
class CacheInfo:
    limit_bytes: int
    bytes: int
    matrices: int
    rows: int
    builds: int  # full matrix reads from SQLite
    refreshes: int  # catch-ups from the change log
    hits: int  # searches that found their matrix current

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


# -- validation -------------------------------------------------------------------------


def _check_model(model: object) -> str:
    if not isinstance(model, str) or not model.strip():
        raise InvalidInputError(f"model must be a non-empty string, got {model!r}")
    if len(model) > _MAX_MODEL_LEN or "\x00" in model:
        raise InvalidInputError(f"model name too long or contains NUL: {model[:40]!r}")
    return model


def _as_float32(values: object, what: str, ndim: int) -> Float32Matrix:
    """Validate numerically and return little-endian float32, C-contiguous. Rejects what a
    cosine cannot be taken of or that float32 cannot hold, naming the first bad row."""
    if isinstance(values, (str, bytes)):
        raise InvalidVectorError(f"{what} must be numbers, got {type(values).__name__}")
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError) as exc:
        raise InvalidVectorError(f"{what} is not a numeric array: {exc}") from None
    if arr.dtype.kind not in "iuf":
        raise InvalidVectorError(f"{what} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != ndim:
        shape = "a 1-D vector" if ndim == 1 else "a 2-D array (one row per owner)"
        raise InvalidVectorError(f"{what} must be {shape}, got shape {arr.shape}")
    if arr.size == 0:
        raise InvalidVectorError(f"{what} is empty (dimension 0)")
    rows = arr.reshape(1, -1) if ndim == 1 else arr
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.ascontiguousarray(rows, dtype="<f4")
    if not np.isfinite(out).all():  # the cause is looked for only once there is one
        finite = np.isfinite(out).all(axis=1)
        i = int(np.argmin(finite))
        cause = (
            "contains NaN or infinity"
            if not np.isfinite(rows[i]).all()
            else "has a value beyond float32 range"
        )
        raise InvalidVectorError(f"{_row_name(what, ndim, i)} {cause}")
    norms = _norms64(out)
    nonzero = norms > 0
    if not nonzero.all():
        raise InvalidVectorError(
            f"{_row_name(what, ndim, int(np.argmin(nonzero)))} is a zero "
            "vector (it has no direction, so no cosine)"
        )
    return out


def _rowwise_dot(matrix: Float32Matrix, q: Float32Matrix) -> npt.NDArray[np.float32]:
    if hasattr(np, "vecdot"):  # numpy >= 2.0
        return np.vecdot(matrix, q)  # type: ignore[no-any-return]
    return np.einsum("ij,j->i", matrix, q)  # type: ignore[no-any-return]


def _row_name(what: str, ndim: int, i: int) -> str:
    return what if ndim == 1 else f"{what}[{i}]"


def _norms64(rows: Float32Matrix) -> npt.NDArray[np.float64]:
    """Row norms computed in float64, chunked: float32 squares of large or tiny values would
    overflow or vanish, and a whole float64 copy of a big matrix would double memory."""
    out = np.empty(rows.shape[0], dtype=np.float64)
    for start in range(0, rows.shape[0], _NORMALISE_CHUNK):
        chunk = rows[start : start + _NORMALISE_CHUNK].astype(np.float64)
        out[start : start + len(chunk)] = np.sqrt(np.einsum("ij,ij->i", chunk, chunk))
    return out


def _normalise_into(dest: Float32Matrix, raw: Float32Matrix) -> None:
    for start in range(0, raw.shape[0], _NORMALISE_CHUNK):
        chunk = raw[start : start + _NORMALISE_CHUNK].astype(np.float64)
        norms = np.sqrt(np.einsum("ij,ij->i", chunk, chunk))
        dest[start : start + len(chunk)] = chunk / norms[:, None]


def _kinds(kinds: object) -> tuple[OwnerKind, ...]:
    if kinds is None:
        return KINDS
    items = [kinds] if isinstance(kinds, str) else kinds
    if not isinstance(items, Iterable):
        raise InvalidInputError(
            f"kinds must be 'entry', 'summary' or a list of them, got {kinds!r}"
        )
    chosen = set()
    for item in items:
        if item not in KINDS:
            raise InvalidInputError(f"unknown owner kind {item!r} (use 'entry' or 'summary')")
        chosen.add(item)
    if not chosen:
        raise InvalidInputError("kinds is empty: nothing could match")
    return tuple(k for k in KINDS if k in chosen)


# -- the per-filter matrix ----------------------------------------------------------------


@dataclass(frozen=True)
class _Filter:
    model: str
    kinds: tuple[OwnerKind, ...]
    branch: str | None
    worktree_pk: int | None  # None: all worktrees
    include_hidden: bool

    def where(self, workspace_pk: int) -> tuple[str, list[Any]]:
        """The WHERE clause over `vectors v LEFT JOIN journal_entries e LEFT JOIN summaries s`
        that chooses this filter's rows. The owner joins exclude orphans and, unless hidden
        versions are asked for, the versions journal reads do not show (the same head flags
        Journal.read walks)."""
        clauses = ["v.workspace_id = ?", "v.model = ?"]
        params: list[Any] = [workspace_pk, self.model]
        if self.branch is not None:
            clauses.append("v.branch = ?")
            params.append(self.branch)
        per_kind: list[str] = []
        if "entry" in self.kinds:
            cond = ["v.owner_kind = 'entry'", "e.seq IS NOT NULL"]
            if self.worktree_pk is not None:
                cond.append("v.worktree_id = ?")
                params.append(self.worktree_pk)
            if not self.include_hidden:
                cond.append("e.head_wt = 1" if self.worktree_pk is not None else "e.head_ws = 1")
            per_kind.append("(" + " AND ".join(cond) + ")")
        if "summary" in self.kinds:
            cond = ["v.owner_kind = 'summary'", "s.id IS NOT NULL"]
            if not self.include_hidden:
                cond.append("s.superseded_by IS NULL")
            per_kind.append("(" + " AND ".join(cond) + ")")
        clauses.append("(" + " OR ".join(per_kind) + ")")
        return " AND ".join(clauses), params


_JOINS = (
    " LEFT JOIN journal_entries e ON e.seq = v.entry_seq AND e.workspace_id = v.workspace_id"
    " LEFT JOIN summaries s ON s.id = v.summary_id AND s.workspace_id = v.workspace_id"
)
_FROM = " FROM vectors v" + _JOINS


class _Matrix:
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

    @property
    def nbytes(self) -> int:
        return int(self.rows.nbytes + self.ids.nbytes)

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
            matrix @ q if matrix.size >= _BLAS_MIN_ELEMENTS else _rowwise_dot(matrix, q)
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
            _normalise_into(block, raw.reshape(len(current), self.dim))
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
        _normalise_into(self.rows[self.n : self.n + m], raw)
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


@dataclass
class _Cache:
    limit: int
    entries: OrderedDict[tuple[int, _Filter], _Matrix] = field(default_factory=OrderedDict)
    builds: int = 0
    refreshes: int = 0
    hits: int = 0

    def get(self, key: tuple[int, _Filter]) -> _Matrix | None:
        mat = self.entries.get(key)
        if mat is not None:
            self.entries.move_to_end(key)
        return mat

    def keep(self, key: tuple[int, _Filter], mat: _Matrix) -> None:
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


# -- the table family -------------------------------------------------------------------


_INSERT = (
    "INSERT INTO vectors (workspace_id, model, dim, entry_seq, summary_id, owner_kind, branch,"
    " worktree_id, embedding, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)"
)
# Re-storing an identical vector writes nothing, so it does not invalidate any cache.
_REPLACE = "UPDATE vectors SET embedding = ?1, created_at = ?2 WHERE id = ?3 AND embedding <> ?1"


class Vectors:
    """`store.vectors`. Each Store has its own matrix cache (bounded by `cache_limit` bytes);
    any write to the vector table, by this or any other process, is seen by the next search."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        self._cache = _Cache(DEFAULT_CACHE_BYTES)
        self._lock = threading.Lock()

    # -- writing --------------------------------------------------------------------

    def put(self, owner: OwnerLike, vector: object, *, model: str) -> PutResult:
        """Store (or replace) `owner`'s vector for `model`. The first vector of a model in
        this workspace fixes its dimension. Raises InvalidVectorError / InvalidOwnerError /
        UnknownOwnerError and writes nothing on bad input."""
        return self._put([Owner.of(owner)], _as_float32(vector, "vector", 1), model)

    def put_many(self, owners: Sequence[OwnerLike], vectors: object, *, model: str) -> PutResult:
        """All or nothing: `vectors` is a 2-D array with one row per owner (row i belongs to
        owners[i]); one bad row or unknown owner rejects the whole batch before any write."""
        owner_list = [Owner.of(o) for o in owners]
        if not owner_list:
            model = _check_model(model)
            if np.size(np.asarray(vectors, dtype=object)) != 0:
                raise InvalidVectorError("vectors given for an empty list of owners")
            rows = self._ctx.db.query(
                "SELECT dim FROM vector_models WHERE workspace_id = ? AND model = ?",
                (self._ctx.workspace_pk, model),
            )
            return PutResult(model, int(rows[0][0]) if rows else None, 0, 0)
        matrix = _as_float32(vectors, "vectors", 2)
        if matrix.shape[0] != len(owner_list):
            raise InvalidVectorError(f"{len(owner_list)} owners but {matrix.shape[0]} vector rows")
        return self._put(owner_list, matrix, model)

    def _put(self, owners: list[Owner], matrix: Float32Matrix, model: str) -> PutResult:
        model = _check_model(model)
        seen: set[Owner] = set()
        for o in owners:
            if o in seen:
                raise InvalidOwnerError(f"{o} appears twice in one batch")
            seen.add(o)
        dim = int(matrix.shape[1])
        blobs = [row.tobytes() for row in matrix]
        ws, now = self._ctx.workspace_pk, utc_now_iso()
        with self._ctx.db.write() as conn:
            fixed = conn.execute(
                "SELECT dim FROM vector_models WHERE workspace_id = ? AND model = ?", (ws, model)
            ).fetchall()
            if fixed and fixed[0][0] != dim:
                raise InvalidVectorError(
                    f"model {model!r} has dimension {fixed[0][0]} in this workspace; "
                    f"got vectors of dimension {dim}"
                )
            resolved = _resolve(conn, ws, owners, model)
            if not fixed:  # declared once here rather than by a per-row trigger
                conn.execute(
                    "INSERT INTO vector_models (workspace_id, model, dim) VALUES (?, ?, ?)",
                    (ws, model, dim),
                )
            inserts, replaces = [], []
            for o, (seq, sid, branch, worktree, existing), blob in zip(
                owners, resolved, blobs, strict=True
            ):
                if existing is None:
                    inserts.append((ws, model, dim, seq, sid, o.kind, branch, worktree, blob, now))
                else:
                    replaces.append((blob, now, existing))
            # Plain statements, not an upsert: the owner query already knows which exist,
            # and an INSERT with two ON CONFLICT targets costs a probe of both indexes a row.
            # Grouped by branch, the scope index fills one leaf at a time.
            if inserts:
                inserts.sort(key=lambda r: (r[6] or "", r[7] or 0))
                conn.executemany(_INSERT, inserts)
            if replaces:
                conn.executemany(_REPLACE, replaces)
            _prune_log(conn, ws, model)
        return PutResult(model, dim, len(inserts), len(replaces))

    def delete(self, owner: OwnerLike, *, model: str | None = None) -> int:
        """Delete `owner`'s vectors (of one model, or all); returns how many were deleted."""
        o = Owner.of(owner)
        if model is not None:
            model = _check_model(model)
        ws = self._ctx.workspace_pk
        with self._ctx.db.write() as conn:
            ((seq, sid, _, _, _),) = _resolve(conn, ws, [o])
            column, value = ("entry_seq", seq) if o.kind == "entry" else ("summary_id", sid)
            sql = f"DELETE FROM vectors WHERE workspace_id = ? AND {column} = ?"
            params: list[Any] = [ws, value]
            if model is not None:
                sql += " AND model = ?"
                params.append(model)
            models = [str(m) for (m,) in conn.execute(sql + " RETURNING model", params)]
            for m in set(models):
                _prune_log(conn, ws, m)
        return len(models)

    # -- reading --------------------------------------------------------------------

    def get(self, owner: OwnerLike, *, model: str) -> npt.NDArray[np.float32] | None:
        """The stored vector (float32, as put), or None when the owner has none for `model`."""
        o = Owner.of(owner)
        model = _check_model(model)
        ws = self._ctx.workspace_pk
        with self._ctx.db.read() as conn:
            ((_, _, _, _, existing),) = _resolve(conn, ws, [o], model)
            rows = (
                conn.execute("SELECT embedding FROM vectors WHERE id = ?", (existing,)).fetchall()
                if existing is not None
                else []
            )
        if not rows:
            return None
        blob: bytes = rows[0][0]  # type: ignore[assignment]  # STRICT BLOB column
        return np.frombuffer(blob, dtype="<f4").astype(np.float32)

    def models(self) -> dict[str, int]:
        """Every model this workspace has stored, with its fixed dimension."""
        return {
            str(m): int(d)
            for m, d in self._ctx.db.query(
                "SELECT model, dim FROM vector_models WHERE workspace_id = ? ORDER BY model",
                (self._ctx.workspace_pk,),
            )
        }

    def search(
        self,
        query: object,
        k: int = 10,
        *,
        model: str,
        branch: str | None = None,
        kinds: OwnerKind | Iterable[OwnerKind] | None = None,
        all_worktrees: bool = False,
        include_hidden: bool = False,
    ) -> SearchResult:
        """The `k` owners most similar to `query` (cosine), best first; equal scores rank
        entries before summaries, then by ascending id.

        Scope, as journal reads: entries of the current worktree (`all_worktrees` widens to
        the workspace), every branch unless `branch` is given, and only the version of each
        session that reads show (`include_hidden` adds older/poorer versions and superseded
        summaries). Summaries belong to no worktree; with `branch` given, only summaries of
        that branch match (workspace-wide ones only when no branch is given). The result
        says how many vectors of the model the scope left out."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInputError(f"k must be a positive integer, got {k!r}")
        model = _check_model(model)
        if branch is not None and not isinstance(branch, str):
            raise InvalidInputError(f"branch must be a string, got {branch!r}")
        ctx = self._ctx
        flt = _Filter(
            model,
            _kinds(kinds),
            branch,
            None if all_worktrees else ctx.worktree_pk,
            bool(include_hidden),
        )
        q = _as_float32(query, "query", 1)[0]
        q64 = q.astype(np.float64)
        q64 /= math.sqrt(float(q64 @ q64))
        q32 = q64.astype(np.float32)
        with self._lock, ctx.db.read() as conn:
            dim, generation, total, pruned = self._model_state(conn, model)
            if q.shape[0] != dim:
                raise InvalidVectorError(
                    f"query has dimension {q.shape[0]}; model {model!r} has {dim}"
                )
            mat = self._current(conn, flt, dim, generation, total, pruned)
            candidates = mat.candidates(q32, k)
            hits = self._rank(conn, candidates, q64, k) if len(candidates) else []
            searched = mat.live
        scope = SearchScope(
            ctx.workspace_uuid,
            model,
            None if all_worktrees else ctx.worktree_key,
            branch,
            flt.kinds,
            flt.include_hidden,
        )
        return SearchResult(hits, scope, searched, max(0, total - searched))

    def search_like(
        self,
        owner: OwnerLike,
        k: int = 10,
        *,
        model: str,
        branch: str | None = None,
        kinds: OwnerKind | Iterable[OwnerKind] | None = None,
        all_worktrees: bool = False,
        include_hidden: bool = False,
    ) -> SearchResult:
        """The owners nearest to `owner`'s own stored vector, the owner itself left out."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInputError(f"k must be a positive integer, got {k!r}")
        o = Owner.of(owner)
        vector = self.get(o, model=model)
        if vector is None:
            raise NotFoundError(f"{o} has no vector for model {model!r}")
        result = self.search(
            vector,
            k + 1,
            model=model,
            branch=branch,
            kinds=kinds,
            all_worktrees=all_worktrees,
            include_hidden=include_hidden,
        )
        hits = [h for h in result.hits if h.owner != o][:k]
        return SearchResult(hits, result.scope, result.searched, result.outside)

    def stats(self) -> VectorStats:
        """Per model: dimension, vector counts by kind, hidden (older versions, superseded
        summaries), orphans and rows whose dimension disagrees with the model's."""
        return vector_stats(self._ctx)

    # -- the cache ------------------------------------------------------------------

    @property
    def cache_limit(self) -> int:
        return self._cache.limit

    @cache_limit.setter
    def cache_limit(self, nbytes: int) -> None:
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
            raise InvalidInputError(f"cache_limit must be a byte count >= 0, got {nbytes!r}")
        with self._lock:
            self._cache.limit = nbytes
            while self._cache.entries and self._cache.nbytes > nbytes:
                self._cache.entries.popitem(last=False)

    def cache_info(self) -> CacheInfo:
        with self._lock:
            c = self._cache
            return CacheInfo(
                c.limit,
                c.nbytes,
                len(c.entries),
                sum(m.live for m in c.entries.values()),
                c.builds,
                c.refreshes,
                c.hits,
            )

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.entries.clear()

    # -- internals ------------------------------------------------------------------

    def _model_state(self, conn: Any, model: str) -> tuple[int, int, int, int]:
        """The one small read every search makes: the model's dimension and generation."""
        rows = conn.execute(
            "SELECT m.dim, coalesce(g.generation, 0), coalesce(g.vectors, 0),"
            " coalesce(g.pruned_through, 0)"
            " FROM vector_models m LEFT JOIN vector_generations g"
            "   ON g.workspace_id = m.workspace_id AND g.model = m.model"
            " WHERE m.workspace_id = ? AND m.model = ?",
            (self._ctx.workspace_pk, model),
        ).fetchall()
        if not rows:
            known = ", ".join(sorted(self.models())) or "none"
            raise UnknownModelError(
                f"no vectors of model {model!r} in this workspace (models: {known})"
            )
        dim, generation, total, pruned = (int(x) for x in rows[0])
        return dim, generation, total, pruned

    def _current(
        self, conn: Any, flt: _Filter, dim: int, generation: int, total: int, pruned: int
    ) -> _Matrix:
        """This filter's matrix as of `generation`: cached, caught up from the change log, or
        read whole. Runs inside the search's read transaction, so the generation and the rows
        are one snapshot."""
        key = (self._ctx.workspace_pk, flt)
        mat = self._cache.get(key)
        if mat is not None and mat.generation == generation:
            self._cache.hits += 1
            return mat
        behind = generation - mat.generation if mat is not None else 0
        if (
            mat is not None
            and mat.dim == dim
            and mat.generation >= pruned
            and behind <= max(LOG_MIN_GENERATIONS, total // 4)
        ):
            self._refresh(conn, flt, mat, generation)
            self._cache.refreshes += 1
        else:
            mat = self._build(conn, flt, dim, generation, total)
            self._cache.builds += 1
        self._cache.keep(key, mat)
        return mat

    def _build(self, conn: Any, flt: _Filter, dim: int, generation: int, total: int) -> _Matrix:
        where, params = flt.where(self._ctx.workspace_pk)
        # The model's row count (same snapshot) bounds the filter's, so one allocation
        # normally serves; what the filter left unused is trimmed below.
        mat = _Matrix(
            dim,
            generation,
            _high(conn),
            np.empty((total + 64, dim), dtype=np.float32),
            np.full(total + 64, -1, dtype=np.int64),
            0,
        )
        cursor = conn.execute(f"SELECT v.id, v.embedding{_FROM} WHERE {where}", params)
        while batch := list(itertools.islice(cursor, _NORMALISE_CHUNK)):
            mat.extend([vid for vid, _ in batch], b"".join(blob for _, blob in batch))
        mat.trim()
        return mat

    def _refresh(self, conn: Any, flt: _Filter, mat: _Matrix, generation: int) -> None:
        where, params = flt.where(self._ctx.workspace_pk)
        # Rows added since: a rowid range (NOT INDEXED keeps the planner off the scope
        # index, which would walk the whole model to find them).
        added = {
            int(vid): bytes(blob)
            for vid, blob in conn.execute(
                f"SELECT v.id, v.embedding FROM vectors AS v NOT INDEXED{_JOINS}"
                f" WHERE v.id > ? AND {where}",
                [mat.high, *params],
            )
        }
        logged = [
            int(v)
            for (v,) in conn.execute(
                "SELECT DISTINCT vector_id FROM vector_changes"
                " WHERE workspace_id = ? AND model = ? AND generation > ?",
                (self._ctx.workspace_pk, flt.model, mat.generation),
            )
        ]
        if logged:
            # Probe the logged rows by id rather than walk the filter.
            added.update(
                (int(vid), bytes(blob))
                for vid, blob in conn.execute(
                    f"SELECT v.id, v.embedding FROM json_each(?) AS j CROSS JOIN vectors AS v"
                    f" ON v.id = j.value{_JOINS} WHERE {where}",
                    [json.dumps(logged), *params],
                )
            )
        if added or logged:
            mat.apply(sorted({*logged, *added}), list(added.items()))
        mat.generation, mat.high = generation, _high(conn)

    def _rank(
        self, conn: Any, candidates: npt.NDArray[np.int64], q64: npt.NDArray[np.float64], k: int
    ) -> list[Hit]:
        """Exact cosines of the candidates from their stored bytes, then the documented
        order. Each row is reduced on its own, so identical vectors score identically."""
        rows = conn.execute(
            "SELECT v.owner_kind, e.id, v.summary_id, v.branch, v.worktree_id, v.embedding"
            " FROM json_each(?) AS j CROSS JOIN vectors AS v ON v.id = j.value"
            " LEFT JOIN journal_entries e ON e.seq = v.entry_seq",
            (json.dumps(candidates.tolist()),),
        ).fetchall()
        raw = np.frombuffer(b"".join(r[5] for r in rows), dtype="<f4")
        raw64 = raw.reshape(len(rows), -1).astype(np.float64)
        cosines = ((raw64 * q64).sum(axis=1) / np.sqrt((raw64 * raw64).sum(axis=1))).tolist()
        # (-score, entries first, entry id, summary id): the documented order.
        keys = [
            (-c, 0, bytes(r[1]).hex(), 0) if r[0] == "entry" else (-c, 1, "", int(r[2]))
            for r, c in zip(rows, cosines, strict=True)
        ]
        top = sorted(range(len(rows)), key=keys.__getitem__)[:k]
        hits = []
        for i in top:
            r, key = rows[i], keys[i]
            owner = Owner("entry", key[2]) if key[1] == 0 else Owner("summary", key[3])
            worktree = self._ctx.worktree_key_of(int(r[4])) if r[4] is not None else None
            hits.append(Hit(owner, min(1.0, max(-1.0, -key[0])), r[3], worktree))
        return hits


def _high(conn: Any) -> int:
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM vectors").fetchall()[0][0])


_Resolved = tuple[int | None, int | None, str | None, int | None, int | None]


def _resolve(conn: Any, ws: int, owners: list[Owner], model: str = "") -> list[_Resolved]:
    """(entry_seq, summary_id, branch, worktree_id, id of its vector for `model` or None) per
    owner, in one query per kind; UnknownOwnerError names the first owner that is not in this
    workspace."""
    entries = [str(o.id) for o in owners if o.kind == "entry"]
    summaries = [int(o.id) for o in owners if o.kind == "summary"]
    found_e: dict[str, tuple[int, str, int, int | None]] = {}
    found_s: dict[int, tuple[str | None, int | None]] = {}
    # CROSS JOIN fixes the loop order: one unique-index probe per owner asked for, never a
    # walk of the workspace's rows (which the planner otherwise prefers for `workspace_id`).
    if entries:
        found_e = {
            str(h): (int(seq), str(b), int(wt), v)
            for h, seq, b, wt, v in conn.execute(
                "SELECT j.value, e.seq, e.branch, e.worktree_id, v.id"
                " FROM json_each(?) AS j CROSS JOIN journal_entries AS e ON e.id = unhex(j.value)"
                " LEFT JOIN vectors v ON v.entry_seq = e.seq AND v.model = ?"
                " WHERE e.workspace_id = ?",
                (json.dumps(entries), model, ws),
            )
        }
    if summaries:
        found_s = {
            int(i): (b, v)
            for i, b, v in conn.execute(
                "SELECT s.id, s.branch, v.id FROM json_each(?) AS j CROSS JOIN summaries AS s"
                " ON s.id = j.value LEFT JOIN vectors v ON v.summary_id = s.id AND v.model = ?"
                " WHERE s.workspace_id = ?",
                (json.dumps(summaries), model, ws),
            )
        }
    out: list[_Resolved] = []
    for o in owners:
        if o.kind == "entry":
            hit = found_e.get(str(o.id))
            if hit is None:
                raise UnknownOwnerError(f"no entry {o.id} in this workspace")
            out.append((hit[0], None, hit[1], hit[2], hit[3]))
        else:
            found = found_s.get(int(o.id))
            if found is None:
                raise UnknownOwnerError(f"no summary {o.id} in this workspace")
            out.append((None, int(o.id), found[0], None, found[1]))
    return out


def _prune_log(conn: Any, ws: int, model: str) -> None:
    """Keep the change log to what a cache could still use to catch up (see _current);
    amortised: trims only once the log holds twice what it must keep."""
    rows = conn.execute(
        "SELECT generation, vectors, pruned_through FROM vector_generations"
        " WHERE workspace_id = ? AND model = ?",
        (ws, model),
    ).fetchall()
    if not rows:
        return
    generation, count, pruned = (int(x) for x in rows[0])
    keep = max(LOG_MIN_GENERATIONS, count // 4)
    if generation - pruned <= 2 * keep:
        return
    cut = generation - keep
    conn.execute(
        "DELETE FROM vector_changes WHERE workspace_id = ? AND model = ? AND generation <= ?",
        (ws, model, cut),
    )
    conn.execute(
        "UPDATE vector_generations SET pruned_through = ? WHERE workspace_id = ? AND model = ?",
        (cut, ws, model),
    )
