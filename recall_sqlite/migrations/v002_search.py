"""Schema 1 -> 2: full-text search (issue 12).

Creates the FTS5 indexes of entries and summaries, their content view and their triggers,
exactly as schema.sql declares them at version 2 (a step is frozen: a later schema.sql may
change, this text may not), and indexes the rows the store already holds, so a migrated
store answers searches as a fresh one does.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection


SQL = """
-- Full-text search of entries and summaries (FTS5, in every SQLite this package ships and
-- in the stock sqlite3 3.40 shell). Both indexes are external-content: they hold only the
-- inverted index, never a second copy of the text, so the file grows by the index alone.
-- Triggers keep them right for every writer: row-by-row inserts, journal/bulk.py (which
-- stands aside only from the head trigger), imports and the shell.

-- What the entry index tokenizes: the JSON lists decoded into their items, one per line,
-- so an escaped newline or quote inside an item (`\\n`, `\\"`) never glues two words into
-- one token, and snippets show the text rather than its JSON. Text that is not valid JSON
-- (only a hand-written row can hold it) is indexed as it stands rather than refused.
CREATE VIEW journal_fts_content AS
SELECT e.seq, e.focus,
       CASE WHEN json_valid(e.done)
            THEN (SELECT group_concat(j.value, char(10)) FROM json_each(e.done) j)
            ELSE e.done END AS done,
       CASE WHEN json_valid(e.decisions)
            THEN (SELECT group_concat(j.value, char(10)) FROM json_each(e.decisions) j)
            ELSE e.decisions END AS decisions,
       CASE WHEN json_valid(e.next_steps)
            THEN (SELECT group_concat(j.value, char(10)) FROM json_each(e.next_steps) j)
            ELSE e.next_steps END AS next_steps,
       CASE WHEN json_valid(e.files_modified)
            THEN (SELECT group_concat(j.value, char(10)) FROM json_each(e.files_modified) j)
            ELSE e.files_modified END AS files_modified
  FROM journal_entries e;

-- Every stored version is indexed (one row per journal seq); which of them a search shows
-- is decided by the head flags, as for reads, so a version that gains or loses head status
-- needs no index write. remove_diacritics 2: "cafe" finds "café". FTS5's own 'rebuild'
-- command cannot read a content view that calls json_each (SQLite reports "no such table"),
-- so a rebuild is 'delete-all' and an INSERT ... SELECT from the view (search/index.py).
CREATE VIRTUAL TABLE journal_fts USING fts5(
    focus, done, decisions, next_steps, files_modified,
    content = 'journal_fts_content', content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2'
);

-- bm25 column weights, in column order: what the session was about (focus) and what it
-- decided count most, file paths least. Stored as the table's `rank`, so
-- `ORDER BY rank` at the shell prompt ranks as the library does.
INSERT INTO journal_fts (journal_fts, rank) VALUES ('rank', 'bm25(4.0, 1.0, 3.0, 1.0, 0.5)');

CREATE TRIGGER journal_fts_after_insert AFTER INSERT ON journal_entries
BEGIN
    INSERT INTO journal_fts (rowid, focus, done, decisions, next_steps, files_modified)
    SELECT seq, focus, done, decisions, next_steps, files_modified
      FROM journal_fts_content WHERE seq = NEW.seq;
END;

-- BEFORE, not AFTER: an external-content delete must hand FTS5 the very text it indexed,
-- and the view can produce it only while the row is still there. Content columns are
-- immutable (journal_entries_immutable), so that text is what the insert indexed.
CREATE TRIGGER journal_fts_before_delete BEFORE DELETE ON journal_entries
BEGIN
    INSERT INTO journal_fts
           (journal_fts, rowid, focus, done, decisions, next_steps, files_modified)
    SELECT 'delete', seq, focus, done, decisions, next_steps, files_modified
      FROM journal_fts_content WHERE seq = OLD.seq;
END;

-- Summaries are plain text: the table itself is the content. Its text is immutable by
-- convention only (summaries.py never edits it), so an edit from the shell is followed too.
CREATE VIRTUAL TABLE summaries_fts USING fts5(
    text,
    content = 'summaries', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER summaries_fts_after_insert AFTER INSERT ON summaries
BEGIN
    INSERT INTO summaries_fts (rowid, text) VALUES (NEW.id, NEW.text);
END;

CREATE TRIGGER summaries_fts_after_delete AFTER DELETE ON summaries
BEGIN
    INSERT INTO summaries_fts (summaries_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);
END;

CREATE TRIGGER summaries_fts_after_update AFTER UPDATE OF text ON summaries
WHEN OLD.text IS NOT NEW.text
BEGIN
    INSERT INTO summaries_fts (summaries_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);
    INSERT INTO summaries_fts (rowid, text) VALUES (NEW.id, NEW.text);
END;

"""


def migrate(conn: Connection) -> None:
    conn.execute(SQL)
    # Every stored version, as the insert trigger would have indexed it; the entry index
    # cannot use FTS5's 'rebuild' (see the comment on journal_fts in SQL above).
    conn.execute(
        "INSERT INTO journal_fts (rowid, focus, done, decisions, next_steps, files_modified)"
        " SELECT seq, focus, done, decisions, next_steps, files_modified"
        " FROM journal_fts_content ORDER BY seq"
    )
    conn.execute("INSERT INTO summaries_fts (summaries_fts) VALUES ('rebuild')")
