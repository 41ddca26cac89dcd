"""The one definition of derived state: which version of a session reads show (`head_ws`,
`head_wt`), the per-scope counts
(`journal_counts_ws`, `journal_counts_wt`) and what vector search relies on (each vector's
copies of its owner's branch and worktree, the per-model row counts of
`vector_generations`, no orphans).

And the summaries' supersede chain (`superseded_by`: each summary points at the next one
of its scope, so exactly one per scope is current), which summaries.py keeps.

The triggers of schema.sql keep this state right incrementally, and journal/bulk.py replays
the insert trigger for batches; the SQL here says what the state *is*, from the entry rows
alone, so it can `check` any store against it (doctor, the tests' oracle) and `rebuild`
it (doctor --repair). Nothing derived is the only copy of a fact: every column below can
be recomputed from the entries.

The dedup order is journal/order.py's: within a session the head is the version first in
that order; a version without a session id is its own head. (The tie order, `sid_order`,
is written with each row from its content: not derived from other rows.)"""

from __future__ import annotations

import json

from ._record import Frozen
from .db import as_int
from .journal.order import order_by

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from apsw import Connection, SQLiteValue

    from .db import Row

    # A scope's heads by the definition: (workspace, worktree, branch, heads_ws,
    # meaningful_ws, heads_wt, meaningful_wt), summed per (workspace, worktree, branch).
    Scope = tuple[int, int, str, int, int, int, int]

_ORDER = order_by()
# The head_ws and head_wt a row of journal_entries has by the definition: window columns
# over the rows a statement reads (which must hold whole sessions).
HEAD_WS = f"""CASE WHEN session_id = '' THEN 1
            ELSE row_number() OVER (PARTITION BY workspace_id, session_id
                                    ORDER BY {_ORDER}) = 1 END"""
HEAD_WT = f"""CASE WHEN session_id = '' THEN 1
            ELSE row_number() OVER (PARTITION BY workspace_id, worktree_id, session_id
                                    ORDER BY {_ORDER}) = 1 END"""


def expected_entries_sql(where: str, *, stored: bool = False) -> str:
    """seq with the head_ws and head_wt the definition gives it, for the rows matching
    `where` (which must take whole sessions: a window sees only those rows); with `stored`,
    also the stored ones (stored_ws, stored_wt), so a check needs no join back."""
    kept = "head_ws AS stored_ws, head_wt AS stored_wt," if stored else ""
    return f"""
SELECT seq, {kept}
       {HEAD_WS} AS head_ws,
       {HEAD_WT} AS head_wt
  FROM journal_entries
 WHERE {where}"""


def _counts_ws_sql(where: str, *, stored_heads: bool = False) -> str:
    """The journal_counts_ws rows the definition gives; with `stored_heads`, counted from
    the stored heads (the same rows once the heads are known to be right, with no window
    over the history: bench/RESULTS.md, row 'doctor: counts from heads')."""
    if stored_heads:
        return f"""
SELECT workspace_id, branch, sum(head_ws), sum(head_ws * meaningful) FROM journal_entries
 WHERE {where} GROUP BY workspace_id, branch HAVING sum(head_ws) > 0"""
    return f"""
SELECT e.workspace_id, e.branch, sum(w.head_ws), sum(w.head_ws * e.meaningful)
  FROM journal_entries e JOIN ({expected_entries_sql(where)}) w ON w.seq = e.seq
 GROUP BY e.workspace_id, e.branch HAVING sum(w.head_ws) > 0"""


def _counts_wt_sql(where: str, *, stored_heads: bool = False) -> str:
    """journal_counts_wt's rows by the definition (see _counts_ws_sql)."""
    if stored_heads:
        return f"""
SELECT workspace_id, worktree_id, branch, sum(head_wt), sum(head_wt * meaningful)
  FROM journal_entries
 WHERE {where} GROUP BY workspace_id, worktree_id, branch HAVING sum(head_wt) > 0"""
    return f"""
SELECT e.workspace_id, e.worktree_id, e.branch, sum(w.head_wt), sum(w.head_wt * e.meaningful)
  FROM journal_entries e JOIN ({expected_entries_sql(where)}) w ON w.seq = e.seq
 GROUP BY e.workspace_id, e.worktree_id, e.branch HAVING sum(w.head_wt) > 0"""


