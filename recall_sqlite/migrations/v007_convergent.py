# ruff: noqa: E501 - frozen SQL, kept exactly as schema.sql v7 writes it
"""v7: convergent identities, for more than one machine (issue 17).

* An entry version's id is hashed from its canonical content alone (before: salted with
  the workspace uuid), so identical versions have one id in every workspace and on every
  machine; `UNIQUE (id)` becomes `UNIQUE (workspace_id, id)`.
* The dedup order ends in the id and the tie order of sessions at one instant is a hash of
  the session id (`sid_order`, now written with the row): neither depends on this store's
  insertion order any more, so two stores holding the same versions answer alike.
* A forgotten id is refused on every insert (a trigger); tombstones are keyed by
  (workspace, id) and say their formula: the ones already here hold pre-v7 ids
  (formula 1), which still keep a re-import out but mean nothing elsewhere.
* Summaries get a content id (`uid`); workspaces a `sync_key`; worktrees `gone_at`.

journal_entries and journal_tombstones are rebuilt the documented way (see v4): renamed
aside, created anew, the rows copied with their seqs (ids and sid_order computed here),
heads and counts recomputed, the old tables dropped, indexes and triggers created again.

Self-contained: the SQL and the id/tie/uid formulas below are frozen copies of v7's
(tests/unit/migrations/test_migrations.py holds them equal to the live code's at v7), never read from the
live modules, so a later change there cannot change what this step does.
"""

from __future__ import annotations

import hashlib
import json

from ..errors import StoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from apsw import Connection, SQLiteValue

JOURNAL_ENTRIES = """CREATE TABLE journal_entries (
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
) STRICT;"""

TOMBSTONES = """CREATE TABLE journal_tombstones (
    workspace_id  INTEGER NOT NULL,
    id            BLOB NOT NULL CHECK (length(id) = 16),
    formula       INTEGER NOT NULL DEFAULT 2 CHECK (formula IN (1, 2)),
    forgotten_at  TEXT NOT NULL,               -- ISO-8601 UTC
    PRIMARY KEY (workspace_id, id)
) STRICT, WITHOUT ROWID;"""

# The indexes and triggers of journal_entries v7 defines, in schema.sql order.
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
    """CREATE TRIGGER journal_entries_not_forgotten BEFORE INSERT ON journal_entries
WHEN EXISTS (SELECT 1 FROM journal_tombstones
              WHERE workspace_id = NEW.workspace_id AND id = NEW.id AND formula = 2)
BEGIN
    SELECT RAISE(ABORT, 'journal entry was forgotten: a forgotten version is never stored again');
END;""",
    """CREATE TRIGGER journal_entries_immutable BEFORE UPDATE OF
    id, workspace_id, session_id, branch, timestamp, ts_us, focus, done,
    decisions, next_steps, files_modified, git_log, auto, enriched, repair, griptree,
    agent_id, extra, rich, meaningful, sid_order
ON journal_entries
BEGIN
    SELECT RAISE(ABORT, 'journal entries are immutable: append a new version instead');
END;""",
    """CREATE TRIGGER journal_entries_rehome_guard BEFORE UPDATE OF worktree_id ON journal_entries
BEGIN
    SELECT RAISE(ABORT, 'journal entries are immutable: append a new version instead')
     WHERE NOT EXISTS (SELECT 1 FROM journal_rehome WHERE workspace_id = OLD.workspace_id);
    SELECT RAISE(ABORT, 'a re-homed entry version must not be a head while it moves (set head_wt = 0 first)')
     WHERE OLD.head_wt <> 0 OR NEW.head_wt <> 0;
    SELECT RAISE(ABORT, 'a re-homed entry version moves only to a worktree of its own workspace')
     WHERE NOT EXISTS (SELECT 1 FROM worktrees
                        WHERE id = NEW.worktree_id AND workspace_id = OLD.workspace_id);
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
END;""",
)


