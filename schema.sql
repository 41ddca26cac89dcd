-- recall-sqlite schema, version 9. The single source of truth for the store's shape.
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
    last_seen   TEXT NOT NULL,
    sync_key    TEXT                           -- the repository this workspace syncs as (recall_sqlite/sync/), or NULL
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
    key          TEXT NOT NULL,                -- '.' = root; '@<git admin name>' (or '<main>@<name>') for a linked worktree; else the path relative to the root (absolute outside it), or an explicit label
    name         TEXT NOT NULL,                -- human label (basename)
    root         TEXT,                         -- absolute path last seen (NULL for imported-only worktrees)
    first_seen   TEXT NOT NULL,
    last_seen    TEXT NOT NULL,
    gone_at      TEXT,                         -- when its root was acknowledged gone (doctor --repair); history kept
    UNIQUE (workspace_id, key)
) STRICT;

-- ===========================================================================
-- journal
-- ===========================================================================

-- One row per distinct entry version. `id` is content-addressed (sha256 of the canonical
-- entry alone, first 16 bytes: journal/codec.py), so an identical entry collapses onto one
-- row and has the same id on every machine. `seq` is this store's insertion order
-- (AUTOINCREMENT: never reused), which cursors follow; nothing a read shows depends on it.
CREATE TABLE journal_entries (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    id             BLOB NOT NULL CHECK (length(id) = 16),
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
    sid_order      INTEGER NOT NULL DEFAULT 4611686018427387904,
                                               -- tie order at equal timestamps (journal/order.py): a hash of the
                                               -- session id; 2^62 and up (after every session) without one
    -- maintained by the triggers below:
    head_wt        INTEGER NOT NULL DEFAULT 0, -- 1 = the version reads show, within its worktree
    head_ws        INTEGER NOT NULL DEFAULT 0, -- 1 = the version reads show, across the workspace
    UNIQUE (workspace_id, id)
) STRICT;

-- Session lookups (dedup maintenance, same-session done items).
CREATE INDEX journal_by_session ON journal_entries (workspace_id, session_id);
-- "Newest n" is a walk of one of these partial indexes, never a scan of the workspace,
-- backwards: ascending, a new head lands at the right end of the b-tree, where SQLite fills
-- each page before it starts the next (descending, every page was left half empty;
-- schema version 10).
CREATE INDEX journal_heads_wt ON journal_entries (workspace_id, worktree_id, ts_us, sid_order DESC) WHERE head_wt = 1;
CREATE INDEX journal_heads_wt_branch ON journal_entries (workspace_id, worktree_id, branch, ts_us, sid_order DESC) WHERE head_wt = 1;
CREATE INDEX journal_heads_ws ON journal_entries (workspace_id, ts_us, sid_order DESC) WHERE head_ws = 1;
CREATE INDEX journal_heads_ws_branch ON journal_entries (workspace_id, branch, ts_us, sid_order DESC) WHERE head_ws = 1;
-- Full-text search joins each match to its entry for the scope, the head flags and the order
-- (search/journal.py, INDEXED BY): a probe of these few columns, tens of bytes an entry,
-- instead of the entry's row, so a common word's hundred thousand matches touch a tenth of
-- the pages (schema version 11).
CREATE INDEX journal_heads_by_seq ON journal_entries (seq, workspace_id, head_wt, head_ws, worktree_id, branch, meaningful, ts_us, sid_order) WHERE head_wt = 1 OR head_ws = 1;
-- Cursors walk insertion order per branch.
CREATE INDEX journal_by_branch_seq ON journal_entries (workspace_id, branch, seq);
-- What synapt's session start reads of the journal, in its own order (the timestamp's text,
-- not the instant), so the activated hook asks for five rows instead of the whole history
-- (schema version 9; journal/wake.py): the rich heads, the authored heads, the heads that
-- are not rich (a count), the authored entries without a session, and the versions of each
-- branch synapt looks up, which is every branch but main and master (the rowid, seq, orders
-- ties in each).
CREATE INDEX journal_wake_rich ON journal_entries (workspace_id, worktree_id, timestamp) WHERE head_wt = 1 AND rich > 0;
CREATE INDEX journal_wake_authored ON journal_entries (workspace_id, worktree_id, timestamp) WHERE head_wt = 1 AND auto = 0 AND (rich > 0 OR files_modified <> '[]');
CREATE INDEX journal_wake_plain ON journal_entries (workspace_id, worktree_id) WHERE head_wt = 1 AND rich = 0;
CREATE INDEX journal_wake_sessionless ON journal_entries (workspace_id, worktree_id, ts_us) WHERE session_id = '' AND auto = 0 AND (rich > 0 OR files_modified <> '[]');
CREATE INDEX journal_wake_branch ON journal_entries (workspace_id, worktree_id, branch, timestamp) WHERE branch NOT IN ('', 'main', 'master');

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

