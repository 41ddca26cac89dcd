"""The full-text indexes' health, for doctor: do they hold exactly the rows they index, and
their rebuild from the rows (FTS5's own 'rebuild' cannot read the entry index's content
view, schema.sql says why)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class IndexCheck:
    """Rows an index lacks and rows it holds that no longer exist."""

    missing_entries: int
    stale_entries: int
    missing_summaries: int
    stale_summaries: int

    @property
    def ok(self) -> bool:
        return not (
            self.missing_entries
            or self.stale_entries
            or self.missing_summaries
            or self.stale_summaries
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "missing_entries": self.missing_entries,
            "stale_entries": self.stale_entries,
            "missing_summaries": self.missing_summaries,
            "stale_summaries": self.stale_summaries,
            "ok": self.ok,
        }


def check_index(conn: Any) -> IndexCheck:
    """Compare the indexes' documents (their `_docsize` rows, one per indexed row) with
    the rows they index. Detects rows indexed twice-over or never; not a token-level
    comparison (FTS5's 'integrity-check' covers the index's own structure)."""

    def count(sql: str) -> int:
        return int(conn.execute(sql).fetchall()[0][0])

    return IndexCheck(
        count(
            "SELECT count(*) FROM journal_entries e WHERE NOT EXISTS"
            " (SELECT 1 FROM journal_fts_docsize d WHERE d.id = e.seq)"
        ),
        count(
            "SELECT count(*) FROM journal_fts_docsize d WHERE NOT EXISTS"
            " (SELECT 1 FROM journal_entries e WHERE e.seq = d.id)"
        ),
        count(
            "SELECT count(*) FROM summaries s WHERE NOT EXISTS"
            " (SELECT 1 FROM summaries_fts_docsize d WHERE d.id = s.id)"
        ),
        count(
            "SELECT count(*) FROM summaries_fts_docsize d WHERE NOT EXISTS"
            " (SELECT 1 FROM summaries s WHERE s.id = d.id)"
        ),
    )


def rebuild_index(conn: Any) -> None:
    """Rebuild both indexes from the rows (doctor --repair). Run inside a write
    transaction. The entry index cannot use FTS5's 'rebuild' (schema.sql says why)."""
    conn.execute("INSERT INTO journal_fts (journal_fts) VALUES ('delete-all')")
    conn.execute(
        "INSERT INTO journal_fts (rowid, focus, done, decisions, next_steps,"
        " files_modified) SELECT seq, focus, done, decisions, next_steps,"
        " files_modified FROM journal_fts_content ORDER BY seq"
    )
    conn.execute("INSERT INTO summaries_fts (summaries_fts) VALUES ('rebuild')")
