"""The full-text indexes' health, for doctor: do they hold exactly the rows they index, and
their rebuild from the rows (FTS5's own 'rebuild' cannot read the entry index's content
view, schema.sql says why)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..db import as_int

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection


@dataclass(frozen=True)
class IndexCheck:
    """Rows an index lacks and rows it holds that no longer exist; with a deep check, the
    rows whose indexed tokens differ from their text's (at most a sample of them)."""

    missing_entries: int
    stale_entries: int
    missing_summaries: int
    stale_summaries: int
    wrong_entries: tuple[int, ...] = ()  # deep: tokens or document sizes differ
    wrong_summaries: tuple[int, ...] = ()
    wrong_settings: tuple[str, ...] = ()  # indexes whose ranking setting is not schema.sql's
    wrong_totals: tuple[str, ...] = ()  # deep: indexes whose corpus totals (bm25) differ
    deep: bool = False

    @property
    def ok(self) -> bool:
        return not (
            self.missing_entries
            or self.stale_entries
            or self.missing_summaries
            or self.stale_summaries
            or self.wrong_entries
            or self.wrong_summaries
            or self.wrong_settings
            or self.wrong_totals
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "missing_entries": self.missing_entries,
            "stale_entries": self.stale_entries,
            "missing_summaries": self.missing_summaries,
            "stale_summaries": self.stale_summaries,
            "wrong_entries": list(self.wrong_entries),
            "wrong_summaries": list(self.wrong_summaries),
            "wrong_settings": list(self.wrong_settings),
            "wrong_totals": list(self.wrong_totals),
            "deep": self.deep,
            "ok": self.ok,
        }


# The rows each index is made from, as (rowid, its columns...).
_SOURCES = {
    "journal_fts": (
        "focus, done, decisions, next_steps, files_modified",
        "SELECT seq, focus, done, decisions, next_steps, files_modified FROM journal_fts_content",
    ),
    "summaries_fts": ("text", "SELECT id, text FROM summaries"),
}
_TOKENIZE = re.compile(r"tokenize\s*=\s*'([^']*)'", re.I)
_RANK = re.compile(r"INSERT INTO (\w+) \(\1, rank\) VALUES \('rank', '([^']*)'\)")
# FTS5's on-disk format version (4; 5 would be its secure-delete format, which the stock
# sqlite3 3.40 shell cannot read).
FTS_VERSION = 4
SAMPLE = 50


def _settings() -> dict[str, dict[str, object]]:
    """Each index's %_config rows as schema.sql makes them: its format version and, where
    schema.sql sets one, its ranking function (what `ORDER BY rank` computes)."""
    from ..migrations import schema_sql

    ranks = {m.group(1): m.group(2) for m in _RANK.finditer(schema_sql())}
    return {
        name: {"version": FTS_VERSION, **({"rank": ranks[name]} if name in ranks else {})}
        for name in _SOURCES
    }


# An entry without a document in the index (per row, for a pass over the entries).
MISSING_ENTRY = "NOT EXISTS (SELECT 1 FROM journal_fts_docsize d WHERE d.id = e.seq)"
MISSING_ENTRIES = f"SELECT count(*) FROM journal_entries e WHERE {MISSING_ENTRY}"


def check_index(
    conn: Connection, *, deep: bool = False, missing_entries: int | None = None
) -> IndexCheck:
    """Compare the indexes' documents (their `_docsize` rows, one per indexed row) with
    the rows they index: rows indexed never, or still indexed after they went. `deep`
    (inside a snapshot that may build TEMP tables, Database.scratch) also indexes every
    row afresh and compares the two token by token: a document whose tokens were changed,
    lost or replaced under a kept docsize row (FTS5's own 'integrity-check' cannot read the
    entry index's content view, schema.sql says why). `missing_entries`: the entries
    without a document, counted already by a pass over the entries (doctor's)."""

    def count(sql: str) -> int:
        return as_int(conn.execute(sql).fetchall()[0][0])

    wrong = {name: _token_differences(conn, name) for name in _SOURCES} if deep else {}
    settings = tuple(
        name
        for name, want in _settings().items()
        if {str(k): v for k, v in conn.execute(f"SELECT k, v FROM {name}_config")} != want
    )
    return IndexCheck(
        count(MISSING_ENTRIES) if missing_entries is None else missing_entries,
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
        wrong.get("journal_fts", ((), False))[0],
        wrong.get("summaries_fts", ((), False))[0],
        settings,
        tuple(name for name, (_, totals) in wrong.items() if totals),
        deep,
    )