-- Dedup rule (journal/order.py, synapt 0.30.0's _entry_richness): a version beats the
-- current head of its session when it is non-auto and the head is auto; else, within the
-- same class, when it is newer; else, at the same instant, when it has more rich fields;
-- else when its id is smaller. Entries without a session id are never merged: each is its
-- own head.
-- The unary plus on head_ws/head_wt keeps the planner off the partial head indexes here:
-- they would match `head_ws = 1` and turn each insert into a walk of every head in the
-- workspace (quadratic imports); the session index is the right one.
--
-- A bulk insert (recall_sqlite/journal/bulk.py) replays this trigger for a whole batch at
-- once: while a `journal_bulk` row names the workspace, the trigger stands aside. That row
-- exists only inside the bulk writer's own transaction, so no other connection (and no
-- sqlite3 shell) ever sees it and every other insert keeps the rule right.
CREATE TABLE journal_bulk (
    workspace_id INTEGER PRIMARY KEY
) STRICT;

CREATE TRIGGER journal_entries_after_insert AFTER INSERT ON journal_entries
WHEN NOT EXISTS (SELECT 1 FROM journal_bulk WHERE workspace_id = NEW.workspace_id)
BEGIN
    UPDATE journal_entries SET head_ws = 0
     WHERE NEW.session_id <> '' AND session_id <> ''
       AND workspace_id = NEW.workspace_id AND session_id = NEW.session_id
       AND +head_ws = 1 AND seq <> NEW.seq
       AND ((NEW.auto < auto) OR (NEW.auto = auto AND NEW.ts_us > ts_us) OR (NEW.auto = auto AND NEW.ts_us = ts_us AND NEW.rich > rich) OR (NEW.auto = auto AND NEW.ts_us = ts_us AND NEW.rich = rich AND NEW.id < id));
    UPDATE journal_entries SET head_wt = 0
     WHERE NEW.session_id <> '' AND session_id <> ''
       AND workspace_id = NEW.workspace_id AND session_id = NEW.session_id
       AND worktree_id = NEW.worktree_id
       AND +head_wt = 1 AND seq <> NEW.seq
       AND ((NEW.auto < auto) OR (NEW.auto = auto AND NEW.ts_us > ts_us) OR (NEW.auto = auto AND NEW.ts_us = ts_us AND NEW.rich > rich) OR (NEW.auto = auto AND NEW.ts_us = ts_us AND NEW.rich = rich AND NEW.id < id));
    UPDATE journal_entries
       SET head_ws = CASE
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

-- The items of the list columns are strings. Entries are immutable (below), so checking
-- inserts is enough (a malformed list fails here with "malformed JSON").
CREATE TRIGGER journal_entries_check_lists BEFORE INSERT ON journal_entries
BEGIN
    SELECT RAISE(ABORT, 'journal_entries: done, decisions, next_steps, files_modified and git_log must be JSON arrays of strings')
     WHERE EXISTS (SELECT 1 FROM json_each(NEW.done) WHERE type <> 'text')
        OR EXISTS (SELECT 1 FROM json_each(NEW.decisions) WHERE type <> 'text')
        OR EXISTS (SELECT 1 FROM json_each(NEW.next_steps) WHERE type <> 'text')
        OR EXISTS (SELECT 1 FROM json_each(NEW.files_modified) WHERE type <> 'text')
        OR EXISTS (SELECT 1 FROM json_each(NEW.git_log) WHERE type <> 'text');
END;