class Difference(Frozen):
    """One way the stored derived state differs from its definition."""

    __slots__ = ("kind", "count", "detail", "sample", "rows")
    kind: str  # heads | counts_ws | counts_wt | vector_copies | summary_chain | ...
    count: int  # rows that differ
    detail: str  # one readable sentence
    sample: tuple[Any, ...]  # a few of the rows, for a person to look at
    rows: tuple[Any, ...]  # all of them, for a repair that fixes just these (not in to_dict)

    def __init__(
        self,
        kind: str,
        count: int,
        detail: str,
        sample: Row,
        rows: Row = (),
    ) -> None:
        self._set(kind=kind, count=count, detail=detail, sample=sample, rows=rows or sample)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "count": self.count,
            "detail": self.detail,
            "sample": [list(s) if isinstance(s, tuple) else s for s in self.sample],
        }


class EntryState(Frozen):
    """The part of the derived state that follows from the entry rows alone, as one pass
    over every row of the file computed it by the definition (doctor/journal_pass.py),
    for `check` to compare with what is stored instead of reading the rows again."""

    __slots__ = ("heads", "scopes")
    # (seq, stored head_ws, head_ws, stored head_wt, head_wt) of every row whose stored
    # heads differ from the definition's, by seq.
    heads: tuple[Row, ...]
    scopes: tuple[Scope, ...]  # every (workspace, worktree, branch) that holds entries

    def __init__(self, heads: Iterable[Row], scopes: Iterable[Scope]) -> None:
        self._set(heads=tuple(heads), scopes=tuple(scopes))

    def counts_ws(self) -> list[tuple[int, str, int, int]]:
        """journal_counts_ws's rows by the definition, in its key order."""
        sums: dict[tuple[int, str], tuple[int, int]] = {}
        for ws, _, branch, heads, meaningful, _, _ in self.scopes:
            h, m = sums.get((ws, branch), (0, 0))
            sums[ws, branch] = (h + heads, m + meaningful)
        return [(ws, b, h, m) for (ws, b), (h, m) in sorted(sums.items()) if h > 0]

    def counts_wt(self) -> list[tuple[int, int, str, int, int]]:
        """journal_counts_wt's rows by the definition, in its key order."""
        return sorted((ws, wt, b, h, m) for ws, wt, b, _, _, h, m in self.scopes if h > 0)


def _scope(workspace_pk: int | None, alias: str = "") -> tuple[str, list[SQLiteValue]]:
    a = f"{alias}." if alias else ""
    if workspace_pk is None:
        return "1", []
    return f"{a}workspace_id = ?", [workspace_pk]


def _rows(conn: Connection, sql: str, params: Iterable[SQLiteValue]) -> list[Row]:
    rows: list[tuple[Any, ...]] = conn.execute(sql, list(params)).fetchall()
    return rows


