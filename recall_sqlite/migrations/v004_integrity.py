# ruff: noqa: E501 - frozen SQL, kept exactly as schema.sql v4 writes it
"""v4: the schema defends itself (issue 9).

journal_entries gains CHECKs (list columns are JSON arrays, `extra` a JSON object) and two
triggers (list items are strings; a DELETE keeps every derived table right and tombstones
the id); journal_tombstones is new. SQLite cannot add a CHECK to an existing table, so
journal_entries is rebuilt the documented way (https://sqlite.org/lang_altertable.html,
"making other kinds of table schema changes"): the old table is renamed aside with
legacy_alter_table on (so the views, triggers and foreign keys of other tables keep naming
`journal_entries`), the new one is created with the very text of schema.sql v4, the rows
are copied with their seqs, the old table goes (with its indexes and triggers) and the
indexes and triggers are created again. The engine runs steps with foreign keys off, as
that procedure requires, and this step checks them before its transaction commits.

Self-contained: the SQL below is a frozen copy of schema.sql v4's, never read from the
current schema.sql, so a later step's objects cannot leak into this one.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection

JOURNAL_ENTRIES = """CREATE TABLE journal_entries (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    id             BLOB NOT NULL UNIQUE CHECK (length(id) = 16),
    workspace_id   INTEGER NOT NULL REFERENCES workspaces(id),
    worktree_id    INTEGER NOT NULL REFERENCES worktrees(id),
    session_id     TEXT NOT NULL DEFAULT '',
    branch         TEXT NOT NULL DEFAULT '',
    timestamp      TEXT NOT NULL,              -- the original text, kept verbatim
    ts_us          INTEGER NOT NULL,           -- the same instant, epoch microseconds UTC
    focus          TEXT NOT NULL DEFAULT '',
    -- JSON lists of strings: arrays here (json_type refuses malformed JSON with an error,
    -- so no json_valid: each list is parsed once per check), their items checked by
    -- journal_entries_check_lists (a CHECK cannot look inside an array).
    done           TEXT NOT NULL DEFAULT '[]' CHECK (json_type(done) = 'array'),
    decisions      TEXT NOT NULL DEFAULT '[]' CHECK (json_type(decisions) = 'array'),
    next_steps     TEXT NOT NULL DEFAULT '[]' CHECK (json_type(next_steps) = 'array'),
    files_modified TEXT NOT NULL DEFAULT '[]' CHECK (json_type(files_modified) = 'array'),
    git_log        TEXT NOT NULL DEFAULT '[]' CHECK (json_type(git_log) = 'array'),
    auto           INTEGER NOT NULL DEFAULT 0 CHECK (auto IN (0, 1)),
    enriched       INTEGER NOT NULL DEFAULT 0 CHECK (enriched IN (0, 1)),
    repair         INTEGER NOT NULL DEFAULT 0 CHECK (repair IN (0, 1)),
    griptree       TEXT NOT NULL DEFAULT '',
    agent_id       TEXT NOT NULL DEFAULT '',
    extra          TEXT CHECK (extra IS NULL OR json_type(extra) = 'object'),
                                               -- JSON object of unknown legacy fields, never dropped
    stored_us      INTEGER NOT NULL,           -- when this row was written (epoch us)
    -- derived at write time from the fields above (see journal/codec.py):
    rich           INTEGER NOT NULL DEFAULT 0, -- how many of focus/done/decisions/next_steps are non-empty
    meaningful     INTEGER NOT NULL DEFAULT 0 CHECK (meaningful IN (0, 1)),
    -- maintained by the triggers below:
    sid_order      INTEGER,                    -- tie order for equal timestamps (first appearance of the session)
    head_wt        INTEGER NOT NULL DEFAULT 0, -- 1 = the version reads show, within its worktree
    head_ws        INTEGER NOT NULL DEFAULT 0  -- 1 = the version reads show, across the workspace
) STRICT;"""

# Indexes, the tombstone table and the triggers of journal_entries, in schema.sql order.
OBJECTS = (
    """CREATE INDEX journal_by_session ON journal_entries (workspace_id, session_id);""",
    """CREATE INDEX journal_heads_wt ON journal_entries (workspace_id, worktree_id, ts_us DESC, sid_order) WHERE head_wt = 1;""",
    """CREATE INDEX journal_heads_wt_branch ON journal_entries (workspace_id, worktree_id, branch, ts_us DESC, sid_order) WHERE head_wt = 1;""",
    """CREATE INDEX journal_heads_ws ON journal_entries (workspace_id, ts_us DESC, sid_order) WHERE head_ws = 1;""",
    """CREATE INDEX journal_heads_ws_branch ON journal_entries (workspace_id, branch, ts_us DESC, sid_order) WHERE head_ws = 1;""",
    """CREATE INDEX journal_by_branch_seq ON journal_entries (workspace_id, branch, seq);""",
    """CREATE TRIGGER journal_entries_after_insert AFTER INSERT ON journal_entries