-- Entry ids that were forgotten (`recall-sqlite journal forget`, or a DELETE from a shell):
-- neither a write, an import nor another machine's replica brings them back (a tombstone
-- wins over every version of its id). Only the id: no byte of the text. `formula` 1 marks
-- an id of the pre-v7 formula (salted with this store's workspace uuid): it still keeps a
-- re-import out here, and means nothing on any other machine, so it is never synced.
CREATE TABLE journal_tombstones (
    workspace_id  INTEGER NOT NULL,
    id            BLOB NOT NULL CHECK (length(id) = 16),
    formula       INTEGER NOT NULL DEFAULT 2 CHECK (formula IN (1, 2)),
    forgotten_at  TEXT NOT NULL,               -- ISO-8601 UTC
    asked_by      TEXT CHECK (asked_by IS NULL OR (length(asked_by) = 16 AND asked_by NOT GLOB '*[^0-9a-f]*')),
                                               -- the machine whose forget it is (v12); NULL: this store's own
    PRIMARY KEY (workspace_id, id)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER journal_entries_not_forgotten BEFORE INSERT ON journal_entries
WHEN EXISTS (SELECT 1 FROM journal_tombstones
              WHERE workspace_id = NEW.workspace_id AND id = NEW.id AND formula = 2)
BEGIN
    SELECT RAISE(ABORT, 'journal entry was forgotten: a forgotten version is never stored again');
END;

-- Entries are history: the store never edits them (forget deletes a version whole), and
-- refuses an edit of the fields that identity and ordering are derived from.
CREATE TRIGGER journal_entries_immutable BEFORE UPDATE OF
    id, workspace_id, session_id, branch, timestamp, ts_us, focus, done,
    decisions, next_steps, files_modified, git_log, auto, enriched, repair, griptree,
    agent_id, extra, rich, meaningful, sid_order
ON journal_entries
BEGIN
    SELECT RAISE(ABORT, 'journal entries are immutable: append a new version instead');
END;

-- The one exception (schema version 5): re-homing (recall_sqlite/legacy/rehome.py) moves
-- the entries an import filed under the wrong worktree. Its writer puts a `journal_rehome`
-- row naming the workspace in place for the length of its own transaction (like
-- journal_bulk: no other connection, and no sqlite3 shell, ever sees it), so every other
-- UPDATE of worktree_id is refused. A version moves only while it is no head in its
-- worktree (the writer demotes it first and the dedup rule promotes afterwards), so the
-- per-worktree counts, which follow head_wt changes, never miss a move; and only to a
-- worktree of its own workspace.
CREATE TABLE journal_rehome (
    workspace_id INTEGER PRIMARY KEY
) STRICT;

CREATE TRIGGER journal_entries_rehome_guard BEFORE UPDATE OF worktree_id ON journal_entries
BEGIN
    SELECT RAISE(ABORT, 'journal entries are immutable: append a new version instead')
     WHERE NOT EXISTS (SELECT 1 FROM journal_rehome WHERE workspace_id = OLD.workspace_id);
    SELECT RAISE(ABORT, 'a re-homed entry version must not be a head while it moves (set head_wt = 0 first)')
     WHERE OLD.head_wt <> 0 OR NEW.head_wt <> 0;
    SELECT RAISE(ABORT, 'a re-homed entry version moves only to a worktree of its own workspace')
     WHERE NOT EXISTS (SELECT 1 FROM worktrees
                        WHERE id = NEW.worktree_id AND workspace_id = OLD.workspace_id);
END;

-- ===========================================================================
-- summaries
-- ===========================================================================

-- A text summary of some of the journal. `branch` NULL = workspace-wide. Rows are
-- immutable except `superseded_by`: a new summary of the same scope (workspace, branch,
-- kind) points the previous current one at itself, so the history stays a visible chain
-- and "current" is `superseded_by IS NULL` (exactly one per scope).
CREATE TABLE summaries (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id   INTEGER NOT NULL REFERENCES workspaces(id),
    branch         TEXT,                       -- NULL = workspace-wide
    kind           TEXT NOT NULL CHECK (length(kind) > 0),
    text           TEXT NOT NULL CHECK (length(text) > 0),
    created_at     TEXT NOT NULL,              -- ISO-8601 UTC with microseconds, assigned by the store
    created_us     INTEGER NOT NULL,           -- the same instant; strictly increasing per workspace
    author         TEXT,                       -- who or which model wrote it, when given
    covers_from    INTEGER,                    -- covered range of journal seq (inclusive), when given
    covers_to      INTEGER,
    source_count   INTEGER NOT NULL DEFAULT 0, -- rows in summary_sources (0: nothing to join)
    covered_seq    INTEGER NOT NULL DEFAULT 0, -- highest journal seq the summary accounts for (staleness)
    superseded_by  INTEGER REFERENCES summaries(id) ON DELETE SET NULL,
    uid            BLOB CHECK (uid IS NULL OR length(uid) = 16),
                                               -- content id (summaries.py): the same summary on every machine
    minted_from    INTEGER,                    -- v12: the covered range its uid was made with, where
    minted_to      INTEGER,                    -- a pull translated covers_* to this store's seqs
    UNIQUE (workspace_id, created_us),         -- also the index of "newest first" over all scopes
    CHECK ((covers_from IS NULL) = (covers_to IS NULL)),
    CHECK (covers_from IS NULL OR (covers_from >= 0 AND covers_from <= covers_to))
) STRICT;

CREATE UNIQUE INDEX summaries_uid ON summaries (workspace_id, uid) WHERE uid IS NOT NULL;
-- latest/list of one branch (or workspace-wide: branch IS NULL), optionally one kind.
CREATE INDEX summaries_scope ON summaries (workspace_id, branch, kind, created_us DESC);
-- Removing a summary re-links the one it superseded; the FK action needs this too.
CREATE INDEX summaries_superseded_by ON summaries (superseded_by) WHERE superseded_by IS NOT NULL;

-- The entries a summary names (when covers was a list of ids). Entries are never deleted
-- through a summary: removing the summary removes only these links (and its vectors).
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
-- so a late-arriving entry is still unread. Entries with seq <= position on the branch
-- count as read. `position` only grows, except through an explicit reset.
CREATE TABLE cursors (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
    branch       TEXT NOT NULL,                -- any text, '' = detached HEAD / no git
    consumer     TEXT NOT NULL CHECK (length(consumer) > 0),
    position     INTEGER NOT NULL DEFAULT 0 CHECK (position >= 0),
    updated_at   TEXT NOT NULL,                -- when position last changed (ISO-8601 UTC)
    PRIMARY KEY (workspace_id, branch, consumer)
) STRICT, WITHOUT ROWID;

-- ===========================================================================
-- vectors
-- ===========================================================================

-- Embeddings that hosts supply (the store never computes them), searched with numpy after
-- SQL has chosen the rows (workspace, model, kind, branch, worktree, shown versions).
-- Everything the search relies on is enforced here by triggers, so rows written from a
-- sqlite3 shell are held to the same rules as rows written by recall_sqlite/vectors/.

-- The dimension of a (workspace, model), declared by its first put (or by hand, before
-- inserting vectors from a shell) and fixed from then on, even if every vector of the model
-- is later deleted.
CREATE TABLE vector_models (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
    model        TEXT NOT NULL CHECK (length(model) > 0),
    dim          INTEGER NOT NULL CHECK (dim > 0),
    PRIMARY KEY (workspace_id, model)
) STRICT, WITHOUT ROWID;

-- Embeddings as little-endian float32 BLOBs (finite, non-zero: checked on write by
-- vectors/vectors.py). The owner is exactly one of an entry version or a summary, at most one
-- vector per (owner, model). `branch` and `worktree_id` are copies of the owner's, kept
-- equal to it by the triggers below, so scoping is an index range in SQL and readable here.
-- AUTOINCREMENT: ids never come back, so "rows added since a cache was built" is exactly
-- `id > the highest id it saw` and inserts need no change log.
CREATE TABLE vectors (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
    model        TEXT NOT NULL,
    dim          INTEGER NOT NULL CHECK (dim > 0),
    entry_seq    INTEGER REFERENCES journal_entries(seq) ON DELETE CASCADE,
    summary_id   INTEGER REFERENCES summaries(id) ON DELETE CASCADE,
    owner_kind   TEXT NOT NULL CHECK (owner_kind IN ('entry', 'summary')),
    branch       TEXT,                         -- the owner's branch (NULL: a workspace-wide summary)
    worktree_id  INTEGER,                      -- the owner's worktree (entries only)
    embedding    BLOB NOT NULL CHECK (length(embedding) = 4 * dim),
    created_at   TEXT NOT NULL,                -- when this embedding was stored (ISO-8601 UTC)
    CHECK ((entry_seq IS NULL) <> (summary_id IS NULL)),
    CHECK ((owner_kind = 'entry') = (entry_seq IS NOT NULL)),
    CHECK (owner_kind = 'entry' OR worktree_id IS NULL)
) STRICT;

-- One vector per (owner, model); also the owner lookups of puts and of the delete cascades.
-- Partial, so an entry's vector does not carry a (NULL, model) entry in the summaries'
-- index and the other way round (a fifth of the cost of a bulk put).
CREATE UNIQUE INDEX vectors_entry_owner ON vectors (entry_seq, model) WHERE entry_seq IS NOT NULL;
CREATE UNIQUE INDEX vectors_summary_owner ON vectors (summary_id, model) WHERE summary_id IS NOT NULL;
CREATE INDEX vectors_scope ON vectors (workspace_id, model, branch);

-- Per (workspace, model): `generation` is bumped by every change that can alter any search
-- result (a vector written or deleted, its owner shown or hidden), so a search cache in any
-- process tells with one primary-key read that it is stale. `vectors` counts the rows, so a
-- search can say how many vectors it did not look at without counting them.
CREATE TABLE vector_generations (
    workspace_id   INTEGER NOT NULL,
    model          TEXT NOT NULL,
    generation     INTEGER NOT NULL DEFAULT 0,
    vectors        INTEGER NOT NULL DEFAULT 0,
    pruned_through INTEGER NOT NULL DEFAULT 0, -- vector_changes no longer holds generations <= this
    PRIMARY KEY (workspace_id, model)
) STRICT, WITHOUT ROWID;

-- Which vector each update, delete or change of owner visibility touched (inserts are found
-- by id, see above): a cache a few generations behind re-reads just those rows instead of
-- the whole matrix. Pruned by vectors/vectors.py to the recent past; an older cache rebuilds.
CREATE TABLE vector_changes (
    workspace_id INTEGER NOT NULL,
    model        TEXT NOT NULL,
    generation   INTEGER NOT NULL,
    vector_id    INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, model, generation, vector_id)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER vectors_check_insert BEFORE INSERT ON vectors
BEGIN
    SELECT RAISE(ABORT, 'vector dimension differs from its model''s, or the model is not declared in vector_models (workspace_id, model, dim) yet')
     WHERE NOT EXISTS (SELECT 1 FROM vector_models
                        WHERE workspace_id = NEW.workspace_id AND model = NEW.model AND dim = NEW.dim);
    SELECT RAISE(ABORT, 'vector owner entry is not in this workspace, or branch/worktree_id differ from the entry''s')
     WHERE NEW.entry_seq IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM journal_entries
                        WHERE seq = NEW.entry_seq AND workspace_id = NEW.workspace_id
                          AND branch IS NEW.branch AND worktree_id IS NEW.worktree_id);
    SELECT RAISE(ABORT, 'vector owner summary is not in this workspace, or branch differs from the summary''s')
     WHERE NEW.summary_id IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM summaries
                        WHERE id = NEW.summary_id AND workspace_id = NEW.workspace_id
                          AND branch IS NEW.branch);
