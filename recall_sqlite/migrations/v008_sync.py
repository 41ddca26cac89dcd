# ruff: noqa: E501 - frozen SQL, kept exactly as schema.sql v8 writes it
"""v8: more than one machine (issue 17; recall_sqlite/sync/).

* `summary_tombstones`: a removed summary's content id, so a machine that still holds it
  cannot bring it back; triggers record every removal and refuse the id on insert.
* `vector_tombstones`: an explicit delete of an (owner, model) embedding, so of a put and
  a delete the later wins on every machine.

No row changes: the new tables start empty (summaries removed before v8 left no trace).

Self-contained: the SQL below is a frozen copy of schema.sql v8's.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection

STATEMENTS = (
    """CREATE TABLE summary_tombstones (
    workspace_id INTEGER NOT NULL,
    uid          BLOB NOT NULL CHECK (length(uid) = 16),
    removed_at   TEXT NOT NULL,                -- ISO-8601 UTC
    PRIMARY KEY (workspace_id, uid)
) STRICT, WITHOUT ROWID;""",
    """CREATE TRIGGER summaries_after_delete_tombstone AFTER DELETE ON summaries
WHEN OLD.uid IS NOT NULL
BEGIN
    INSERT INTO summary_tombstones (workspace_id, uid, removed_at)
    VALUES (OLD.workspace_id, OLD.uid, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT (workspace_id, uid) DO NOTHING;
END;""",
    """CREATE TRIGGER summaries_not_removed BEFORE INSERT ON summaries
WHEN NEW.uid IS NOT NULL AND EXISTS (SELECT 1 FROM summary_tombstones
                                      WHERE workspace_id = NEW.workspace_id AND uid = NEW.uid)
BEGIN
    SELECT RAISE(ABORT, 'summary was removed: a removed summary is never stored again');
END;""",
    """CREATE TABLE vector_tombstones (
    workspace_id INTEGER NOT NULL,
    owner_kind   TEXT NOT NULL CHECK (owner_kind IN ('entry', 'summary')),
    owner        BLOB NOT NULL CHECK (length(owner) = 16),
    model        TEXT NOT NULL,
    deleted_at   TEXT NOT NULL,                -- ISO-8601 UTC with microseconds, as vectors.created_at
    PRIMARY KEY (workspace_id, model, owner_kind, owner)
) STRICT, WITHOUT ROWID;""",
)


def migrate(conn: Connection) -> None:
    for sql in STATEMENTS:
        conn.execute(sql)