def check(
    conn: Connection, workspace_pk: int | None = None, *, entries: EntryState | None = None
) -> list[Difference]:
    """Every difference between the stored derived state and its definition, for one
    workspace or the whole file. Read-only; run inside one read transaction for a
    consistent answer. `entries`: the whole file's heads and their sums by the definition,
    computed already in this transaction (then the entry rows are not read here)."""
    if entries is not None and workspace_pk is not None:
        raise ValueError("a pass's entry state covers the whole file, not one workspace")
    where, params = _scope(workspace_pk)
    out: list[Difference] = []
    heads = (
        list(entries.heads)
        if entries is not None
        else _rows(
            conn,
            f"""
        SELECT seq, stored_ws, head_ws, stored_wt, head_wt
          FROM ({expected_entries_sql(where, stored=True)})
         WHERE stored_ws IS NOT head_ws OR stored_wt IS NOT head_wt
         ORDER BY seq""",
            params,
        )
    )
    if heads:
        out.append(
            Difference(
                "heads",
                len(heads),
                f"{len(heads)} entry versions have head_ws/head_wt different"
                " from the dedup rule (reads show the wrong version, or none, of their session)",
                tuple((r[0], r[1], r[2], r[3], r[4]) for r in heads[:5]),
                tuple(as_int(r[0]) for r in heads),
            )
        )
    # Right heads (no difference above) give the counts by a plain sum of them.
    stored_heads = not heads
    for kind, table, keys, want, given in (
        (
            "counts_ws",
            "journal_counts_ws",
            "workspace_id, branch",
            _counts_ws_sql(where, stored_heads=stored_heads),
            None if entries is None else entries.counts_ws(),
        ),
        (
            "counts_wt",
            "journal_counts_wt",
            "workspace_id, worktree_id, branch",
            _counts_wt_sql(where, stored_heads=stored_heads),
            None if entries is None else entries.counts_wt(),
        ),
    ):
        got = _rows(
            conn,
            f"SELECT {keys}, heads, meaningful FROM {table}"
            f" WHERE {where} AND (heads <> 0 OR meaningful <> 0)",
            params,
        )
        wanted = given if given is not None else _rows(conn, want, params)
        # Each side once (an EXCEPT both ways ran the definition twice); few rows: one per
        # scope, not per entry.
        got_set, wanted_set = set(got), set(wanted)
        diff = [r for r in got if r not in wanted_set] + [r for r in wanted if r not in got_set]
        if diff:
            out.append(
                Difference(
                    kind,
                    len(diff),
                    f"{table} differs from the heads in {len(diff)} scope rows"
                    " (reads report a wrong total or elsewhere)",
                    tuple(diff[:5]),
                    tuple(diff),
                )
            )
    vwhere, vparams = _scope(workspace_pk, "v")
    copies = _rows(
        conn,
        f"""
        SELECT v.id FROM vectors v JOIN journal_entries e ON e.seq = v.entry_seq
         WHERE {vwhere} AND (v.branch IS NOT e.branch OR v.worktree_id IS NOT e.worktree_id
                             OR v.workspace_id <> e.workspace_id)
        UNION ALL
        SELECT v.id FROM vectors v JOIN summaries s ON s.id = v.summary_id
         WHERE {vwhere} AND (v.branch IS NOT s.branch OR v.worktree_id IS NOT NULL
                             OR v.workspace_id <> s.workspace_id)""",
        vparams * 2,
    )
    if copies:
        out.append(
            Difference(
                "vector_copies",
                len(copies),
                f"{len(copies)} vectors carry a branch, worktree or"
                " workspace different from their owner's (searches scope them wrongly)",
                tuple(r[0] for r in copies[:5]),
            )
        )
    orphans = _rows(
        conn,
        f"""
        SELECT v.id FROM vectors v
         WHERE {vwhere} AND ((v.entry_seq IS NOT NULL AND NOT EXISTS
                               (SELECT 1 FROM journal_entries e WHERE e.seq = v.entry_seq))
                          OR (v.summary_id IS NOT NULL AND NOT EXISTS
                               (SELECT 1 FROM summaries s WHERE s.id = v.summary_id)))""",
        vparams,
    )
    if orphans:
        out.append(
            Difference(
                "orphan_vectors",
                len(orphans),
                f"{len(orphans)} vectors belong to no entry or"
                " summary (written or left behind around the triggers)",
                tuple(r[0] for r in orphans[:5]),
            )
        )
    gwhere, gparams = _scope(workspace_pk)
    gens = _rows(
        conn,
        f"""
        SELECT workspace_id, model, vectors, (SELECT count(*) FROM vectors v
                WHERE v.workspace_id = g.workspace_id AND v.model = g.model)
          FROM vector_generations g WHERE {gwhere}
        EXCEPT SELECT workspace_id, model, vectors, vectors FROM vector_generations
        UNION ALL
        SELECT v.workspace_id, v.model, 0, count(*) FROM vectors v WHERE {vwhere}
           AND NOT EXISTS (SELECT 1 FROM vector_generations g
                            WHERE g.workspace_id = v.workspace_id AND g.model = v.model)
         GROUP BY v.workspace_id, v.model""",
        gparams + vparams,
    )
    if gens:
        out.append(
            Difference(
                "vector_counts",
                len(gens),
                f"vector_generations counts differ from the vectors"
                f" for {len(gens)} models (searches misreport what they left out)",
                tuple(gens[:5]),
            )
        )
    chains = _rows(conn, _chain_sql(where), params)
    if chains:
        out.append(
            Difference(
                "summary_chain",
                len(chains),
                f"{len(chains)} summaries point at a successor other than the next summary of"
                " their scope (two current summaries in a scope, or a broken history)",
                tuple(chains[:5]),
                tuple(chains),
            )
        )
    return out