def _token_differences(conn: Connection, index: str) -> tuple[tuple[int, ...], bool]:
    """(rows of `index` whose (term, column, position) entries or document sizes differ
    from a fresh index of their text built in TEMP with the same tokenizer, up to SAMPLE
    of them; whether the corpus totals bm25 divides by differ)."""
    columns, rows_sql = _SOURCES[index]
    schema = str(
        conn.execute("SELECT sql FROM sqlite_schema WHERE name = ?", (index,)).fetchall()[0][0]
    )
    found = _TOKENIZE.search(schema)
    tokenize = found.group(1) if found else "unicode61"
    fresh, fresh_v, real_v = (f"doctor_{index}_{x}" for x in ("fresh", "fresh_v", "real_v"))
    try:
        conn.execute(
            f"CREATE VIRTUAL TABLE temp.{fresh} USING fts5({columns}, content='',"
            f" tokenize='{tokenize}')"
        )
        conn.execute(f"INSERT INTO temp.{fresh} (rowid, {columns}) {rows_sql}")
        conn.execute(
            f"CREATE VIRTUAL TABLE temp.{fresh_v} USING fts5vocab(temp, {fresh}, instance)"
        )
        conn.execute(f"CREATE VIRTUAL TABLE temp.{real_v} USING fts5vocab(main, {index}, instance)")
        entries = "SELECT term, doc, col, offset FROM temp.{}"
        sizes = "SELECT id, sz FROM {}_docsize"
        real_sizes, fresh_sizes = sizes.format(f"main.{index}"), sizes.format(f"temp.{fresh}")
        rows = conn.execute(
            f"SELECT DISTINCT doc FROM ({entries.format(real_v)} EXCEPT {entries.format(fresh_v)}"
            f" UNION ALL SELECT * FROM ({entries.format(fresh_v)} EXCEPT {entries.format(real_v)})"
            f" UNION ALL SELECT id, 0, 0, 0 FROM ({real_sizes} EXCEPT {fresh_sizes})"
            f" UNION ALL SELECT id, 0, 0, 0 FROM ({fresh_sizes} EXCEPT {real_sizes}))"
            f" ORDER BY doc LIMIT {SAMPLE}"
        ).fetchall()
        # The 'averages' record (%_data id 1): documents and tokens per column, all of them.
        totals = "SELECT block FROM {}_data WHERE id = 1"
        differ = (
            conn.execute(totals.format(f"main.{index}")).fetchall()
            != conn.execute(totals.format(f"temp.{fresh}")).fetchall()
        )
    finally:
        for table in (real_v, fresh_v, fresh):
            conn.execute(f"DROP TABLE IF EXISTS temp.{table}")
    return tuple(as_int(r[0]) for r in rows), differ


def rebuild_index(conn: Connection) -> None:
    """Rebuild both indexes from the rows (doctor --repair). Run inside a write
    transaction. The entry index cannot use FTS5's 'rebuild' (schema.sql says why)."""
    conn.execute("INSERT INTO journal_fts (journal_fts) VALUES ('delete-all')")
    conn.execute(
        "INSERT INTO journal_fts (rowid, focus, done, decisions, next_steps,"
        " files_modified) SELECT seq, focus, done, decisions, next_steps,"
        " files_modified FROM journal_fts_content ORDER BY seq"
    )
    conn.execute("INSERT INTO summaries_fts (summaries_fts) VALUES ('rebuild')")
    for name, want in _settings().items():
        if "rank" in want:
            conn.execute(f"INSERT INTO {name} ({name}, rank) VALUES ('rank', ?)", (want["rank"],))