END;

-- Only the embedding (and the owner's copied branch, see below) may change in place; moving a
-- vector to another owner, model or workspace is a delete and a put.
CREATE TRIGGER vectors_check_update BEFORE UPDATE OF
    workspace_id, model, dim, entry_seq, summary_id, owner_kind, branch, worktree_id ON vectors
BEGIN
    SELECT RAISE(ABORT, 'a vector''s workspace, model, dimension and owner cannot change: delete it and put it again')
     WHERE NEW.workspace_id IS NOT OLD.workspace_id OR NEW.model IS NOT OLD.model
        OR NEW.dim IS NOT OLD.dim OR NEW.entry_seq IS NOT OLD.entry_seq
        OR NEW.summary_id IS NOT OLD.summary_id OR NEW.owner_kind IS NOT OLD.owner_kind;
    SELECT RAISE(ABORT, 'a vector''s branch and worktree_id are copies of its owner''s')
     WHERE (NEW.entry_seq IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM journal_entries WHERE seq = NEW.entry_seq
                             AND branch IS NEW.branch AND worktree_id IS NEW.worktree_id))
        OR (NEW.summary_id IS NOT NULL
            AND (NEW.worktree_id IS NOT NULL
                 OR NOT EXISTS (SELECT 1 FROM summaries WHERE id = NEW.summary_id
                                 AND branch IS NEW.branch)));
