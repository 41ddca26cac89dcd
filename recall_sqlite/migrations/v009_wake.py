# ruff: noqa: E501 - frozen SQL, kept exactly as schema.sql v9 writes it
"""v9: the activated session-start hook reads five rows, not the whole history (issue 18).

synapt's session start sorts the journal by each timestamp's text (not its instant), counts
the rich heads and looks for the newest authored entry and the newest version of the
branch; these partial indexes answer each in a few index steps (journal/wake.py). No row
changes.

Self-contained: the SQL below is a frozen copy of schema.sql v9's.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection

STATEMENTS = (
    (
        "CREATE INDEX journal_wake_rich ON journal_entries (workspace_id, worktree_id, timestamp) WHERE head_wt = 1 AND rich > 0;"
    ),
    (
        "CREATE INDEX journal_wake_authored ON journal_entries (workspace_id, worktree_id, timestamp) WHERE head_wt = 1 AND auto = 0 AND (rich > 0 OR files_modified <> '[]');"
    ),
    (
        "CREATE INDEX journal_wake_plain ON journal_entries (workspace_id, worktree_id) WHERE head_wt = 1 AND rich = 0;"
    ),
    (
        "CREATE INDEX journal_wake_sessionless ON journal_entries (workspace_id, worktree_id, ts_us) WHERE session_id = '' AND auto = 0 AND (rich > 0 OR files_modified <> '[]');"
    ),
    (
        "CREATE INDEX journal_wake_branch ON journal_entries (workspace_id, worktree_id, branch, timestamp);"
    ),
)


def migrate(conn: Connection) -> None:
    for sql in STATEMENTS:
        conn.execute(sql)