def _chain_sql(where: str) -> str:
    """(id, superseded_by, the successor the definition gives) of every summary whose link
    is wrong: each summary is superseded by the next one of its scope (workspace, branch,
    kind) in creation order, the newest by none, so exactly one per scope is current."""
    return f"""
SELECT id, superseded_by, successor FROM (
    SELECT id, superseded_by,
           lead(id) OVER (PARTITION BY workspace_id, branch, kind ORDER BY created_us, id)
               AS successor
      FROM summaries WHERE {where})
 WHERE superseded_by IS NOT successor"""


def rebuild_summary_chains(conn: Connection, workspace_pk: int | None = None) -> int:
    """Relink every summary to its successor by the definition (inside the caller's
    write); how many links changed."""
    where, params = _scope(workspace_pk)
    wrong = _rows(conn, _chain_sql(where), params)
    conn.executemany(
        "UPDATE summaries SET superseded_by = ? WHERE id = ?", [(r[2], r[0]) for r in wrong]
    )
    return len(wrong)


def recount(
    conn: Connection, workspace_pk: int, branch: str, worktree_pk: int | None = None
) -> None:
    """Set one count row (the workspace's, or with `worktree_pk` the worktree's, on
    `branch`) from the stored heads (inside the caller's write; correct once the heads
    are): the per-scope repair, one index range instead of a pass over every entry."""
    if worktree_pk is None:
        conn.execute(
            "DELETE FROM journal_counts_ws WHERE workspace_id = ? AND branch = ?",
            (workspace_pk, branch),
        )
        conn.execute(
            "INSERT INTO journal_counts_ws (workspace_id, branch, heads, meaningful)"
            " SELECT ?, ?, count(*), coalesce(sum(meaningful), 0) FROM journal_entries"
            " WHERE workspace_id = ? AND branch = ? AND head_ws = 1 HAVING count(*) > 0",
            (workspace_pk, branch, workspace_pk, branch),
        )
        return
    conn.execute(
        "DELETE FROM journal_counts_wt WHERE workspace_id = ? AND worktree_id = ? AND branch = ?",
        (workspace_pk, worktree_pk, branch),
    )
    conn.execute(
        "INSERT INTO journal_counts_wt (workspace_id, worktree_id, branch, heads, meaningful)"
        " SELECT ?, ?, ?, count(*), coalesce(sum(meaningful), 0) FROM journal_entries"
        " WHERE workspace_id = ? AND worktree_id = ? AND branch = ? AND head_wt = 1"
        " HAVING count(*) > 0",
        (workspace_pk, worktree_pk, branch, workspace_pk, worktree_pk, branch),
    )


class Rebuilt(Frozen):
    """What a rebuild changed, per kind of derived state (rows written)."""

    __slots__ = ("heads", "counts", "vectors", "orphan_vectors", "summary_links")
    heads: int
    counts: int
    vectors: int
    orphan_vectors: int
    summary_links: int

    def __init__(
        self,
        heads: int = 0,
        counts: int = 0,
        vectors: int = 0,
        orphan_vectors: int = 0,
        summary_links: int = 0,
    ) -> None:
        self._set(
            heads=heads,
            counts=counts,
            vectors=vectors,
            orphan_vectors=orphan_vectors,
            summary_links=summary_links,
        )

    @property
    def changed(self) -> bool:
        return any(self._values())

    def to_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__slots__}