_COPIED = (
    "seq, workspace_id, worktree_id, session_id, branch, timestamp, ts_us, focus, done,"
    " decisions, next_steps, files_modified, git_log, auto, enriched, repair, griptree,"
    " agent_id, extra, stored_us, rich, meaningful"
)
_INSERT = (
    f"INSERT INTO journal_entries (id, sid_order, head_wt, head_ws, {_COPIED})"
    f" VALUES (?, ?, 0, 0, {', '.join('?' * len(_COPIED.split(',')))})"
)
_canonical = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
).encode
_NO_SESSION_ORDER = 1 << 62
_BATCH = 10_000


def entry_id(row: tuple[SQLiteValue, ...]) -> bytes:
    """v7's id of a copied row (`_COPIED` order): sha256 of its canonical JSON."""
    cols: tuple[Any, ...] = row  # v6's columns, each of its kind
    (_, _, _, sid, branch, ts, _, focus, done, decisions, nxt, files, gitlog, auto,
     enriched, repair, griptree, agent, extra) = cols[:19]  # fmt: skip
    fields: dict[str, Any] = {
        "agent_id": agent,
        "auto": bool(auto),
        "branch": branch,
        "decisions": json.loads(decisions),
        "done": json.loads(done),
        "enriched": bool(enriched),
        "files_modified": json.loads(files),
        "focus": focus,
        "git_log": json.loads(gitlog),
        "griptree": griptree,
        "next_steps": json.loads(nxt),
        "repair": bool(repair),
        "session_id": sid,
        "timestamp": ts,
    }
    if extra is not None:
        parsed = json.loads(extra)
        if parsed:
            fields["extra"] = parsed
    return hashlib.sha256(_canonical(fields).encode()).digest()[:16]


def tie_key(session_id: str, digest: bytes) -> int:
    """v7's sid_order of an entry."""
    if session_id:
        h = hashlib.sha256(f"session\n{session_id}".encode()).digest()
        return int.from_bytes(h[:8], "big") >> 2
    return _NO_SESSION_ORDER | (int.from_bytes(digest[:8], "big") >> 2)


def summary_uid(row: tuple[SQLiteValue, ...], sources: list[str]) -> bytes:
    """v7's content id of a summary (branch, kind, text, created_at, author, covers_from,
    covers_to) naming `sources` (entry ids, hex, in position order)."""
    branch, kind, text, created_at, author, cfrom, cto = row
    return hashlib.sha256(
        _canonical(
            {
                "author": author,
                "branch": branch,
                "covers": None if cfrom is None else [cfrom, cto],
                "created_at": created_at,
                "kind": kind,
                "sources": sources,
                "text": text,
            }
        ).encode()
    ).digest()[:16]


def migrate(conn: Connection) -> None:
    kept = [
        str(sql)
        for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_schema WHERE tbl_name = 'journal_entries'"
            " AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY rowid"
        ).fetchall()
        if name not in {_name(s) for s in OBJECTS}
    ]
    conn.execute("PRAGMA legacy_alter_table=ON")
    try:
        conn.execute("ALTER TABLE journal_entries RENAME TO journal_entries_v6")
        conn.execute("ALTER TABLE journal_tombstones RENAME TO journal_tombstones_v6")
        conn.execute(JOURNAL_ENTRIES)
        _copy_entries(conn)
        conn.execute(
            "UPDATE sqlite_sequence SET seq = max(seq, (SELECT seq FROM sqlite_sequence"
            " WHERE name = 'journal_entries_v6')) WHERE name = 'journal_entries'"
        )
        conn.execute("DELETE FROM sqlite_sequence WHERE name = 'journal_entries_v6'")
        conn.execute("DROP TABLE journal_entries_v6")
        conn.execute(TOMBSTONES)
        conn.execute(
            "INSERT INTO journal_tombstones (workspace_id, id, formula, forgotten_at)"
            " SELECT workspace_id, id, 1, forgotten_at FROM journal_tombstones_v6"
        )
        conn.execute("DROP TABLE journal_tombstones_v6")
        _heads_and_counts(conn)
        for sql in (*OBJECTS, *kept):
            conn.execute(sql)
    finally:
        conn.execute("PRAGMA legacy_alter_table=OFF")
    conn.execute("ALTER TABLE workspaces ADD COLUMN sync_key TEXT")
    conn.execute("ALTER TABLE worktrees ADD COLUMN gone_at TEXT")
    conn.execute(
        "ALTER TABLE summaries ADD COLUMN uid BLOB CHECK (uid IS NULL OR length(uid) = 16)"
    )
    _summary_uids(conn)
    conn.execute(
        "CREATE UNIQUE INDEX summaries_uid ON summaries (workspace_id, uid) WHERE uid IS NOT NULL"
    )
    # Heads may have moved (the new last tie-breaks): every vector cache reads anew.
    conn.execute("UPDATE vector_generations SET generation = generation + 1")
    problems = conn.execute("PRAGMA foreign_key_check").fetchall()
    if problems:
        raise StoreError(f"schema upgrade to v7 left foreign key problems: {problems[:5]}")


