# ruff: noqa: E501 - frozen SQL, kept exactly as schema.sql v12 writes it
"""v12: every removal says which machine asked, and a pulled summary keeps what proves it
(issue 32).

* `asked_by` on journal_tombstones, summary_tombstones and vector_tombstones: the machine
  whose forget, removal or delete it is (NULL: this store's own, as every tombstone written
  before v12 was here). A pull records the asking machine of each tombstone it brings and
  keeps it when it travels on, so every machine can say who erased what.
* `minted_from`, `minted_to` on summaries: the covered range a summary's uid was made
  with, where a pull translated `covers_from`/`covers_to` to this store's positions (the
  uid stays provable on every machine it travels to).
* the `forgotten` view: what was removed, by whom, for people at the sqlite3 prompt.

No row changes: the new columns start NULL (a pulled range summary of before v12 keeps
only its translated range: doctor --deep says so, as it did).

Self-contained: the SQL below is a frozen copy of schema.sql v12's.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection

_ASKED_BY = (
    "TEXT CHECK (asked_by IS NULL OR (length(asked_by) = 16 AND asked_by NOT GLOB '*[^0-9a-f]*'))"
)

STATEMENTS = (
    f"ALTER TABLE journal_tombstones ADD COLUMN asked_by {_ASKED_BY}",
    f"ALTER TABLE summary_tombstones ADD COLUMN asked_by {_ASKED_BY}",
    f"ALTER TABLE vector_tombstones ADD COLUMN asked_by {_ASKED_BY}",
    "ALTER TABLE summaries ADD COLUMN minted_from INTEGER",
    "ALTER TABLE summaries ADD COLUMN minted_to INTEGER",
    """CREATE VIEW forgotten AS
SELECT w.uuid AS workspace, 'entry' AS kind, lower(hex(t.id)) AS id, NULL AS model,
       t.forgotten_at AS at, coalesce(t.asked_by, '(this machine)') AS asked_by
  FROM journal_tombstones t JOIN workspaces w ON w.id = t.workspace_id
 WHERE t.formula = 2
UNION ALL
SELECT w.uuid, 'summary', lower(hex(t.uid)), NULL, t.removed_at,
       coalesce(t.asked_by, '(this machine)')
  FROM summary_tombstones t JOIN workspaces w ON w.id = t.workspace_id
UNION ALL
SELECT w.uuid, t.owner_kind || ' vector', lower(hex(t.owner)), t.model, t.deleted_at,
       coalesce(t.asked_by, '(this machine)')
  FROM vector_tombstones t JOIN workspaces w ON w.id = t.workspace_id;""",
)


def migrate(conn: Connection) -> None:
    for sql in STATEMENTS:
        conn.execute(sql)
