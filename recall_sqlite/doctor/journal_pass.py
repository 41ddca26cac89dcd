"""The quick doctor's checks of the journal's rows in one pass: one statement reads every
row of journal_entries once, in the caller's read snapshot, and gives each check what it
needs of the rows. The journal is most of the file, and each check reading it for itself
made doctor read it six times beside integrity_check (issue 33).

Per row, in SQL: the heads by derived.py's definition (its window columns), the
derived-at-write `rich` and `meaningful` (content.py's SQL), the JSON lists, the foreign
keys and the row's document in the full-text index (probes); summed per (workspace,
worktree, branch): the heads the count tables must hold. In Python, one call a row, only
what SQL cannot say: whether the text is UTF-8 (all of a row's text joined by NUL bytes:
UTF-8 pieces joined by an ASCII byte decode exactly when each piece does) and the tie order
(content.py's hash). The few rows found wanting are read again by their keys (text.py
names the column). The old checks, each reading the journal itself, stay as what doctor
runs when damage stops this pass (rows.py), and as the tests' oracle."""

from __future__ import annotations

import json

from .._record import Frozen
from ..db import as_bytes
from ..derived import HEAD_WS, HEAD_WT, EntryState
from ..search.index import MISSING_ENTRY
from . import content, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from apsw import Connection, SQLiteValue

    from ..db import Row

TABLE = "journal_entries"
FUNCTION = "recall_doctor_row"
# A row's verdicts from Python, as bits.
BAD_TEXT, BAD_TIE = 1, 2
# The list and extra columns hold JSON (the JSON check; rows.py's own statement too).
JSON_OK = (
    "json_valid(done) AND json_valid(decisions) AND json_valid(next_steps)"
    " AND json_valid(files_modified) AND json_valid(git_log)"
    " AND (extra IS NULL OR (json_valid(extra) AND json_type(extra) = 'object'))"
)


def _row(*args: SQLiteValue) -> int:
    joined, sid_order, session, entry_id = args
    bad = 0
    try:
        as_bytes(joined).decode("utf-8")
    except UnicodeDecodeError:
        bad |= BAD_TEXT
    tie = content.tie(session, entry_id)
    if tie is not None and tie != sid_order:  # (the old check: sid_order IS NOT tie)
        bad |= BAD_TIE
    return bad


def register(conn: Connection) -> None:
    conn.create_scalar_function(FUNCTION, _row, 4, deterministic=True)


def statement(columns: list[str]) -> str:
    """The pass, for the journal's TEXT columns `columns` (text.py's list)."""
    joined = " || x'00' || ".join(f"coalesce(\"{c}\", '')" for c in columns)
    rows = f"""
SELECT seq, workspace_id, worktree_id, branch, meaningful, head_ws, head_wt,
       {HEAD_WS} AS want_ws,
       {HEAD_WT} AS want_wt,
       {FUNCTION}(CAST({joined} AS BLOB), sid_order, CAST(session_id AS BLOB), id) AS py,
       rich IS NOT ({content.RICH_SQL}) OR meaningful IS NOT {content.MEANINGFUL_SQL} AS wrong,
       NOT ({JSON_OK}) AS bad_json,
       coalesce(workspace_id NOT IN (SELECT id FROM workspaces), 0)
         + coalesce(worktree_id NOT IN (SELECT id FROM worktrees), 0) AS orphan,
       {MISSING_ENTRY} AS unindexed
  FROM {TABLE} e NOT INDEXED"""
    # NOT INDEXED: the rows as the table holds them. An index is integrity_check's to judge;
    # read through a damaged one, a row would take another row's session.
    return f"""
SELECT workspace_id, worktree_id, CAST(branch AS BLOB),
       sum(want_ws), sum(want_ws * meaningful), sum(want_wt), sum(want_wt * meaningful),
       json_group_array(json_array(seq, head_ws, want_ws, head_wt, want_wt))
         FILTER (WHERE head_ws IS NOT want_ws OR head_wt IS NOT want_wt),
       json_group_array(seq) FILTER (WHERE wrong OR py & {BAD_TIE}),
       json_group_array(seq) FILTER (WHERE bad_json),
       json_group_array(seq) FILTER (WHERE py & {BAD_TEXT}),
       sum(orphan), sum(unindexed)
  FROM ({rows})
 GROUP BY workspace_id, worktree_id, branch"""


class JournalRows(Frozen):
    """What the pass found: the derived state's entry part (derived.py compares it), the
    rows whose derived-at-write columns, JSON or text are wrong (by seq; text as text.py's
    (table, key, column)), foreign keys to no parent, rows missing from the index."""

    __slots__ = ("entries", "derived", "json", "undecodable", "orphans", "unindexed")
    entries: EntryState
    derived: tuple[int, ...]
    json: tuple[int, ...]
    undecodable: tuple[tuple[str, Row, str], ...]
    orphans: int  # rows x foreign keys naming no parent (as foreign_key_check counts)
    unindexed: int

    def __init__(
        self,
        entries: EntryState,
        derived: list[int],
        json: list[int],
        undecodable: list[tuple[str, Row, str]],
        orphans: int,
        unindexed: int,
    ) -> None:
        self._set(
            entries=entries,
            derived=tuple(derived),
            json=tuple(json),
            undecodable=tuple(undecodable),
            orphans=orphans,
            unindexed=unindexed,
        )


def run(conn: Connection) -> JournalRows:
    """The pass, inside the caller's read. Damage it meets (a value of the wrong kind where
    a key is, a page that cannot be read) raises: the caller then runs the checks one by
    one, as each says it."""
    register(conn)
    scopes: list[tuple[Any, ...]] = []
    heads: list[tuple[Any, ...]] = []
    wrong: list[int] = []
    bad_json: list[int] = []
    bad_text: list[int] = []
    orphans = unindexed = 0
    for r in conn.execute(statement(text.text_columns(conn, TABLE))):
        # A branch that is not UTF-8 raises here, as the old check's read of it did.
        scopes.append((r[0], r[1], as_bytes(r[2]).decode("utf-8"), r[3], r[4], r[5], r[6]))
        heads += (tuple(h) for h in json.loads(_text(r[7])))
        wrong += json.loads(_text(r[8]))
        bad_json += json.loads(_text(r[9]))
        bad_text += json.loads(_text(r[10]))
        orphans += int(_int(r[11]))
        unindexed += int(_int(r[12]))
    undecodable = text.scan(conn, rowids=(TABLE, sorted(bad_text))) if bad_text else []
    return JournalRows(
        EntryState(sorted(heads), scopes),
        sorted(wrong),
        sorted(bad_json),
        sorted(undecodable, key=lambda u: u[1]),
        orphans,
        unindexed,
    )


def _text(value: SQLiteValue) -> str:
    if not isinstance(value, str):
        raise TypeError(f"the pass gave {type(value).__name__}, not JSON text")
    return value


def _int(value: SQLiteValue) -> int:
    if not isinstance(value, int):
        raise TypeError(f"the pass gave {type(value).__name__}, not a count")
    return value