def _copy_entries(conn: Connection) -> None:
    cursor = conn.execute(f"SELECT {_COPIED} FROM journal_entries_v6 ORDER BY seq")
    while True:
        batch = [cursor.fetchone() for _ in range(_BATCH)]
        rows = [r for r in batch if r is not None]
        if not rows:
            return
        out = []
        for r in rows:
            digest = entry_id(r)
            out.append((digest, tie_key(r[3], digest), *r))
        conn.executemany(_INSERT, out)
        if len(rows) < _BATCH:
            return


def _heads_and_counts(conn: Connection) -> None:
    """v7's heads (its dedup order) and the per-scope counts, set directly (the triggers
    that would follow each change are created after this)."""
    order = "auto, ts_us DESC, rich DESC, id"
    conn.execute(
        f"""UPDATE journal_entries SET head_ws = w.hws, head_wt = w.hwt FROM (
        SELECT seq,
               CASE WHEN session_id = '' THEN 1
                    ELSE row_number() OVER (PARTITION BY workspace_id, session_id
                                            ORDER BY {order}) = 1 END AS hws,
               CASE WHEN session_id = '' THEN 1
                    ELSE row_number() OVER (PARTITION BY workspace_id, worktree_id, session_id
                                            ORDER BY {order}) = 1 END AS hwt
          FROM journal_entries) w WHERE journal_entries.seq = w.seq"""
    )
    conn.execute("DELETE FROM journal_counts_ws")
    conn.execute("DELETE FROM journal_counts_wt")
    conn.execute(
        "INSERT INTO journal_counts_ws (workspace_id, branch, heads, meaningful)"
        " SELECT workspace_id, branch, sum(head_ws), sum(head_ws * meaningful)"
        " FROM journal_entries GROUP BY workspace_id, branch HAVING sum(head_ws) > 0"
    )
    conn.execute(
        "INSERT INTO journal_counts_wt (workspace_id, worktree_id, branch, heads, meaningful)"
        " SELECT workspace_id, worktree_id, branch, sum(head_wt), sum(head_wt * meaningful)"
        " FROM journal_entries GROUP BY workspace_id, worktree_id, branch HAVING sum(head_wt) > 0"
    )


def _summary_uids(conn: Connection) -> None:
    for sid, *row in conn.execute(
        "SELECT id, branch, kind, text, created_at, author, covers_from, covers_to FROM summaries"
    ).fetchall():
        sources = [
            str(h)
            for (h,) in conn.execute(
                "SELECT lower(hex(e.id)) FROM summary_sources ss"
                " JOIN journal_entries e ON e.seq = ss.entry_seq"
                " WHERE ss.summary_id = ? ORDER BY ss.entry_seq",
                (sid,),
            ).fetchall()
        ]
        conn.execute(
            "UPDATE summaries SET uid = ? WHERE id = ?", (summary_uid(tuple(row), sources), sid)
        )


def _name(sql: str) -> str:
    """The name a CREATE INDEX / CREATE TRIGGER statement creates."""
    words = sql.split()
    return words[2] if words[1] in ("INDEX", "TRIGGER") else words[3]
