# ruff: noqa: E501 - frozen SQL, kept exactly as schema.sql v5 writes it
"""v5: re-homing imported entries (issue 10, item 3).

`import --map BUCKET=WORKTREE` on a source already imported moves its rows to that
worktree, the one edit of an entry the store makes. v4's `journal_entries_immutable`
refused any UPDATE of `worktree_id`; here that column leaves its list and a narrower
trigger, `journal_entries_rehome_guard`, allows the edit only while a `journal_rehome` row
names the workspace (the re-home writer's own transaction, like `journal_bulk`), only for
a version that is no head in its worktree, and only to a worktree of the same workspace.

No row changes. SQLite cannot alter a trigger, so the old one is dropped and created again
with its new column list. Self-contained: the SQL below is a frozen copy of schema.sql
v5's, never read from the current schema.sql.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection

STATEMENTS = (
    "DROP TRIGGER journal_entries_immutable",
    """CREATE TRIGGER journal_entries_immutable BEFORE UPDATE OF
    id, workspace_id, session_id, branch, timestamp, ts_us, focus, done,
    decisions, next_steps, files_modified, git_log, auto, enriched, repair, griptree,
    agent_id, extra, rich, meaningful
ON journal_entries
BEGIN
    SELECT RAISE(ABORT, 'journal entries are immutable: append a new version instead');
END""",
    """CREATE TABLE journal_rehome (
    workspace_id INTEGER PRIMARY KEY
) STRICT""",
    """CREATE TRIGGER journal_entries_rehome_guard BEFORE UPDATE OF worktree_id ON journal_entries
BEGIN
    SELECT RAISE(ABORT, 'journal entries are immutable: append a new version instead')
     WHERE NOT EXISTS (SELECT 1 FROM journal_rehome WHERE workspace_id = OLD.workspace_id);
    SELECT RAISE(ABORT, 'a re-homed entry version must not be a head while it moves (set head_wt = 0 first)')
     WHERE OLD.head_wt <> 0 OR NEW.head_wt <> 0;
    SELECT RAISE(ABORT, 'a re-homed entry version moves only to a worktree of its own workspace')
     WHERE NOT EXISTS (SELECT 1 FROM worktrees
                        WHERE id = NEW.worktree_id AND workspace_id = OLD.workspace_id);
END""",
)


def migrate(conn: Connection) -> None:
    for sql in STATEMENTS:
        conn.execute(sql)