WHEN NOT EXISTS (SELECT 1 FROM journal_bulk WHERE workspace_id = NEW.workspace_id)
BEGIN
    UPDATE journal_entries SET head_ws = 0
     WHERE NEW.session_id <> '' AND session_id <> ''
       AND workspace_id = NEW.workspace_id AND session_id = NEW.session_id
       AND +head_ws = 1 AND seq <> NEW.seq
       AND (NEW.auto < auto
            OR (NEW.auto = auto AND (NEW.ts_us > ts_us
                                     OR (NEW.ts_us = ts_us AND NEW.rich > rich))));
    UPDATE journal_entries SET head_wt = 0
     WHERE NEW.session_id <> '' AND session_id <> ''
       AND workspace_id = NEW.workspace_id AND session_id = NEW.session_id
       AND worktree_id = NEW.worktree_id
       AND +head_wt = 1 AND seq <> NEW.seq
       AND (NEW.auto < auto
            OR (NEW.auto = auto AND (NEW.ts_us > ts_us
                                     OR (NEW.ts_us = ts_us AND NEW.rich > rich))));
    UPDATE journal_entries
       SET sid_order = CASE
               WHEN NEW.session_id = '' THEN NEW.seq + 1152921504606846976  -- 2^60: after every session
               ELSE (SELECT min(seq) FROM journal_entries
                      WHERE workspace_id = NEW.workspace_id AND session_id = NEW.session_id
                        AND session_id <> '')
           END,
           head_ws = CASE
               WHEN NEW.session_id = '' THEN 1
               ELSE NOT EXISTS (SELECT 1 FROM journal_entries
                                 WHERE workspace_id = NEW.workspace_id AND session_id = NEW.session_id
                                   AND session_id <> ''
                                   AND +head_ws = 1 AND seq <> NEW.seq)
           END,
           head_wt = CASE
               WHEN NEW.session_id = '' THEN 1
               ELSE NOT EXISTS (SELECT 1 FROM journal_entries
                                 WHERE workspace_id = NEW.workspace_id AND session_id = NEW.session_id
                                   AND session_id <> ''
                                   AND worktree_id = NEW.worktree_id
                                   AND +head_wt = 1 AND seq <> NEW.seq)
           END
     WHERE seq = NEW.seq;
END;""",
    """CREATE TRIGGER journal_entries_head_ws_changed AFTER UPDATE OF head_ws ON journal_entries
WHEN OLD.head_ws <> NEW.head_ws
BEGIN
    INSERT INTO journal_counts_ws (workspace_id, branch, heads, meaningful)
    VALUES (NEW.workspace_id, NEW.branch, NEW.head_ws - OLD.head_ws,
            (NEW.head_ws - OLD.head_ws) * NEW.meaningful)
    ON CONFLICT (workspace_id, branch) DO UPDATE
       SET heads = heads + excluded.heads, meaningful = meaningful + excluded.meaningful;
END;""",
    """CREATE TRIGGER journal_entries_head_wt_changed AFTER UPDATE OF head_wt ON journal_entries
WHEN OLD.head_wt <> NEW.head_wt
BEGIN
    INSERT INTO journal_counts_wt (workspace_id, worktree_id, branch, heads, meaningful)
    VALUES (NEW.workspace_id, NEW.worktree_id, NEW.branch, NEW.head_wt - OLD.head_wt,
            (NEW.head_wt - OLD.head_wt) * NEW.meaningful)
    ON CONFLICT (workspace_id, worktree_id, branch) DO UPDATE
       SET heads = heads + excluded.heads, meaningful = meaningful + excluded.meaningful;
END;""",
    """CREATE TRIGGER journal_entries_check_lists BEFORE INSERT ON journal_entries
