-- recall-sqlite schema, version 1. The single source of truth for the store's shape.
--
-- Rules this file keeps:
--  * every canonical table is STRICT and uses only INTEGER/TEXT/BLOB/REAL, so a stock
--    sqlite3 shell (3.40+) opens and queries it; no JSONB, no extension types;
--  * timestamps are ISO-8601 text for people plus an integer epoch-microsecond column
--    wherever something is ordered by time;
--  * JSON lists are JSON text;
--  * derived state (which version of a session is the one reads show, per-scope counts)
--    is maintained by triggers, so a row inserted from the sqlite3 shell keeps it right too.
--
-- The Python side sets PRAGMA application_id and user_version after applying this file.

-- ===========================================================================
-- identity
-- ===========================================================================

CREATE TABLE workspaces (
    id          INTEGER PRIMARY KEY,
    uuid        TEXT NOT NULL UNIQUE,          -- minted once, recorded in <root>/.synapt/recall/workspace.json
    first_seen  TEXT NOT NULL,
    last_seen   TEXT NOT NULL
) STRICT;

-- Every root path a workspace id was seen at. Two live roots for one id = a copied workspace.
CREATE TABLE workspace_roots (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
    root         TEXT NOT NULL,
    first_seen   TEXT NOT NULL,
    last_seen    TEXT NOT NULL,
    PRIMARY KEY (workspace_id, root)
) STRICT, WITHOUT ROWID;

CREATE TABLE worktrees (
    id           INTEGER PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
    key          TEXT NOT NULL,                -- path relative to the workspace root ('.' = root), or an explicit label
    name         TEXT NOT NULL,                -- human label (basename)
    root         TEXT,                         -- absolute path last seen (NULL for imported-only worktrees)
    first_seen   TEXT NOT NULL,
    last_seen    TEXT NOT NULL,
    UNIQUE (workspace_id, key)
) STRICT;

-- ===========================================================================
-- journal
-- ===========================================================================

-- One row per distinct entry version. `id` is content-addressed (sha256 of the workspace
-- uuid and the canonical entry, first 16 bytes), so an identical entry collapses onto one
-- row. `seq` is the insertion order (AUTOINCREMENT: never reused), which cursors follow.
CREATE TABLE journal_entries (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    id             BLOB NOT NULL UNIQUE CHECK (length(id) = 16),
    workspace_id   INTEGER NOT NULL REFERENCES workspaces(id),
    worktree_id    INTEGER NOT NULL REFERENCES worktrees(id),
    session_id     TEXT NOT NULL DEFAULT '',
    branch         TEXT NOT NULL DEFAULT '',
    timestamp      TEXT NOT NULL,              -- the original text, kept verbatim
    ts_us          INTEGER NOT NULL,           -- the same instant, epoch microseconds UTC
    focus          TEXT NOT NULL DEFAULT '',
    done           TEXT NOT NULL DEFAULT '[]', -- JSON lists of strings
    decisions      TEXT NOT NULL DEFAULT '[]',
    next_steps     TEXT NOT NULL DEFAULT '[]',
    files_modified TEXT NOT NULL DEFAULT '[]',
    git_log        TEXT NOT NULL DEFAULT '[]',
    auto           INTEGER NOT NULL DEFAULT 0 CHECK (auto IN (0, 1)),
    enriched       INTEGER NOT NULL DEFAULT 0 CHECK (enriched IN (0, 1)),
    repair         INTEGER NOT NULL DEFAULT 0 CHECK (repair IN (0, 1)),
    griptree       TEXT NOT NULL DEFAULT '',
    agent_id       TEXT NOT NULL DEFAULT '',
    extra          TEXT,                       -- JSON object of unknown legacy fields, never dropped
    stored_us      INTEGER NOT NULL,           -- when this row was written (epoch us)
    -- derived at write time from the fields above (see journal.py):
    rich           INTEGER NOT NULL DEFAULT 0, -- how many of focus/done/decisions/next_steps are non-empty
    meaningful     INTEGER NOT NULL DEFAULT 0 CHECK (meaningful IN (0, 1)),
    -- maintained by the triggers below:
    sid_order      INTEGER,                    -- tie order for equal timestamps (first appearance of the session)
    head_wt        INTEGER NOT NULL DEFAULT 0, -- 1 = the version reads show, within its worktree
    head_ws        INTEGER NOT NULL DEFAULT 0  -- 1 = the version reads show, across the workspace
) STRICT;

