"""Bulk insert of journal entry versions with exactly the state row-by-row inserts leave.

A row inserted one at a time fires `journal_entries_after_insert` (schema.sql), which
demotes the heads the new version beats and makes it a head when nothing is left to beat
it; the count triggers then follow every head change. That costs three correlated UPDATEs
per row. Here the same sequence is replayed in Python over the batch (the heads of the
touched sessions are read once), every new row is staged with its final `seq`, `head_wt`
and `head_ws` and moved into the journal by one INSERT ... SELECT, the per-scope counts
are added in one upsert per scope, and only the rows stored before the batch that lose
their head status are UPDATEd (one statement per column; one per row, in the order the
trigger path would have demoted them, where a demoted row has vectors), so the count and
vector triggers fire for them as they would have. bulk_insert writes one batch; a Batch
takes its rows in parts (an import's chunks that share a transaction) and writes them as
one.

While the batch is written, a `journal_bulk` row per workspace switches the insert
trigger off for that workspace; it lives only inside the caller's write transaction (a
savepoint rolls it back with the rows on any failure), so no other connection ever sees it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

from ..db import as_bytes, as_int
from ..errors import StoreError
from .codec import ROW_COLUMNS
from .order import py_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection, SQLiteValue

    # The heads of the touched session scopes during the replay: head_ws by session,
    # head_wt by (worktree, session).
    WsHeads = dict[str, list["_Head"]]
    WtHeads = dict[tuple[int, str], list["_Head"]]


class Stored(NamedTuple):
    seq: int
    created: bool  # False: the id was stored before the batch


class _Head:
    """A head of a session scope during the replay: its dedup key and seq, and for a row of
    the batch its index (None for a row stored before the batch)."""

    __slots__ = ("key", "seq", "new")

    def __init__(self, key: tuple[int, int, int, bytes], seq: int, new: int | None = None) -> None:
        self.key, self.seq, self.new = key, seq, new


# Each row with the values the trigger path would have given it, staged in a table of this
# connection's own (TEMP: no other connection sees it, no index, no trigger) and moved into
# the journal by one INSERT ... SELECT. A statement that fires triggers journals every page
# it changes before changing it, so that it can be undone alone: one INSERT per row journals
# the table's and every index's pages once per row, one statement per batch once per batch
# (bench/RESULTS.md, row 'import: staged rows').
_NAMES = ("seq", *ROW_COLUMNS, "head_wt", "head_ws")
_COLUMNS = ", ".join(_NAMES)
# seq is the stage's rowid, so the move walks it in order without a sort of the batch.
# `line`, `source`: for an import, the line each row was read from and its source (not
# moved).
_STAGE_SQL = (
    "CREATE TEMP TABLE IF NOT EXISTS journal_stage"
    f" (seq INTEGER PRIMARY KEY, {', '.join(_NAMES[1:-2])}, line, source, head_wt, head_ws)"
)
_STAGE_INSERT_SQL = (
    f"INSERT INTO temp.journal_stage ({', '.join(_NAMES[:-2])}, head_wt, head_ws)"
    f" VALUES ({','.join('?' * len(_NAMES))})"
)
_STAGE_LINES_SQL = (
    f"INSERT INTO temp.journal_stage ({', '.join(_NAMES[:-2])}, line, source, head_wt, head_ws)"
    f" VALUES ({','.join('?' * (len(_NAMES) + 2))})"
)
# Each row an import creates is the one its line brought in ('imported'); the lines that
# repeat it are the importer's to record.
_PROVENANCE_SQL = (
    "INSERT INTO entry_provenance (source_id, line, entry_seq, status)"
    " SELECT source, line, seq, 'imported' FROM temp.journal_stage ORDER BY seq"
)
_UNSTAGE_SQL = (
    f"INSERT INTO main.journal_entries ({_COLUMNS})"
    f" SELECT {_COLUMNS} FROM temp.journal_stage ORDER BY seq"
)
_IX = {name: i for i, name in enumerate(ROW_COLUMNS)}
_INDEX_SQL = (
    "INSERT INTO journal_fts (rowid, focus, done, decisions, next_steps, files_modified)"
    " SELECT seq, focus, done, decisions, next_steps, files_modified"
    " FROM journal_fts_content WHERE seq BETWEEN ? AND ?"
)


def bulk_insert(
    conn: Connection,
    rows: Sequence[Sequence[SQLiteValue]],
    *,
    burn_duplicates: bool = False,
) -> dict[bytes, Stored]:
    """Insert journal rows (values in codec.ROW_COLUMNS order) as if each had gone through
    codec.INSERT_SQL (`ON CONFLICT (workspace_id, id) DO NOTHING`) in turn: same seqs,
    heads, counts and vector generations. The rows of one call belong to one workspace.

    Must run inside the caller's write transaction. Returns every id of the batch with its
    seq and whether this batch created it. A row whose id is already stored (or repeated
    in the batch) is skipped; with `burn_duplicates` it still consumes a seq, as the
    conflicting INSERT does (family.py's row-by-row path); without, it consumes none (the
    importer's numbering must not depend on what an earlier, killed run stored)."""
    if not rows:
        return {}
    _in_transaction(conn)
    batch = Batch(burn_duplicates=burn_duplicates)
    with conn:  # a savepoint: any failure takes the guard rows and the rows back out
        got = batch.add(conn, rows)
        batch.keep()
        batch.finish(conn)
    return got


class _Part(NamedTuple):
    fresh: list[tuple[int, Sequence[SQLiteValue]]]  # the rows it creates, with their seqs
    source: int | None
    duplicates: list[tuple[SQLiteValue, ...]]  # entry_provenance rows of its other lines
    last: int | None  # the last seq handed out before it
    kept_if: Callable[[Connection], bool] | None  # what its caller's savepoint left


class Batch:
    """Journal rows added in parts and written together: each part is numbered as it is
    added (its ids' seqs are known at once, as bulk_insert's are), and finish() writes
    every kept part as one batch: one stage, one move into the journal, one insert into
    the search index, the heads replayed over all of it. An import's chunks that share a
    transaction (legacy/chunks.py) are one batch: a statement that moves rows journals
    every index page it changes, so that it can be undone alone, and a move per chunk of a
    small source journals the same pages again for each (bench/RESULTS.md, row 'import:
    statement journals').

    A part counts only once kept: a part added and not kept (its caller's savepoint failed)
    is dropped, and its seqs handed out again, by the next add() or by finish(). A part
    added with `kept_if` is judged by it instead: what its caller's savepoint left in the
    database says whether the part is its caller's for good, even where an exception came
    between the savepoint's release and keep() (or between keep() and the release: then
    finish() drops it, the run having failed after it). Nothing is written to the
    journal before finish(), so the parts read the store as it was before the batch, and
    what the batch created before them from the batch itself."""

    __slots__ = ("burn", "ws", "last", "created", "parts", "pending")

    def __init__(self, *, burn_duplicates: bool = False) -> None:
        self.burn = burn_duplicates
        self.ws: int | None = None
        # The last seq handed out (None: not read from the store yet).
        self.last: int | None = None
        self.created: dict[bytes, int] = {}
        self.parts: list[_Part] = []
        self.pending = False

    def add(
        self,
        conn: Connection,
        rows: Sequence[Sequence[SQLiteValue]],
        source: int | None = None,
        kept_if: Callable[[Connection], bool] | None = None,
    ) -> dict[bytes, Stored]:
        """Number a part's rows (bulk_insert's; with `source`, an import_sources id, each
        row carries one more value, the line of that source it was read from, and each row
        created gets its entry_provenance row ('imported') when the batch is written).
        Returns every id of the part with its seq, `created` False for an id stored before
        the batch or created by an earlier part of it."""
        _in_transaction(conn)
        self._settle(conn)
        if self.parts and (self.parts[0].source is None) != (source is None):
            raise StoreError("a batch's parts all come from import sources, or none does")
        if not rows:
            # (A part all the same: its lines' duplicates() are its own.)
            self.parts.append(_Part([], source, [], self.last, kept_if))
            self.pending = True
            return {}
        i_ws, i_id = _IX["workspace_id"], _IX["id"]
        workspaces = {r[i_ws] for r in rows}
        if len(workspaces) != 1 or (self.ws is not None and self.ws not in workspaces):
            raise StoreError("bulk_insert takes the rows of one workspace per call")
        ws = self.ws = as_int(workspaces.pop())
        given = [r[i_id] for r in rows]
        if all(type(i) is bytes for i in given):
            ids = cast("list[bytes]", given)
        else:  # (an id as another kind of blob, or a TypeError for what is none)
            ids = [as_bytes(i) for i in given]
            rows = [(*r[:i_id], rid, *r[i_id + 1 :]) for r, rid in zip(rows, ids, strict=True)]
        result = _existing(conn, ws, ids)
        created = self.created
        if created:
            for rid in ids:
                seq = created.get(rid)
                if seq is not None:
                    result[rid] = Stored(seq, False)
        before = self._last(conn)
        fresh, self.last = _number(rows, ids, result, before, self.burn, created)
        self.parts.append(_Part(fresh, source, [], before, kept_if))
        self.pending = True
        return result

    def duplicates(self, provenance: Sequence[tuple[SQLiteValue, ...]]) -> None:
        """The entry_provenance rows of the pending part's other lines, written after the
        rows (they may name a seq the batch creates)."""
        self.parts[-1].duplicates.extend(provenance)

    def keep(self) -> None:
        """The pending part is the caller's for good (its savepoint was released)."""
        self.pending = False

    def finish(self, conn: Connection) -> None:
        """Write every kept part; the batch is then empty. Inside the transaction the parts
        were added in."""
        self._settle(conn)
        parts = [p for p in self.parts if p.kept_if is None or p.kept_if(conn)]
        self.parts = []
        fresh = [row for part in parts for row in part.fresh]
        ws = self.ws
        if fresh and ws is not None:
            with conn:  # a savepoint: any failure takes the guard rows and the rows back out
                conn.execute("INSERT INTO journal_bulk (workspace_id) VALUES (?)", (ws,))
                replay = _replay(fresh, _stored_heads(conn, ws, fresh))
                _write(conn, ws, parts, replay)
                # The search index's trigger stands aside under the guard too: the batch is
                # indexed in one statement (its new seqs are the only rows in this range).
                conn.execute(_INDEX_SQL, (fresh[0][0], fresh[-1][0]))
                conn.execute("DELETE FROM journal_bulk WHERE workspace_id = ?", (ws,))
        duplicates = [row for part in parts for row in part.duplicates]
        if duplicates:
            conn.executemany(
                "INSERT INTO entry_provenance (source_id, line, entry_seq, status)"
                " VALUES (?, ?, ?, ?)",
                duplicates,
            )
        if self.burn and self.last is not None and self.last > (fresh[-1][0] if fresh else 0):
            _set_sequence(conn, self.last)
        self.created.clear()
        self.ws = self.last = None

    def _last(self, conn: Connection) -> int:
        if self.last is None:
            self.last = _next_base(conn)
        return self.last

    def _settle(self, conn: Connection) -> None:
        """The pending part kept if its `kept_if` says so, else dropped (its seqs handed out
        again)."""
        if not self.pending:
            return
        self.pending = False
        part = self.parts[-1]
        if part.kept_if is not None and part.kept_if(conn):
            return
        self.parts.pop()
        self.last = part.last
        i_id = _IX["id"]
        for _, r in part.fresh:
            del self.created[cast("bytes", r[i_id])]


def _in_transaction(conn: Connection) -> None:
    if getattr(conn, "in_transaction", True) is False:
        raise StoreError("bulk_insert must run inside a write transaction")


def _number(
    rows: Sequence[Sequence[SQLiteValue]],
    ids: list[bytes],
    result: dict[bytes, Stored],
    base: int,
    burn_duplicates: bool,
    created: dict[bytes, int],
) -> tuple[list[tuple[int, Sequence[SQLiteValue]]], int]:
    """The rows to create, each with its seq (burnt numbers included when asked), and the
    last seq handed out. Fills `result` with the new ids (`ids`: each row's), and
    `created` with their seqs."""
    fresh: list[tuple[int, Sequence[Any]]] = []
    counter = base
    for rid, r in zip(ids, rows, strict=True):
        if rid in result:
            if burn_duplicates:
                counter += 1
            continue
        counter += 1
        result[rid] = Stored(counter, True)
        created[rid] = counter
        fresh.append((counter, r))
    return fresh, counter


def _stored_heads(
    conn: Connection, ws: int, fresh: list[tuple[int, Sequence[SQLiteValue]]]
) -> tuple[WsHeads, WtHeads]:
    """The heads the touched sessions hold already: head_ws keyed by session, head_wt by
    (worktree, session) (one each in a consistent store; a list, to replay any store)."""
    i_sid = _IX["session_id"]
    sids = sorted({str(r[i_sid]) for _, r in fresh if r[i_sid] != ""})
    of_ws: WsHeads = {}
    of_wt: WtHeads = {}
    if not sids:
        return of_ws, of_wt
    for seq, rid, sid, wt, auto, ts, rich, hws, hwt in conn.execute(
        "SELECT e.seq, e.id, e.session_id, e.worktree_id, e.auto, e.ts_us, e.rich,"
        " e.head_ws, e.head_wt"
        " FROM json_each(?) j CROSS JOIN journal_entries e"
        " ON e.workspace_id = ? AND e.session_id = j.value"
        " WHERE +e.head_ws = 1 OR +e.head_wt = 1 ORDER BY e.seq",
        (json.dumps(sids), ws),
    ):
        head = _Head(py_key(auto, ts, rich, rid), seq)
        if hws == 1:
            of_ws.setdefault(str(sid), []).append(head)
        if hwt == 1:
            of_wt.setdefault((as_int(wt), str(sid)), []).append(head)
    return of_ws, of_wt


class _Replay(NamedTuple):
    flags: tuple[list[int], list[int]]  # head_ws, head_wt of each new row
    demote: list[tuple[int, int, int]]  # (new seq, 0 ws / 1 wt, old seq)
    # The count changes of the batch's workspace: [heads, meaningful] by branch (ws), by
    # (worktree, branch) (wt).
    counts_ws: dict[SQLiteValue, list[int]]
    counts_wt: dict[tuple[SQLiteValue, SQLiteValue], list[int]]


def _replay(
    fresh: list[tuple[int, Sequence[SQLiteValue]]],
    heads_of: tuple[WsHeads, WtHeads],
) -> _Replay:
    """journal_entries_after_insert, replayed over the batch in insertion order; then the
    counts the count triggers would have added: a row of the batch that ends a head adds
    itself, and one demoted within the batch added itself and took itself away (its scope's
    count row is still created, at +0, as the trigger path leaves it)."""
    ix = _IX
    i_id, i_wt, i_sid, i_br = ix["id"], ix["worktree_id"], ix["session_id"], ix["branch"]
    i_ts, i_auto, i_rich, i_mean = ix["ts_us"], ix["auto"], ix["rich"], ix["meaningful"]
    n = len(fresh)
    flags_ws, flags_wt = [0] * n, [0] * n
    demote: list[tuple[int, int, int]] = []
    # rows of the batch that were a head of their scope and lost it within the batch
    lost_ws: list[int] = []
    lost_wt: list[int] = []
    of_ws, of_wt = heads_of
    # The rows are codec.encode's or the store's own (each column of its kind): read as
    # such, with no per-value check in the loop of a million-line import.
    rows: list[tuple[int, Sequence[Any]]] = fresh
    for k, (seq, r) in enumerate(rows):
        sid = r[i_sid]
        if sid == "":
            flags_ws[k] = flags_wt[k] = 1
            continue
        key = py_key(r[i_auto], r[i_ts], r[i_rich], r[i_id])
        head = None
        # (Unrolled over the two scopes: this loop runs once per imported line.)
        heads = of_ws.get(sid)
        if heads is None or _contest(heads, key, seq, 0, flags_ws, demote, lost_ws):
            flags_ws[k] = 1
            head = _Head(key, seq, k)
            of_ws[sid] = [head]
        scope = (r[i_wt], sid)
        heads = of_wt.get(scope)
        if heads is None or _contest(heads, key, seq, 1, flags_wt, demote, lost_wt):
            flags_wt[k] = 1
            of_wt[scope] = [head or _Head(key, seq, k)]
    counts_ws: dict[Any, list[int]] = {}
    counts_wt: dict[tuple[Any, Any], list[int]] = {}
    for k in lost_ws:
        counts_ws.setdefault(rows[k][1][i_br], [0, 0])
    for k in lost_wt:
        r = rows[k][1]
        counts_wt.setdefault((r[i_wt], r[i_br]), [0, 0])
    for (_, r), on_ws, on_wt in zip(rows, flags_ws, flags_wt, strict=True):
        if on_ws:
            c = counts_ws.get(r[i_br])
            if c is None:
                counts_ws[r[i_br]] = [1, r[i_mean]]
            else:
                c[0] += 1
                c[1] += r[i_mean]
        if on_wt:
            scope = (r[i_wt], r[i_br])
            c = counts_wt.get(scope)
            if c is None:
                counts_wt[scope] = [1, r[i_mean]]
            else:
                c[0] += 1
                c[1] += r[i_mean]
    return _Replay((flags_ws, flags_wt), demote, counts_ws, counts_wt)


def _contest(
    heads: list[_Head],
    key: tuple[int, int, int, bytes],
    seq: int,
    phase: int,
    flags: list[int],
    demote: list[tuple[int, int, int]],
    lost: list[int],
) -> bool:
    """The new version `key` against a scope's heads: every head it beats is demoted (a
    stored one recorded for an UPDATE, one of the batch unflagged and listed in `lost`);
    True when none is left, and the new version is the scope's head."""
    kept = []
    for h in heads:
        if key < h.key:
            if h.new is None:
                demote.append((seq, phase, h.seq))
            else:
                flags[h.new] = 0
                lost.append(h.new)
        else:
            kept.append(h)
    if kept:
        heads[:] = kept
        return False
    return True


def _write(conn: Connection, ws: int, parts: list[_Part], replay: _Replay) -> None:
    """The demotions of stored heads one UPDATE each, in the order the trigger path would
    have made them (so the count and vector triggers fire for them as they would have);
    the rows with their final flags (and, from an import's sources, their lines'
    provenance); the counts of the new heads in one upsert each. (The demotions go first:
    the rows they change are the same, but before the move adds to the indexes they
    touch, their statement journals hold fewer pages: bench/RESULTS.md, row 'import:
    statement journals'.)"""
    _demote(conn, sorted(replay.demote))
    wt_flags, ws_flags = replay.flags[1], replay.flags[0]
    staged: list[tuple[SQLiteValue, ...]] = []
    k = 0
    sourced = parts[0].source is not None
    for part in parts:
        n, source = len(part.fresh), part.source
        flags = zip(part.fresh, wt_flags[k : k + n], ws_flags[k : k + n], strict=True)
        if sourced:
            staged += [(seq, *r, source, wt, ws) for (seq, r), wt, ws in flags]
        else:
            staged += [(seq, *r, wt, ws) for (seq, r), wt, ws in flags]
        k += n
    conn.execute(_STAGE_SQL)
    conn.executemany(_STAGE_LINES_SQL if sourced else _STAGE_INSERT_SQL, staged)
    del staged
    conn.execute(_UNSTAGE_SQL)
    if sourced:
        conn.execute(_PROVENANCE_SQL)
    conn.execute("DELETE FROM temp.journal_stage")
    ws_rows = [(ws, br, h, m) for br, (h, m) in replay.counts_ws.items()]
    wt_rows = [(ws, wt, br, h, m) for (wt, br), (h, m) in replay.counts_wt.items()]
    if ws_rows:
        conn.executemany(
            "INSERT INTO journal_counts_ws (workspace_id, branch, heads, meaningful)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (workspace_id, branch) DO UPDATE"
            " SET heads = heads + excluded.heads,"
            " meaningful = meaningful + excluded.meaningful",
            ws_rows,
        )
    if wt_rows:
        conn.executemany(
            "INSERT INTO journal_counts_wt (workspace_id, worktree_id, branch, heads,"
            " meaningful) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (workspace_id, worktree_id, branch) DO UPDATE"
            " SET heads = heads + excluded.heads,"
            " meaningful = meaningful + excluded.meaningful",
            wt_rows,
        )


def _demote(conn: Connection, demote: list[tuple[int, int, int]]) -> None:
    """Set head_ws / head_wt to 0 on the stored rows the batch beat. The count triggers
    only add, so one UPDATE per column leaves the counts one UPDATE per row would; the
    vector trigger logs each change with the generation it makes, so where a demoted row
    has vectors the rows go one statement each, in the trigger path's order."""
    if not demote:
        return
    olds = json.dumps([old for _, _, old in demote])
    if conn.execute(
        "SELECT 1 FROM json_each(?) j"
        " WHERE EXISTS (SELECT 1 FROM vectors WHERE entry_seq = j.value)",
        (olds,),
    ).fetchall():
        for _, phase, old_seq in demote:
            conn.execute(
                "UPDATE journal_entries SET head_ws = 0 WHERE seq = ?"
                if phase == 0
                else "UPDATE journal_entries SET head_wt = 0 WHERE seq = ?",
                (old_seq,),
            )
        return
    for phase, column in ((0, "head_ws"), (1, "head_wt")):
        seqs = [old for _, p, old in demote if p == phase]
        if seqs:
            conn.execute(
                f"UPDATE journal_entries SET {column} = 0"
                " WHERE seq IN (SELECT value FROM json_each(?))",
                (json.dumps(seqs),),
            )


def _existing(conn: Connection, ws: int, ids: list[bytes]) -> dict[bytes, Stored]:
    """The ids already stored in the workspace."""
    found: dict[bytes, Stored] = {}
    for rid, seq in conn.execute(
        "SELECT e.id, e.seq FROM json_each(?) j CROSS JOIN journal_entries e"
        " ON e.workspace_id = ? AND e.id = unhex(j.value)",
        (json.dumps(sorted({i.hex() for i in ids})), ws),
    ):
        found[bytes(rid)] = Stored(int(seq), False)
    return found


def _next_base(conn: Connection) -> int:
    """The seq AUTOINCREMENT would hand out next, minus one."""
    row = conn.execute(
        "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'journal_entries'), 0),"
        " coalesce((SELECT max(seq) FROM journal_entries), 0))"
    ).fetchall()
    return as_int(row[0][0])


def _set_sequence(conn: Connection, value: int) -> None:
    """Record burnt seqs as a conflicting INSERT does (its number is never handed out)."""
    conn.execute(
        "UPDATE sqlite_sequence SET seq = ? WHERE name = 'journal_entries' AND seq < ?",
        (value, value),
    )
    if not conn.execute("SELECT 1 FROM sqlite_sequence WHERE name = 'journal_entries'").fetchall():
        conn.execute(
            "INSERT INTO sqlite_sequence (name, seq) VALUES ('journal_entries', ?)", (value,)
        )