BEGIN
    SELECT RAISE(ABORT, 'journal_entries: done, decisions, next_steps, files_modified and git_log must be JSON arrays of strings')
     WHERE EXISTS (SELECT 1 FROM json_each(NEW.done) WHERE type <> 'text')
        OR EXISTS (SELECT 1 FROM json_each(NEW.decisions) WHERE type <> 'text')
        OR EXISTS (SELECT 1 FROM json_each(NEW.next_steps) WHERE type <> 'text')
        OR EXISTS (SELECT 1 FROM json_each(NEW.files_modified) WHERE type <> 'text')
        OR EXISTS (SELECT 1 FROM json_each(NEW.git_log) WHERE type <> 'text');
END;""",
    """CREATE TABLE journal_tombstones (
    id            BLOB PRIMARY KEY CHECK (length(id) = 16),
    workspace_id  INTEGER NOT NULL,
    forgotten_at  TEXT NOT NULL                -- ISO-8601 UTC
) STRICT, WITHOUT ROWID;""",
    """CREATE TRIGGER journal_entries_immutable BEFORE UPDATE OF
    id, workspace_id, worktree_id, session_id, branch, timestamp, ts_us, focus, done,
    decisions, next_steps, files_modified, git_log, auto, enriched, repair, griptree,
    agent_id, extra, rich, meaningful
ON journal_entries
BEGIN
    SELECT RAISE(ABORT, 'journal entries are immutable: append a new version instead');
END;""",
    """CREATE TRIGGER vectors_follow_entry_delete AFTER DELETE ON journal_entries
BEGIN
    DELETE FROM vectors WHERE entry_seq = OLD.seq;
END;""",
    """CREATE TRIGGER vectors_follow_entry_heads AFTER UPDATE OF head_wt, head_ws ON journal_entries
WHEN (OLD.head_wt IS NOT NEW.head_wt OR OLD.head_ws IS NOT NEW.head_ws)
 AND EXISTS (SELECT 1 FROM vectors WHERE entry_seq = NEW.seq)  -- the common case: none yet
BEGIN
    UPDATE vector_generations SET generation = generation + 1
     WHERE workspace_id = NEW.workspace_id
       AND model IN (SELECT model FROM vectors WHERE entry_seq = NEW.seq);
    INSERT INTO vector_changes (workspace_id, model, generation, vector_id)
    SELECT g.workspace_id, g.model, g.generation, v.id
      FROM vectors v JOIN vector_generations g ON g.workspace_id = v.workspace_id AND g.model = v.model
     WHERE v.entry_seq = NEW.seq;
END;""",
    """CREATE TRIGGER journal_entries_after_delete AFTER DELETE ON journal_entries
