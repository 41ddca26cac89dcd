"""v6: a batch indexes its rows for search in one statement.

The search index's insert trigger (v2) stands aside while the bulk writer's `journal_bulk`
guard names the workspace, as the head trigger does; journal/bulk.py then indexes the
batch with one INSERT ... SELECT: indexing row by row in the trigger made an import far
slower than one statement does (bench/RESULTS.md, row 'import: batch search index'). No
row changes.

Self-contained: the SQL below is a frozen copy of schema.sql v6's.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection

STATEMENTS = (
    "DROP TRIGGER journal_fts_after_insert",
    """CREATE TRIGGER journal_fts_after_insert AFTER INSERT ON journal_entries
WHEN NOT EXISTS (SELECT 1 FROM journal_bulk WHERE workspace_id = NEW.workspace_id)
BEGIN
    INSERT INTO journal_fts (rowid, focus, done, decisions, next_steps, files_modified)
    SELECT seq, focus, done, decisions, next_steps, files_modified
      FROM journal_fts_content WHERE seq = NEW.seq;
END;""",
)


def migrate(conn: Connection) -> None:
    for sql in STATEMENTS:
        conn.execute(sql)