-- Session lookups (dedup maintenance, same-session done items).
CREATE INDEX journal_by_session ON journal_entries (workspace_id, session_id);
-- "Newest n" is a walk of one of these partial indexes, never a scan of the workspace.
CREATE INDEX journal_heads_wt ON journal_entries (workspace_id, worktree_id, ts_us DESC, sid_order) WHERE head_wt = 1;
CREATE INDEX journal_heads_wt_branch ON journal_entries (workspace_id, worktree_id, branch, ts_us DESC, sid_order) WHERE head_wt = 1;
CREATE INDEX journal_heads_ws ON journal_entries (workspace_id, ts_us DESC, sid_order) WHERE head_ws = 1;
CREATE INDEX journal_heads_ws_branch ON journal_entries (workspace_id, branch, ts_us DESC, sid_order) WHERE head_ws = 1;
-- Cursors walk insertion order per branch.
CREATE INDEX journal_by_branch_seq ON journal_entries (workspace_id, branch, seq);

-- How many deduplicated entries each scope holds, so every read can say how many matching
-- entries exist outside its scope without counting rows.
CREATE TABLE journal_counts_wt (
    workspace_id INTEGER NOT NULL,
    worktree_id  INTEGER NOT NULL,
    branch       TEXT NOT NULL,
    heads        INTEGER NOT NULL DEFAULT 0,
    meaningful   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, worktree_id, branch)
) STRICT, WITHOUT ROWID;

CREATE TABLE journal_counts_ws (
    workspace_id INTEGER NOT NULL,
    branch       TEXT NOT NULL,
    heads        INTEGER NOT NULL DEFAULT 0,
    meaningful   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, branch)
) STRICT, WITHOUT ROWID;