END;

CREATE TRIGGER vectors_after_insert AFTER INSERT ON vectors
BEGIN
    INSERT INTO vector_generations (workspace_id, model, generation, vectors)
    VALUES (NEW.workspace_id, NEW.model, 1, 1)
    ON CONFLICT (workspace_id, model) DO UPDATE SET generation = generation + 1, vectors = vectors + 1;
END;

CREATE TRIGGER vectors_after_update AFTER UPDATE ON vectors
BEGIN
    UPDATE vector_generations SET generation = generation + 1
     WHERE workspace_id = NEW.workspace_id AND model = NEW.model;
    INSERT INTO vector_changes (workspace_id, model, generation, vector_id)
    SELECT workspace_id, model, generation, NEW.id FROM vector_generations
     WHERE workspace_id = NEW.workspace_id AND model = NEW.model;
END;

CREATE TRIGGER vectors_after_delete AFTER DELETE ON vectors
BEGIN
    UPDATE vector_generations SET generation = generation + 1, vectors = vectors - 1
     WHERE workspace_id = OLD.workspace_id AND model = OLD.model;
    INSERT INTO vector_changes (workspace_id, model, generation, vector_id)
    SELECT workspace_id, model, generation, OLD.id FROM vector_generations
     WHERE workspace_id = OLD.workspace_id AND model = OLD.model;
