# ruff: noqa: E501 - frozen SQL, kept exactly as schema.sql v10 writes it
"""v10: the journal's indexes take less room (issue 18).

The four head indexes were descending in the instant, so every new head landed at the left
end of its b-tree, where a full page splits in halves: half of each page stayed empty. They
are ascending now (reads walk them backwards, in the same order). The index of each
branch's versions for synapt's session start holds only the branches it looks up (not
main, master or none). No row changes.

Self-contained: the SQL below is a frozen copy of schema.sql v10's.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection

STATEMENTS = (
    "DROP INDEX journal_heads_wt;",
    "DROP INDEX journal_heads_wt_branch;",
    "DROP INDEX journal_heads_ws;",
    "DROP INDEX journal_heads_ws_branch;",
    "DROP INDEX journal_wake_branch;",
    "CREATE INDEX journal_heads_wt ON journal_entries (workspace_id, worktree_id, ts_us, sid_order DESC) WHERE head_wt = 1;",
    "CREATE INDEX journal_heads_wt_branch ON journal_entries (workspace_id, worktree_id, branch, ts_us, sid_order DESC) WHERE head_wt = 1;",
    "CREATE INDEX journal_heads_ws ON journal_entries (workspace_id, ts_us, sid_order DESC) WHERE head_ws = 1;",
    "CREATE INDEX journal_heads_ws_branch ON journal_entries (workspace_id, branch, ts_us, sid_order DESC) WHERE head_ws = 1;",
    "CREATE INDEX journal_wake_branch ON journal_entries (workspace_id, worktree_id, branch, timestamp) WHERE branch NOT IN ('', 'main', 'master');",
)


def migrate(conn: Connection) -> None:
    for sql in STATEMENTS:
        conn.execute(sql)