-- Dedup rule (synapt 0.30.0's _entry_richness): a version beats the current head of its
-- session when it is non-auto and the head is auto; else, within the same class, when it is
-- newer; else, at the same instant, when it has more rich fields. A full tie keeps the
-- earlier version. Entries without a session id are never merged: each is its own head.
-- The unary plus on head_ws/head_wt keeps the planner off the partial head indexes here:
-- they would match `head_ws = 1` and turn each insert into a walk of every head in the
-- workspace (quadratic imports); the session index is the right one.
CREATE TRIGGER journal_entries_after_insert AFTER INSERT ON journal_entries
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
END;

CREATE TRIGGER journal_entries_head_ws_changed AFTER UPDATE OF head_ws ON journal_entries
WHEN OLD.head_ws <> NEW.head_ws
BEGIN
    INSERT INTO journal_counts_ws (workspace_id, branch, heads, meaningful)
    VALUES (NEW.workspace_id, NEW.branch, NEW.head_ws - OLD.head_ws,
            (NEW.head_ws - OLD.head_ws) * NEW.meaningful)
    ON CONFLICT (workspace_id, branch) DO UPDATE
       SET heads = heads + excluded.heads, meaningful = meaningful + excluded.meaningful;
END;

CREATE TRIGGER journal_entries_head_wt_changed AFTER UPDATE OF head_wt ON journal_entries
WHEN OLD.head_wt <> NEW.head_wt
BEGIN
    INSERT INTO journal_counts_wt (workspace_id, worktree_id, branch, heads, meaningful)
    VALUES (NEW.workspace_id, NEW.worktree_id, NEW.branch, NEW.head_wt - OLD.head_wt,
            (NEW.head_wt - OLD.head_wt) * NEW.meaningful)
    ON CONFLICT (workspace_id, worktree_id, branch) DO UPDATE
       SET heads = heads + excluded.heads, meaningful = meaningful + excluded.meaningful;
END;

-- Entries are append-only history: the store never edits or deletes them, and refuses
-- an edit of the fields that identity and ordering are derived from.
CREATE TRIGGER journal_entries_immutable BEFORE UPDATE OF
    id, workspace_id, worktree_id, session_id, branch, timestamp, ts_us, focus, done,
    decisions, next_steps, files_modified, git_log, auto, enriched, repair, griptree,
    agent_id, extra, rich, meaningful
ON journal_entries
BEGIN
    SELECT RAISE(ABORT, 'journal entries are immutable: append a new version instead');
END;

-- ===========================================================================
-- summaries
-- ===========================================================================

CREATE TABLE summaries (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id   INTEGER NOT NULL REFERENCES workspaces(id),
    branch         TEXT,                       -- NULL = workspace-wide
    kind           TEXT NOT NULL,
    text           TEXT NOT NULL CHECK (length(text) > 0),
    created_at     TEXT NOT NULL,              -- ISO-8601 UTC with microseconds, assigned by the store
    created_us     INTEGER NOT NULL,           -- the same instant; strictly increasing per workspace
    author         TEXT,                       -- who or which model wrote it, when given
    covers_from    INTEGER,                    -- covered range of journal seq (inclusive), when given
    covers_to      INTEGER,
    covered_seq    INTEGER NOT NULL DEFAULT 0, -- highest journal seq the summary accounts for (staleness)
    superseded_by  INTEGER REFERENCES summaries(id) ON DELETE SET NULL,
    UNIQUE (workspace_id, created_us)
) STRICT;

CREATE INDEX summaries_scope ON summaries (workspace_id, kind, branch, created_us DESC);
CREATE INDEX summaries_by_time ON summaries (workspace_id, created_us DESC);

CREATE TABLE summary_sources (
    summary_id  INTEGER NOT NULL REFERENCES summaries(id) ON DELETE CASCADE,
    entry_seq   INTEGER NOT NULL REFERENCES journal_entries(seq),
    PRIMARY KEY (summary_id, entry_seq)
) STRICT, WITHOUT ROWID;

CREATE INDEX summary_sources_by_entry ON summary_sources (entry_seq);

-- ===========================================================================
-- cursors
-- ===========================================================================

-- How far a consumer has read a branch, as a journal insertion seq (never a timestamp),
-- so a late-arriving entry is still unread.
CREATE TABLE cursors (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
    branch       TEXT NOT NULL,
    consumer     TEXT NOT NULL CHECK (length(consumer) > 0),
    position     INTEGER NOT NULL DEFAULT 0 CHECK (position >= 0),
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (workspace_id, branch, consumer)
) STRICT, WITHOUT ROWID;

-- ===========================================================================
-- vectors
-- ===========================================================================

-- The dimension of a (workspace, model) is fixed by its first vector.
CREATE TABLE vector_models (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
    model        TEXT NOT NULL,
    dim          INTEGER NOT NULL CHECK (dim > 0),
    PRIMARY KEY (workspace_id, model)
) STRICT, WITHOUT ROWID;

-- Embeddings as little-endian float32 BLOBs. The owner is exactly one of an entry or a
-- summary; deleting the owner deletes its vectors (no orphans in any top k).
CREATE TABLE vectors (
    id           INTEGER PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
    model        TEXT NOT NULL,
    dim          INTEGER NOT NULL CHECK (dim > 0),
    entry_seq    INTEGER REFERENCES journal_entries(seq) ON DELETE CASCADE,
    summary_id   INTEGER REFERENCES summaries(id) ON DELETE CASCADE,
    owner_kind   TEXT NOT NULL CHECK (owner_kind IN ('entry', 'summary')),
    branch       TEXT,                         -- the owner's branch, copied for filtering in SQL
    worktree_id  INTEGER,                      -- the owner's worktree (entries only)
    embedding    BLOB NOT NULL CHECK (length(embedding) = 4 * dim),
    created_at   TEXT NOT NULL,
    CHECK ((entry_seq IS NULL) <> (summary_id IS NULL)),
    CHECK ((owner_kind = 'entry') = (entry_seq IS NOT NULL)),
    UNIQUE (entry_seq, model),
    UNIQUE (summary_id, model)
) STRICT;

CREATE INDEX vectors_scope ON vectors (workspace_id, model, branch);

-- A per-(workspace, model) generation bumped by every write to `vectors`, so a search cache
-- in any process can tell cheaply that its matrix is stale.
CREATE TABLE vector_generations (
    workspace_id INTEGER NOT NULL,
    model        TEXT NOT NULL,
    generation   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, model)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER vectors_after_insert AFTER INSERT ON vectors BEGIN
    INSERT INTO vector_generations (workspace_id, model, generation) VALUES (NEW.workspace_id, NEW.model, 1)
    ON CONFLICT (workspace_id, model) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER vectors_after_update AFTER UPDATE ON vectors BEGIN
    INSERT INTO vector_generations (workspace_id, model, generation) VALUES (NEW.workspace_id, NEW.model, 1)
    ON CONFLICT (workspace_id, model) DO UPDATE SET generation = generation + 1;
    INSERT INTO vector_generations (workspace_id, model, generation) VALUES (OLD.workspace_id, OLD.model, 1)
    ON CONFLICT (workspace_id, model) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER vectors_after_delete AFTER DELETE ON vectors BEGIN
    INSERT INTO vector_generations (workspace_id, model, generation) VALUES (OLD.workspace_id, OLD.model, 1)
    ON CONFLICT (workspace_id, model) DO UPDATE SET generation = generation + 1;
END;

-- ===========================================================================
-- migration bookkeeping (legacy JSONL buckets)
-- ===========================================================================

CREATE TABLE import_runs (
    id            INTEGER PRIMARY KEY,
    workspace_id  INTEGER NOT NULL REFERENCES workspaces(id),
    started_at    TEXT NOT NULL,
    finished_at   TEXT,                        -- NULL = interrupted or still running
    status        TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done', 'failed')),
    paths         TEXT NOT NULL DEFAULT '[]',  -- JSON list of the paths given
    lines_total   INTEGER NOT NULL DEFAULT 0,
    imported      INTEGER NOT NULL DEFAULT 0,
    duplicates    INTEGER NOT NULL DEFAULT 0,
    quarantined   INTEGER NOT NULL DEFAULT 0
) STRICT;

-- One row per source file: its fingerprint at import and how far it was imported.
CREATE TABLE import_sources (
    id              INTEGER PRIMARY KEY,
    workspace_id    INTEGER NOT NULL REFERENCES workspaces(id),
    path            TEXT NOT NULL,
    bucket          TEXT NOT NULL,             -- the legacy bucket name: provenance, not identity
    worktree_id     INTEGER NOT NULL REFERENCES worktrees(id),
    size            INTEGER NOT NULL,
    mtime_ns        INTEGER NOT NULL,
    sha256          TEXT NOT NULL,
    lines           INTEGER NOT NULL DEFAULT 0,
    done_through    INTEGER NOT NULL DEFAULT 0, -- last line number fully accounted for
    complete        INTEGER NOT NULL DEFAULT 0 CHECK (complete IN (0, 1)),
    run_id          INTEGER REFERENCES import_runs(id),
    UNIQUE (workspace_id, path)
) STRICT;

-- Where every imported line went: the row it created ('imported') or the row it duplicated.
CREATE TABLE entry_provenance (
    source_id  INTEGER NOT NULL REFERENCES import_sources(id),
    line       INTEGER NOT NULL,
    entry_seq  INTEGER NOT NULL REFERENCES journal_entries(seq),
    status     TEXT NOT NULL CHECK (status IN ('imported', 'duplicate')),
    PRIMARY KEY (source_id, line)
) STRICT, WITHOUT ROWID;

CREATE INDEX entry_provenance_by_entry ON entry_provenance (entry_seq);

-- Lines that could not be imported: raw bytes and the reason, never dropped.
CREATE TABLE quarantine (
    source_id  INTEGER NOT NULL REFERENCES import_sources(id),
    line       INTEGER NOT NULL,
    raw        BLOB NOT NULL,
    reason     TEXT NOT NULL,
    detail     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (source_id, line)
) STRICT, WITHOUT ROWID;

-- ===========================================================================
-- views for people at the sqlite3 prompt
-- ===========================================================================

-- The journal as reads show it: one row per session (its richest version), readable columns.
CREATE VIEW journal AS
SELECT lower(hex(e.id))                                                   AS id,
       w.uuid                                                             AS workspace,
       t.key                                                              AS worktree,
       e.branch                                                           AS branch,
       e.session_id                                                       AS session_id,
       e.timestamp                                                        AS timestamp,
       strftime('%Y-%m-%dT%H:%M:%SZ', e.ts_us / 1000000, 'unixepoch')    AS utc,
       e.focus, e.done, e.decisions, e.next_steps, e.files_modified, e.git_log,
       e.auto, e.enriched, e.griptree, e.agent_id, e.extra, e.seq
  FROM journal_entries e
  JOIN workspaces w ON w.id = e.workspace_id
  JOIN worktrees  t ON t.id = e.worktree_id
 WHERE e.head_wt = 1;

-- Every stored version, including the ones dedup hides.
CREATE VIEW journal_versions AS
SELECT lower(hex(e.id)) AS id, w.uuid AS workspace, t.key AS worktree, e.branch, e.session_id,
       e.timestamp, e.auto, e.rich, e.head_wt AS shown_in_worktree, e.head_ws AS shown_in_workspace,
       e.seq
  FROM journal_entries e
  JOIN workspaces w ON w.id = e.workspace_id
  JOIN worktrees  t ON t.id = e.worktree_id;

CREATE VIEW summaries_view AS
SELECT s.id, w.uuid AS workspace, coalesce(s.branch, '(workspace)') AS branch, s.kind,
       s.created_at, s.author, s.superseded_by IS NULL AS current, s.text
  FROM summaries s JOIN workspaces w ON w.id = s.workspace_id;

CREATE VIEW cursors_view AS
SELECT w.uuid AS workspace, c.branch, c.consumer, c.position, c.updated_at
  FROM cursors c JOIN workspaces w ON w.id = c.workspace_id;

CREATE VIEW vectors_view AS
SELECT v.id, w.uuid AS workspace, v.model, v.dim, v.owner_kind,
       coalesce(lower(hex(e.id)), CAST(v.summary_id AS TEXT)) AS owner, v.branch, v.created_at
  FROM vectors v
  JOIN workspaces w ON w.id = v.workspace_id
  LEFT JOIN journal_entries e ON e.seq = v.entry_seq;

CREATE VIEW import_accounting AS
SELECT s.path, s.bucket, s.lines,
       (SELECT count(*) FROM entry_provenance p WHERE p.source_id = s.id AND p.status = 'imported')  AS imported,
       (SELECT count(*) FROM entry_provenance p WHERE p.source_id = s.id AND p.status = 'duplicate') AS duplicates,
       (SELECT count(*) FROM quarantine q WHERE q.source_id = s.id)                                  AS quarantined,
       s.complete
  FROM import_sources s;