END;

-- Deleting an owner deletes its vectors even where foreign keys are off (a stock sqlite3
-- shell), so no orphan can occupy a top k. With foreign keys on, the cascade got there first.
CREATE TRIGGER vectors_follow_entry_delete AFTER DELETE ON journal_entries
BEGIN
    DELETE FROM vectors WHERE entry_seq = OLD.seq;
END;

CREATE TRIGGER vectors_follow_summary_delete AFTER DELETE ON summaries
BEGIN
    DELETE FROM vectors WHERE summary_id = OLD.id;
END;

-- Searches show only the versions reads show (see vectors/matrix.py). When an entry version gains
-- or loses that status (a richer version of its session arrived), every search over its
-- vectors may change: bump the generation and log the vectors, as a vector write would.
CREATE TRIGGER vectors_follow_entry_heads AFTER UPDATE OF head_wt, head_ws ON journal_entries
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
END;

-- A summary that moves branch, or is superseded or reinstated, changes what searches show:
-- re-copying its branch onto its vectors is an UPDATE of them, which bumps and logs above.
CREATE TRIGGER vectors_follow_summary AFTER UPDATE OF branch, superseded_by ON summaries
WHEN OLD.branch IS NOT NEW.branch OR (OLD.superseded_by IS NULL) <> (NEW.superseded_by IS NULL)
BEGIN
    UPDATE vectors SET branch = NEW.branch WHERE summary_id = NEW.id;
END;

-- ===========================================================================
-- migration bookkeeping (legacy JSONL buckets)
-- ===========================================================================

-- One import invocation. Counts are of the lines this run read (a re-run of unchanged
-- files reads none). A run killed mid-way stays 'running' until the next run finds its
-- process gone and marks it 'interrupted'; its committed chunks stand.
CREATE TABLE import_runs (
    id            INTEGER PRIMARY KEY,
    workspace_id  INTEGER NOT NULL REFERENCES workspaces(id),
    started_at    TEXT NOT NULL,
    finished_at   TEXT,                        -- NULL = interrupted or still running
    status        TEXT NOT NULL DEFAULT 'running'
                  CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
    host          TEXT NOT NULL DEFAULT '',    -- with pid: tells a live run from a killed one
    pid           INTEGER NOT NULL DEFAULT 0,
    paths         TEXT NOT NULL DEFAULT '[]',  -- JSON list of the paths given
    lines_total   INTEGER NOT NULL DEFAULT 0,
    imported      INTEGER NOT NULL DEFAULT 0,
    duplicates    INTEGER NOT NULL DEFAULT 0,
    quarantined   INTEGER NOT NULL DEFAULT 0
) STRICT;

