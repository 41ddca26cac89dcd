"""The local vector table (`store.vectors`): hosts store embeddings of journal entries and
summaries (the store never computes them) and search them by cosine similarity, scoped
like journal reads (scope.py). numpy is loaded by this module, matrix.py and validate.py
only, when a host first uses vectors; the journal path never loads it.

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

import json
import math
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import scope
from ..checks import require_bool, require_int, require_list, require_model, require_vector_dim
from ..context import StoreContext
from ..db import as_bytes, as_int, checkpoint
from ..errors import (
    InvalidOwnerError,
    InvalidVectorError,
    NotFoundError,
    UnknownModelError,
    UnknownOwnerError,
)
from ..timestamps import utc_now_iso
from . import matrix as cache
from .matrix import Filter, Matrix, MatrixCache, build, refresh
from .owners import Owner, OwnerKind, OwnerLike, check_kinds
from .results import CacheInfo, Hit, PutResult, SearchResult, SearchScope
from .stats import VectorStats, vector_stats
from .validate import Float32Matrix, as_float32

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection

    from ..db import Hold

# A matrix cache larger than this is used for the search that built it and then dropped;
# hosts with bigger workspaces raise it (100k x 384 float32 is 147 MiB).
DEFAULT_CACHE_BYTES = 512 * 1024 * 1024


_INSERT = (
    "INSERT INTO vectors (workspace_id, model, dim, entry_seq, summary_id, owner_kind, branch,"
    " worktree_id, embedding, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)"
)
# Re-storing an identical vector writes nothing, so it does not invalidate any cache.
_REPLACE = "UPDATE vectors SET embedding = ?1, created_at = ?2 WHERE id = ?3 AND embedding <> ?1"


class Vectors:
    """`store.vectors`. Each Store has its own matrix cache (bounded by `cache_limit` bytes);
    any write to the vector table, by this or any other process, is seen by the next search."""

    def __init__(self, ctx: StoreContext, *, hold: Hold | None = None) -> None:
        self._ctx = ctx
        # Holds replication still and purges this machine's replica history while a delete
        # empties the WAL (composed in by the store when it syncs, as forget's).
        self._hold = hold
        self._cache = MatrixCache(DEFAULT_CACHE_BYTES)
        self._lock = threading.Lock()

    # -- writing --------------------------------------------------------------------

    def put(self, owner: OwnerLike, vector: object, *, model: str) -> PutResult:
        """Store (or replace) `owner`'s vector for `model`. The first vector of a model in
        this workspace fixes its dimension. Raises InvalidVectorError / InvalidOwnerError /
        UnknownOwnerError and writes nothing on bad input."""
        return self._put([Owner.of(owner)], as_float32(vector, "vector", 1), model)

    def put_many(self, owners: Sequence[OwnerLike], vectors: object, *, model: str) -> PutResult:
        """All or nothing: `vectors` is a 2-D array with one row per owner (row i belongs to
        owners[i]); one bad row or unknown owner rejects the whole batch before any write."""
        owner_list = [
            Owner.of(o)
            for o in require_list(
                "owners", owners, iterable=True, what="a list of owners", error=InvalidOwnerError
            )
        ]
        if not owner_list:
            model = require_model(model)
            if np.size(np.asarray(vectors, dtype=object)) != 0:
                raise InvalidVectorError("vectors given for an empty list of owners")
            rows = self._ctx.db.query(
                "SELECT dim FROM vector_models WHERE workspace_id = ? AND model = ?",
                (self._ctx.workspace_pk, model),
            )
            return PutResult(model, as_int(rows[0][0]) if rows else None, 0, 0)
        matrix = as_float32(vectors, "vectors", 2)
        if matrix.shape[0] != len(owner_list):
            raise InvalidVectorError(f"{len(owner_list)} owners but {matrix.shape[0]} vector rows")
        return self._put(owner_list, matrix, model)

    def _put(self, owners: list[Owner], matrix: Float32Matrix, model: str) -> PutResult:
        model = require_model(model)
        seen: set[Owner] = set()
        for o in owners:
            if o in seen:
                raise InvalidOwnerError(f"{o} appears twice in one batch")
            seen.add(o)
        dim = require_vector_dim("dimension", int(matrix.shape[1]), error=InvalidVectorError)
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
            if conn.execute(_ANY_TOMBSTONE, (ws, model)).fetchall():
                # A put after a delete wins over it (here, and on every machine: sync/).
                conn.executemany(
                    "DELETE FROM vector_tombstones WHERE workspace_id = ? AND model = ?"
                    " AND owner_kind = ? AND owner = ?",
                    [(ws, model, kind, uid) for kind, uid in _content_ids(conn, ws, owners)],
                )
            _prune_log(conn, ws, model)
        return PutResult(model, dim, len(inserts), len(replaces))

    def delete(self, owner: OwnerLike, *, model: str | None = None) -> int:
        """Delete `owner`'s vectors (of one model, or all); returns how many were deleted."""
        o = Owner.of(owner)
        if model is not None:
            model = require_model(model)
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
            # Recorded, so a machine that still has the vector cannot bring it back (an
            # owner without a content id, a summary from before v7, does not travel).
            now = utc_now_iso()
            conn.executemany(
                "INSERT INTO vector_tombstones (workspace_id, owner_kind, owner, model,"
                " deleted_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE"
                " SET deleted_at = excluded.deleted_at",
                [
                    (ws, kind, uid, m, now)
                    for kind, uid in _content_ids(conn, ws, [o])
                    for m in sorted(set(models))
                ],
            )
            for m in set(models):
                _prune_log(conn, ws, m)
        if models:
            self._empty_wal()
        return len(models)

    def _empty_wal(self) -> None:
        """A delete is a removal, and every removal purges (docs/sync.md): secure_delete
        zeroed the rows' pages, and the WAL frames and this machine's replica history that
        still hold the embedding go too, with replication held still meanwhile."""
        db = self._ctx.db
        if self._hold is None:
            with db.lock:
                checkpoint(db.conn)
            return
        with self._hold(), db.lock:
            checkpoint(db.conn)

    # -- reading --------------------------------------------------------------------

    def get(self, owner: OwnerLike, *, model: str) -> npt.NDArray[np.float32] | None:
        """The stored vector (float32, as put), or None when the owner has none for `model`."""
        o = Owner.of(owner)
        model = require_model(model)
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
            str(m): as_int(d)
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
        says how many vectors of the model lie elsewhere, as a read counts (`elsewhere`)."""
        require_int("k", k, minimum=1)
        model = require_model(model)
        ctx = self._ctx
        where = scope.keys(ctx, branch, all_worktrees)
        flt = Filter(
            model,
            check_kinds(kinds),
            where.branch,
            where.worktree_pk,
            require_bool("include_hidden", include_hidden),
        )
        q = as_float32(query, "query", 1)[0]
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
            elsewhere = scope.Elsewhere(*mat.elsewhere)
        scope_of = SearchScope(
            ctx.workspace_uuid,
            model,
            where.public(ctx).worktree,
            branch,
            flt.kinds,
            flt.include_hidden,
        )
        return SearchResult(hits, scope_of, searched, elsewhere)

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
        require_int("k", k, minimum=1)
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
        return SearchResult(hits, result.scope, result.searched, result.elsewhere)

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
        require_int("cache_limit", nbytes, minimum=0)
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

    def _model_state(self, conn: Connection, model: str) -> tuple[int, int, int, int]:
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
        dim, generation, total, pruned = (as_int(x) for x in rows[0])
        return dim, generation, total, pruned

    def _current(
        self, conn: Connection, flt: Filter, dim: int, generation: int, total: int, pruned: int
    ) -> Matrix:
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
            and behind <= max(cache.LOG_MIN_GENERATIONS, total // 4)
        ):
            refresh(conn, flt, self._ctx.workspace_pk, mat, generation)
            self._cache.refreshes += 1
        else:
            mat = build(conn, flt, self._ctx.workspace_pk, dim, generation, total)
            self._cache.builds += 1
        self._cache.keep(key, mat)
        return mat

    def _rank(
        self,
        conn: Connection,
        candidates: npt.NDArray[np.int64],
        q64: npt.NDArray[np.float64],
        k: int,
    ) -> list[Hit]:
        """Exact cosines of the candidates from their stored bytes, then the documented
        order. Each row is reduced on its own, so identical vectors score identically."""
        rows = conn.execute(
            "SELECT v.owner_kind, e.id, v.summary_id, v.branch, v.worktree_id, v.embedding"
            " FROM json_each(?) AS j CROSS JOIN vectors AS v ON v.id = j.value"
            " LEFT JOIN journal_entries e ON e.seq = v.entry_seq",
            (json.dumps(candidates.tolist()),),
        ).fetchall()
        raw = np.frombuffer(b"".join(as_bytes(r[5]) for r in rows), dtype="<f4")
        raw64 = raw.reshape(len(rows), -1).astype(np.float64)
        cosines = ((raw64 * q64).sum(axis=1) / np.sqrt((raw64 * raw64).sum(axis=1))).tolist()
        # (-score, entries first, entry id, summary id): the documented order.
        keys = [
            (-c, 0, as_bytes(r[1]).hex(), 0) if r[0] == "entry" else (-c, 1, "", as_int(r[2]))
            for r, c in zip(rows, cosines, strict=True)
        ]
        top = sorted(range(len(rows)), key=keys.__getitem__)[:k]
        hits = []
        for i in top:
            r, key = rows[i], keys[i]
            owner = Owner("entry", key[2]) if key[1] == 0 else Owner("summary", key[3])
            worktree = self._ctx.worktree_key_of(int(r[4])) if r[4] is not None else None
            hits.append(
                Hit(
                    owner,
                    min(1.0, max(-1.0, -key[0])),
                    str(r[3]) if r[3] is not None else None,
                    worktree,
                )
            )
        return hits


_Resolved = tuple[int | None, int | None, str | None, int | None, int | None]


def _resolve(conn: Connection, ws: int, owners: list[Owner], model: str = "") -> list[_Resolved]:
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
                " FROM json_each(?) AS j CROSS JOIN journal_entries AS e"
                " ON e.workspace_id = ? AND e.id = unhex(j.value)"
                " LEFT JOIN vectors v ON v.entry_seq = e.seq AND v.model = ?",
                (json.dumps(entries), ws, model),
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


_ANY_TOMBSTONE = "SELECT 1 FROM vector_tombstones WHERE workspace_id = ? AND model = ? LIMIT 1"


def _content_ids(conn: Connection, ws: int, owners: list[Owner]) -> list[tuple[str, bytes]]:
    """(kind, content id) of each owner that has one: an entry's id, a summary's uid (the
    names every machine knows it by)."""
    out: list[tuple[str, bytes]] = []
    for o in owners:
        if o.kind == "entry":
            out.append(("entry", bytes.fromhex(str(o.id))))
            continue
        rows = conn.execute(
            "SELECT uid FROM summaries WHERE id = ? AND workspace_id = ? AND uid IS NOT NULL",
            (int(o.id), ws),
        ).fetchall()
        if rows:
            out.append(("summary", as_bytes(rows[0][0])))
    return out


def _prune_log(conn: Connection, ws: int, model: str) -> None:
    """Keep the change log to what a cache could still use to catch up (see _current);
    amortised: trims only once the log holds twice what it must keep."""
    rows = conn.execute(
        "SELECT generation, vectors, pruned_through FROM vector_generations"
        " WHERE workspace_id = ? AND model = ?",
        (ws, model),
    ).fetchall()
    if not rows:
        return
    generation, count, pruned = (as_int(x) for x in rows[0])
    keep = max(cache.LOG_MIN_GENERATIONS, count // 4)
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