def rebuild(
    conn: Connection,
    workspace_pk: int | None = None,
    *,
    sessions: Iterable[str] | None = None,
    since_seq: int | None = None,
    counts: bool = True,
) -> Rebuilt:
    """Make the derived state equal its definition, inside the caller's write transaction.

    Whole workspace (or file) by default. With `sessions` (and `workspace_pk`), only those
    sessions plus the session-less versions stored after `since_seq` (a batch's): what a
    bulk insert touched. Heads are corrected by UPDATEs of only the rows that differ, so
    the count and vector triggers follow each change; with `counts` (the default) the
    count tables of the scope are then recomputed whole, which also repairs counts that
    were wrong before (a session-scoped rebuild relies on the triggers instead)."""
    if sessions is not None:
        if workspace_pk is None:
            raise ValueError("a rebuild of some sessions needs their workspace")
        where = (
            "workspace_id = ? AND (session_id IN (SELECT value FROM json_each(?))"
            " OR (session_id = '' AND seq > ?))"
        )
        params: list[Any] = [
            workspace_pk,
            json.dumps(sorted(set(sessions))),
            since_seq if since_seq is not None else 1 << 62,
        ]
        counts = False
    else:
        where, params = _scope(workspace_pk)
    changed_heads = 0
    # Demotions before promotions, so a count never passes through a state with two heads.
    for column, value in (("head_ws", 0), ("head_wt", 0), ("head_ws", 1), ("head_wt", 1)):
        rows = _rows(
            conn,
            f"""
            UPDATE journal_entries SET {column} = {value}
             WHERE seq IN (SELECT w.seq FROM ({expected_entries_sql(where)}) w
                            JOIN journal_entries e ON e.seq = w.seq
                           WHERE w.{column} = {value} AND e.{column} IS NOT {value})
            RETURNING seq""",
            params,
        )
        changed_heads += len(rows)
    changed_counts = changed_vectors = orphans = links = 0
    if counts:
        changed_counts = _rebuild_counts(conn, workspace_pk, where, params)
        changed_vectors, orphans = _rebuild_vectors(conn, workspace_pk)
        links = rebuild_summary_chains(conn, workspace_pk)
    return Rebuilt(changed_heads, changed_counts, changed_vectors, orphans, links)


def move_versions(conn: Connection, workspace_pk: int, target_pk: int, seqs: Iterable[int]) -> int:
    """Move entry versions to the worktree `target_pk`, inside the caller's write: the one
    change an entry row takes after its insert (re-homing an imported source, a merge
    filing a version under the smaller worktree key). The journal_rehome guard row opens
    the window for this transaction only (schema.sql). Demoted first: the count trigger
    takes a head out of its old worktree's counts, and the schema refuses to move a head.
    Each version's vectors move with it (a vector carries a copy of its owner's worktree,
    searches scope by it; the UPDATE bumps the model's generation, so caches re-read it):
    the session rebuild below does not re-copy vector scope. Then the heads of the touched
    sessions are re-elected in both worktrees; a version without a session is always its
    own head, and since_seq brings those back into the rebuild. Returns how many moved."""
    seq_json = json.dumps(sorted(set(seqs)))
    conn.execute("INSERT INTO journal_rehome (workspace_id) VALUES (?)", (workspace_pk,))
    try:
        conn.execute(
            "UPDATE journal_entries SET head_wt = 0"
            " WHERE seq IN (SELECT value FROM json_each(?)) AND head_wt = 1",
            (seq_json,),
        )
        moved = _rows(
            conn,
            "UPDATE journal_entries SET worktree_id = ?"
            " WHERE seq IN (SELECT value FROM json_each(?)) RETURNING seq, session_id",
            (target_pk, seq_json),
        )
        conn.execute(
            "UPDATE vectors SET worktree_id = ?"
            " WHERE entry_seq IN (SELECT value FROM json_each(?))",
            (target_pk, seq_json),
        )
    finally:
        conn.execute("DELETE FROM journal_rehome WHERE workspace_id = ?", (workspace_pk,))
    loose = [as_int(seq) for seq, session in moved if not session]
    rebuild(
        conn,
        workspace_pk,
        sessions={str(session) for _, session in moved if session},
        since_seq=min(loose) - 1 if loose else None,
    )
    return len(moved)