-- One row per version of a source file. The prefix [0, size) of the file is accounted
-- for line by line; `sha256` fingerprints exactly that prefix, so an append (synapt's only
-- way of writing) is recognised and resumed from `size`, while a rewrite (e.g. synapt's
-- compact_journal) makes a new version (`version` + 1) and supersedes this one. Progress
-- columns are updated in the same transaction as the rows of each chunk, so a killed
-- import resumes exactly where its last commit left off.
CREATE TABLE import_sources (
    id              INTEGER PRIMARY KEY,
    workspace_id    INTEGER NOT NULL REFERENCES workspaces(id),
    path            TEXT NOT NULL,             -- relative to the workspace root; '<worktree key>:<path>' in a linked worktree outside it; absolute outside both
    version         INTEGER NOT NULL DEFAULT 1,
    superseded      INTEGER NOT NULL DEFAULT 0 CHECK (superseded IN (0, 1)),
    bucket          TEXT NOT NULL,             -- the legacy bucket name: provenance, not identity
    layout          TEXT NOT NULL CHECK (layout IN ('worktrees', 'flat', 'file')),
    worktree_id     INTEGER NOT NULL REFERENCES worktrees(id),
    size            INTEGER NOT NULL DEFAULT 0, -- bytes accounted for
    sha256          TEXT NOT NULL,             -- of those bytes
    mtime_ns        INTEGER NOT NULL DEFAULT 0, -- when size was the whole file; 0 = unknown
    lines           INTEGER NOT NULL DEFAULT 0, -- lines in those bytes, each accounted for
    tail_open       INTEGER NOT NULL DEFAULT 0 CHECK (tail_open IN (0, 1)), -- last line had no newline
    complete        INTEGER NOT NULL DEFAULT 0 CHECK (complete IN (0, 1)), -- size was the whole file
    imported        INTEGER NOT NULL DEFAULT 0, -- lines that created a row
    duplicates      INTEGER NOT NULL DEFAULT 0, -- lines whose entry was already stored
    quarantined     INTEGER NOT NULL DEFAULT 0, -- lines kept in `quarantine`
    first_run_id    INTEGER REFERENCES import_runs(id),
    last_run_id     INTEGER REFERENCES import_runs(id),
    UNIQUE (workspace_id, path, version),
    CHECK (imported + duplicates + quarantined = lines)
) STRICT;

-- Where every imported line went: the row it created ('imported') or the row that already
-- held the same content ('duplicate').
CREATE TABLE entry_provenance (
    source_id  INTEGER NOT NULL REFERENCES import_sources(id),
    line       INTEGER NOT NULL CHECK (line >= 1),
    entry_seq  INTEGER NOT NULL REFERENCES journal_entries(seq),
    status     TEXT NOT NULL CHECK (status IN ('imported', 'duplicate')),
    PRIMARY KEY (source_id, line)
) STRICT, WITHOUT ROWID;

CREATE INDEX entry_provenance_by_entry ON entry_provenance (entry_seq);

-- Lines that could not be imported: raw bytes and the reason, never dropped. `reason` is a
-- stable code (blank, invalid-utf8, truncated, invalid-json, not-an-object,
-- missing-timestamp, bad-timestamp, wrong-type, bad-text, invalid-entry, too-long, and
-- forgotten: the line's entry was forgotten, `raw` is empty and `offset` -1 when that
-- happened after its import),
-- `detail` the readable message. A rowid table so an enormous line can be streamed in
-- with incremental blob I/O; `raw_length` is the line's full length and `raw` holds all
-- of it up to 256 MiB (beyond that, the source file at `offset` keeps the rest).
CREATE TABLE quarantine (
    id          INTEGER PRIMARY KEY,
    source_id   INTEGER NOT NULL REFERENCES import_sources(id),
    line        INTEGER NOT NULL CHECK (line >= 1),
    offset      INTEGER NOT NULL,              -- byte offset of the line in the file
    raw         BLOB NOT NULL,
    raw_length  INTEGER NOT NULL,
    reason      TEXT NOT NULL,
    detail      TEXT NOT NULL DEFAULT '',
    UNIQUE (source_id, line)
) STRICT;

-- ===========================================================================
-- search (schema version 2)
-- ===========================================================================

-- Full-text search of entries and summaries (FTS5, in every SQLite this package ships and
-- in the stock sqlite3 3.40 shell). Both indexes are external-content: they hold only the
-- inverted index, never a second copy of the text, so the file grows by the index alone.
-- Triggers keep them right for every writer: row-by-row inserts, journal/bulk.py (which
-- stands aside only from the head trigger), imports and the shell.

-- What the entry index tokenizes: the JSON lists decoded into their items, one per line,
-- so an escaped newline or quote inside an item (`\n`, `\"`) never glues two words into
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

-- A batch (recall_sqlite/journal/bulk.py, under its `journal_bulk` guard) indexes its rows
-- itself with one INSERT ... SELECT: a third of the cost of indexing them row by row (v6).
CREATE TRIGGER journal_fts_after_insert AFTER INSERT ON journal_entries
WHEN NOT EXISTS (SELECT 1 FROM journal_bulk WHERE workspace_id = NEW.workspace_id)
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

-- ===========================================================================
-- forgetting
-- ===========================================================================

