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
from ..identity import unknown_keys_sql
from ..journal.codec import session_tie_utf8
from ..search.index import MISSING_ENTRY
from . import content, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from apsw import Connection, SQLiteValue

    from ..db import Row

TABLE = "journal_entries"
LISTS = ("done", "decisions", "next_steps", "files_modified", "git_log")
FUNCTION = "recall_doctor_row"
# A row's verdicts from Python: a bit, and above it a column's index + 1.
BAD_TIE, TEXT_SHIFT = 1, 1
# Session ids whose tie order is kept while the pass runs.
_TIES = 1 << 16
# The list and extra columns hold JSON (the JSON check; rows.py's own statement too).
# ('[]' first: most lists are empty, and that comparison costs no JSON parse.)
JSON_OK = (
    " AND ".join(f"({c} = '[]' OR json_valid({c}))" for c in LISTS)
    + " AND (extra IS NULL OR (json_valid(extra) AND json_type(extra) = 'object'))"
)


def _verdicts(session_at: int) -> Callable[..., int]:
    """The Python part of a row's verdicts, as an SQL function of (sid_order, id, every
    TEXT column as bytes; the session id's at `session_at`): BAD_TIE when sid_order is not
    the tie order its content gives (content.tie's rule), plus the first undecodable
    column's index + 1 shifted by TEXT_SHIFT (text.py's rule)."""
    ties: dict[bytes, int] = {}  # by session id: a session has many versions

    def verdicts(*args: SQLiteValue) -> int:
        sid_order, entry_id, texts = args[0], args[1], args[2:]
        bad = 0
        try:
            # UTF-8 pieces joined by an ASCII byte decode exactly when each piece does.
            b"\0".join(texts).decode("utf-8")  # type: ignore[arg-type]
        except (UnicodeDecodeError, TypeError):  # (TypeError: a NULL, which is no text)
            first = text.first_undecodable(texts)
            if first is not None:
                bad = (first + 1) << TEXT_SHIFT
        session = texts[session_at]
        if not bad and isinstance(session, bytes) and session and type(entry_id) is bytes:
            # The common row: its session id is UTF-8 (its text decoded), so its tie order
            # is the hash of those bytes: codec's rule without decoding them again.
            tie = ties.get(session)
            if tie is None:
                if len(ties) >= _TIES:
                    ties.clear()
                tie = ties[session] = session_tie_utf8(session)
        else:
            tie = content.tie(session, entry_id)  # (an id of another kind raises, as it did)
        if tie is not None and tie != sid_order:  # (the old check: sid_order IS NOT tie)
            bad |= BAD_TIE
        return bad

    return verdicts


def register(conn: Connection, columns: list[str]) -> None:
    conn.create_scalar_function(
        FUNCTION, _verdicts(columns.index("session_id")), -1, deterministic=True
    )


def statement(columns: list[str]) -> str:
    """The pass, for the journal's TEXT columns `columns` (text.py's list)."""
    # Each TEXT column as bytes (NULL, which holds no text, as none; the session id's kept:
    # a NULL there has no tie order).
    texts = ", ".join(
        f'CAST("{c}" AS BLOB)' if c == "session_id" else f"CAST(coalesce(\"{c}\", '') AS BLOB)"
        for c in columns
    )
    # Each row's verdicts first, so the windows' sorts carry a few narrow columns, not
    # the row's text. NOT INDEXED: the rows as the table holds them (an index is
    # integrity_check's to judge; read through a damaged one, a row takes another's session).
    verdicts = f"""
SELECT seq, workspace_id, worktree_id, session_id, branch, auto, ts_us, rich, id, meaningful,
       head_ws, head_wt,
       {FUNCTION}(sid_order, id, {texts}) AS py,
       rich IS NOT ({content.RICH_SQL}) OR meaningful IS NOT {content.MEANINGFUL_SQL} AS wrong,
       NOT ({JSON_OK}) AS bad_json,
       {unknown_keys_sql()} AS orphan,
       {MISSING_ENTRY} AS unindexed
  FROM {TABLE} e NOT INDEXED"""
    rows = f"""
SELECT seq, workspace_id, worktree_id, branch, meaningful, head_ws, head_wt, py, wrong,
       bad_json, orphan, unindexed,
       {HEAD_WS} AS want_ws,
       {HEAD_WT} AS want_wt
  FROM ({verdicts})"""
    return f"""
SELECT workspace_id, worktree_id, CAST(branch AS BLOB),
       sum(want_ws), sum(want_ws * meaningful), sum(want_wt), sum(want_wt * meaningful),
       json_group_array(json_array(seq, head_ws, want_ws, head_wt, want_wt))
         FILTER (WHERE head_ws IS NOT want_ws OR head_wt IS NOT want_wt),
       json_group_array(seq) FILTER (WHERE wrong OR py & {BAD_TIE}),
       json_group_array(seq) FILTER (WHERE bad_json),
       json_group_array(json_array(seq, py >> {TEXT_SHIFT})) FILTER (WHERE py >> {TEXT_SHIFT}),
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
    columns = text.text_columns(conn, TABLE)
    register(conn, columns)
    scopes: list[tuple[Any, ...]] = []
    heads: list[tuple[Any, ...]] = []
    wrong: list[int] = []
    bad_json: list[int] = []
    bad_text: list[tuple[int, int]] = []
    orphans = unindexed = 0
    for r in conn.execute(statement(columns)):
        # A branch that is not UTF-8 raises here, as the old check's read of it did.
        ws, wt, branch, *sums = r[:7]
        scopes.append(
            # Keys and sums of another kind (damage) raise: the checks one by one then
            # compare them as they are, as they did.
            (_int(ws), _int(wt), as_bytes(branch).decode("utf-8"), *map(_int, sums))
        )
        heads += (tuple(h) for h in json.loads(_text(r[7])))
        wrong += json.loads(_text(r[8]))
        bad_json += json.loads(_text(r[9]))
        bad_text += (tuple(b) for b in json.loads(_text(r[10])))
        orphans += _int(r[11])
        unindexed += _int(r[12])
    undecodable: list[tuple[str, Row, str]] = [
        (TABLE, (seq,), columns[at - 1]) for seq, at in sorted(bad_text)
    ]
    return JournalRows(
        EntryState(sorted(heads), scopes),
        sorted(wrong),
        sorted(bad_json),
        undecodable,
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