def _rebuild_counts(
    conn: Connection, workspace_pk: int | None, where: str, params: list[SQLiteValue]
) -> int:
    # Called after the heads of `where` were rebuilt: the stored heads are the definition's.
    changed = 0
    for table, keys, want in (
        ("journal_counts_ws", "workspace_id, branch", _counts_ws_sql(where, stored_heads=True)),
        (
            "journal_counts_wt",
            "workspace_id, worktree_id, branch",
            _counts_wt_sql(where, stored_heads=True),
        ),
    ):
        got = (
            f"SELECT {keys}, heads, meaningful FROM {table}"
            f" WHERE {where} AND (heads <> 0 OR meaningful <> 0)"
        )
        diff = _rows(
            conn,
            f"SELECT count(*) FROM (SELECT * FROM ({got} EXCEPT {want})"
            f" UNION ALL SELECT * FROM ({want} EXCEPT {got}))",
            params * 4,
        )
        if not diff[0][0]:
            continue
        changed += int(diff[0][0])
        conn.execute(f"DELETE FROM {table} WHERE {where}", params)
        conn.execute(f"INSERT INTO {table} ({keys}, heads, meaningful) {want}", params)
    return changed


def rebuild_vectors(conn: Connection, workspace_pk: int | None = None) -> tuple[int, int]:
    """The vectors' copies of their owners, their per-model counts, no orphans (inside the
    caller's write): (rows changed, orphans deleted)."""
    return _rebuild_vectors(conn, workspace_pk)


def _rebuild_vectors(conn: Connection, workspace_pk: int | None) -> tuple[int, int]:
    vwhere, vparams = _scope(workspace_pk, "v")
    where, params = _scope(workspace_pk)
    # Orphans first: their owner is gone, so there is nothing to copy from.
    orphans = len(
        _rows(
            conn,
            f"""
        DELETE FROM vectors WHERE id IN (SELECT v.id FROM vectors v
         WHERE {vwhere} AND ((v.entry_seq IS NOT NULL AND NOT EXISTS
                               (SELECT 1 FROM journal_entries e WHERE e.seq = v.entry_seq))
                          OR (v.summary_id IS NOT NULL AND NOT EXISTS
                               (SELECT 1 FROM summaries s WHERE s.id = v.summary_id))))
        RETURNING id""",
            vparams,
        )
    )
    # An UPDATE of a vector bumps its model's generation (schema.sql): caches re-read it.
    copies = len(
        _rows(
            conn,
            f"""
        UPDATE vectors SET branch = e.branch, worktree_id = e.worktree_id
          FROM journal_entries e
         WHERE e.seq = vectors.entry_seq AND {where.replace("workspace_id", "vectors.workspace_id")}
           AND (vectors.branch IS NOT e.branch OR vectors.worktree_id IS NOT e.worktree_id)
        RETURNING vectors.id""",
            params,
        )
    )
    copies += len(
        _rows(
            conn,
            f"""
        UPDATE vectors SET branch = s.branch, worktree_id = NULL
          FROM summaries s
         WHERE s.id = vectors.summary_id AND {where.replace("workspace_id", "vectors.workspace_id")}
           AND (vectors.branch IS NOT s.branch OR vectors.worktree_id IS NOT NULL)
        RETURNING vectors.id""",
            params,
        )
    )
    fixed = _rows(
        conn,
        f"""
        UPDATE vector_generations
           SET vectors = (SELECT count(*) FROM vectors v WHERE v.workspace_id =
                          vector_generations.workspace_id AND v.model = vector_generations.model),
               generation = generation + 1
         WHERE {where} AND vectors <> (SELECT count(*) FROM vectors v WHERE v.workspace_id =
                          vector_generations.workspace_id AND v.model = vector_generations.model)
        RETURNING model""",
        params,
    )
    missing = _rows(
        conn,
        f"""
        INSERT INTO vector_generations (workspace_id, model, generation, vectors)
        SELECT v.workspace_id, v.model, 1, count(*) FROM vectors v WHERE {vwhere}
           AND NOT EXISTS (SELECT 1 FROM vector_generations g
                            WHERE g.workspace_id = v.workspace_id AND g.model = v.model)
         GROUP BY v.workspace_id, v.model
        RETURNING model""",
        vparams,
    )
    return copies + len(fixed) + len(missing), orphans