-- Removing an entry version (forget, or a DELETE at the sqlite3 prompt) keeps every derived
-- table right, exactly as recall_sqlite/derived.py defines it: the counts lose the head
-- that went, the best remaining version of its session becomes the head (the UPDATE fires
-- the count and vector triggers above), summary links go, the lines it was imported from
-- stay accounted for (as quarantined 'forgotten', with no bytes kept) and its id is
-- tombstoned.
CREATE TRIGGER journal_entries_after_delete AFTER DELETE ON journal_entries
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
                   ORDER BY auto, ts_us DESC, rich DESC, id LIMIT 1);
    UPDATE journal_entries SET head_wt = 1
     WHERE OLD.head_wt = 1 AND OLD.session_id <> ''
       AND seq = (SELECT seq FROM journal_entries
                   WHERE workspace_id = OLD.workspace_id AND session_id = OLD.session_id
                     AND worktree_id = OLD.worktree_id
                   ORDER BY auto, ts_us DESC, rich DESC, id LIMIT 1);
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
    INSERT INTO journal_tombstones (workspace_id, id, formula, forgotten_at)
    VALUES (OLD.workspace_id, OLD.id, 2, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT (workspace_id, id) DO UPDATE SET formula = 2;
END;

-- ===========================================================================
-- more than one machine (schema version 8; recall_sqlite/sync/)
-- ===========================================================================

-- A removed summary (by its content id) is never stored again: a machine that still has
-- it cannot bring it back.
CREATE TABLE summary_tombstones (
    workspace_id INTEGER NOT NULL,
    uid          BLOB NOT NULL CHECK (length(uid) = 16),
    removed_at   TEXT NOT NULL,                -- ISO-8601 UTC
    asked_by     TEXT CHECK (asked_by IS NULL OR (length(asked_by) = 16 AND asked_by NOT GLOB '*[^0-9a-f]*')),
                                               -- the machine that removed it (v12); NULL: this store's own
    PRIMARY KEY (workspace_id, uid)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER summaries_after_delete_tombstone AFTER DELETE ON summaries
WHEN OLD.uid IS NOT NULL
BEGIN
    INSERT INTO summary_tombstones (workspace_id, uid, removed_at)
    VALUES (OLD.workspace_id, OLD.uid, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ON CONFLICT (workspace_id, uid) DO NOTHING;
END;

CREATE TRIGGER summaries_not_removed BEFORE INSERT ON summaries
WHEN NEW.uid IS NOT NULL AND EXISTS (SELECT 1 FROM summary_tombstones
                                      WHERE workspace_id = NEW.workspace_id AND uid = NEW.uid)
BEGIN
    SELECT RAISE(ABORT, 'summary was removed: a removed summary is never stored again');
END;

-- An explicit delete of an owner's embedding (vectors.delete), by the owner's content id
-- (entry id, summary uid): of a put and a delete of one (owner, model) the later wins, on
-- every machine (a put removes the tombstone; a pull compares created_at and deleted_at).
CREATE TABLE vector_tombstones (
    workspace_id INTEGER NOT NULL,
    owner_kind   TEXT NOT NULL CHECK (owner_kind IN ('entry', 'summary')),
    owner        BLOB NOT NULL CHECK (length(owner) = 16),
    model        TEXT NOT NULL,
    deleted_at   TEXT NOT NULL,                -- ISO-8601 UTC with microseconds, as vectors.created_at
    asked_by     TEXT CHECK (asked_by IS NULL OR (length(asked_by) = 16 AND asked_by NOT GLOB '*[^0-9a-f]*')),
                                               -- the machine that deleted it (v12); NULL: this store's own
    PRIMARY KEY (workspace_id, model, owner_kind, owner)
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

-- What was forgotten (entries), removed (summaries) or deleted (vectors), and which machine
-- asked: every machine applies every machine's forget, so each says whose it was (v12). Ids
-- only: a tombstone holds no byte of the text.
CREATE VIEW forgotten AS
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
  FROM vector_tombstones t JOIN workspaces w ON w.id = t.workspace_id;

-- Per source file version: its lines (each imported, a duplicate or quarantined: a CHECK
-- holds the sum), how many bytes were read, and whether that was the whole file.
-- `recall-sqlite verify` compares this with the files as they are now.
CREATE VIEW import_accounting AS
SELECT s.path, s.version, s.bucket, t.key AS worktree, s.lines, s.imported, s.duplicates,
       s.quarantined, s.size, s.complete, s.superseded
  FROM import_sources s
  JOIN worktrees t ON t.id = s.worktree_id;
