# ruff: noqa: E501 - frozen SQL, kept exactly as schema.sql v11 writes it
"""v11: full-text search probes a narrow index of the shown versions (issue 18).

Each match of a search was joined to its entry's row for the scope, the head flags and the
order: at 1M entries a common word's hundred thousand matches each read a page of wide rows.
The new index holds those columns alone, for the versions a read can show, keyed by seq
(search/journal.py names it). No row changes.

Self-contained: the SQL below is a frozen copy of schema.sql v11's.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection

STATEMENTS = (
    "CREATE INDEX journal_heads_by_seq ON journal_entries (seq, workspace_id, head_wt, head_ws, worktree_id, branch, meaningful, ts_us, sid_order) WHERE head_wt = 1 OR head_ws = 1;",
)


def migrate(conn: Connection) -> None:
    for sql in STATEMENTS:
        conn.execute(sql)