BEGIN
    UPDATE journal_counts_ws SET heads = heads - 1, meaningful = meaningful - OLD.meaningful
     WHERE OLD.head_ws = 1 AND workspace_id = OLD.workspace_id AND branch = OLD.branch;
    UPDATE journal_counts_wt SET heads = heads - 1, meaningful = meaningful - OLD.meaningful
     WHERE OLD.head_wt = 1 AND workspace_id = OLD.workspace_id
       AND worktree_id = OLD.worktree_id AND branch = OLD.branch;
    UPDATE journal_entries SET head_ws = 1
     WHERE OLD.head_ws = 1 AND OLD.session_id <> ''
       AND seq = (SELECT seq FROM journal_entries
                   WHERE workspace_id = OLD.workspace_id AND session_id = OLD.session_id
                   ORDER BY auto, ts_us DESC, rich DESC, seq LIMIT 1);
    UPDATE journal_entries SET head_wt = 1
     WHERE OLD.head_wt = 1 AND OLD.session_id <> ''
       AND seq = (SELECT seq FROM journal_entries
                   WHERE workspace_id = OLD.workspace_id AND session_id = OLD.session_id
                     AND worktree_id = OLD.worktree_id
                   ORDER BY auto, ts_us DESC, rich DESC, seq LIMIT 1);
    UPDATE journal_entries
       SET sid_order = (SELECT min(seq) FROM journal_entries
                         WHERE workspace_id = OLD.workspace_id AND session_id = OLD.session_id)
     WHERE OLD.session_id <> '' AND OLD.sid_order = OLD.seq
       AND workspace_id = OLD.workspace_id AND session_id = OLD.session_id;
    DELETE FROM summary_sources WHERE entry_seq = OLD.seq;
    UPDATE import_sources
       SET imported = imported - (SELECT count(*) FROM entry_provenance p
                                   WHERE p.source_id = import_sources.id
                                     AND p.entry_seq = OLD.seq AND p.status = 'imported'),
           duplicates = duplicates - (SELECT count(*) FROM entry_provenance p
                                       WHERE p.source_id = import_sources.id
                                         AND p.entry_seq = OLD.seq AND p.status = 'duplicate'),
           quarantined = quarantined + (SELECT count(*) FROM entry_provenance p
                                         WHERE p.source_id = import_sources.id
                                           AND p.entry_seq = OLD.seq)
     WHERE id IN (SELECT source_id FROM entry_provenance WHERE entry_seq = OLD.seq);
    INSERT INTO quarantine (source_id, line, offset, raw, raw_length, reason, detail)
    SELECT source_id, line, -1, x'', 0, 'forgotten', 'the entry of this line was forgotten; no byte of it is kept'
      FROM entry_provenance WHERE entry_seq = OLD.seq;
    DELETE FROM entry_provenance WHERE entry_seq = OLD.seq;
    INSERT INTO journal_tombstones (id, workspace_id, forgotten_at)
    VALUES (OLD.id, OLD.workspace_id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT (id) DO NOTHING;
END;""",
)

_COLUMNS = (
    "seq, id, workspace_id, worktree_id, session_id, branch, timestamp, ts_us, focus, done,"
    " decisions, next_steps, files_modified, git_log, auto, enriched, repair, griptree,"
    " agent_id, extra, stored_us, rich, meaningful, sid_order, head_wt, head_ws"
)


def migrate(conn: Connection) -> None:
    from ..errors import StoreError

    bad = conn.execute(
        "SELECT seq FROM journal_entries WHERE NOT (json_valid(done) AND json_valid(decisions)"
        " AND json_valid(next_steps) AND json_valid(files_modified) AND json_valid(git_log)"
        " AND json_type(done) = 'array' AND json_type(decisions) = 'array'"
        " AND json_type(next_steps) = 'array' AND json_type(files_modified) = 'array'"
        " AND json_type(git_log) = 'array'"
        " AND (extra IS NULL OR (json_valid(extra) AND json_type(extra) = 'object')))"
        " LIMIT 5"
    ).fetchall()
    if bad:
        # Entries are never edited or dropped by a migration: a person fixes them.
        raise StoreError(
            "cannot upgrade the schema: journal_entries rows with seq "
            + ", ".join(str(r[0]) for r in bad)
            + " hold list or extra columns that are not JSON arrays/objects (written from a"
            " sqlite3 shell?); fix or delete them there, then open the store again"
        )
    # Objects on journal_entries that earlier steps created (the search index's triggers,
    # v2) go with the old table: they are created again as they were.
    mine = {_name(sql) for sql in OBJECTS}
    kept = [
        str(sql)
        for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_schema WHERE tbl_name = 'journal_entries'"
            " AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY rowid"
        ).fetchall()
        if name not in mine
    ]
    conn.execute("PRAGMA legacy_alter_table=ON")
    try:
        conn.execute("ALTER TABLE journal_entries RENAME TO journal_entries_v1")
        conn.execute(JOURNAL_ENTRIES)
        conn.execute(
            f"INSERT INTO journal_entries ({_COLUMNS})"
            f" SELECT {_COLUMNS} FROM journal_entries_v1 ORDER BY seq"
        )
        # Burnt seqs (a conflicting insert's number is never handed out) stay burnt.
        conn.execute(
            "UPDATE sqlite_sequence SET seq = max(seq, (SELECT seq FROM sqlite_sequence"
            " WHERE name = 'journal_entries_v1')) WHERE name = 'journal_entries'"
        )
        conn.execute("DELETE FROM sqlite_sequence WHERE name = 'journal_entries_v1'")
        conn.execute("DROP TABLE journal_entries_v1")
        for sql in (*OBJECTS, *kept):
            conn.execute(sql)
    finally:
        conn.execute("PRAGMA legacy_alter_table=OFF")
    problems = conn.execute("PRAGMA foreign_key_check").fetchall()
    if problems:
        raise StoreError(f"schema upgrade to v4 left foreign key problems: {problems[:5]}")


def _name(sql: str) -> str:
    """The name a CREATE INDEX / CREATE TRIGGER statement creates."""
    words = sql.split()
    return words[2] if words[1] in ("INDEX", "TRIGGER") else words[3]
