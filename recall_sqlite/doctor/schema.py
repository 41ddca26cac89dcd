"""The store's schema against schema.sql: every table, index, trigger and view the file
defines (sqlite_schema), compared after comments and spacing are taken out, with a fresh
in-memory database made from schema.sql. A changed trigger, view or index (a flipped bit in
its SQL, an edit at the prompt) makes the store answer or maintain itself wrongly and
integrity_check does not look at it; a repair makes each one again from schema.sql, and
the full-text indexes (derived, like triggers) are dropped, made again and refilled. A
changed table holds rows no rebuild may touch: it is reported with the way out."""

from __future__ import annotations

import re

from ..journal import deferred
from ..migrations import schema_objects
from ..search.index import rebuild_index
from .pages import way_out
from .report import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection

    from ..db import Database

# The full-text indexes: virtual tables whose every row is derived, with their shadows.
_FTS = ("journal_fts", "summaries_fts")
# SQLite's own objects, and Litestream's (its `_litestream_seq` and `_litestream_lock`
# tables, which it adds to every database it replicates: sync/).
_INTERNAL = (
    "name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_litestream\\_%' ESCAPE '\\'"
)


def normalise(sql: object) -> str:
    text = re.sub(r"--[^\n]*", "", str(sql or ""))
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r"\s*([(),;=])\s*", r"\1", text)


def _objects(conn: Connection) -> dict[tuple[str, str], tuple[str, str]]:
    """(type, name) -> (normalised SQL, SQL as written) of every object of the schema."""
    return {
        (str(t), str(n)): (normalise(sql), str(sql or ""))
        for t, n, sql in conn.execute(
            f"SELECT type, name, sql FROM sqlite_schema WHERE {_INTERNAL}"
        )
    }


def expected() -> dict[tuple[str, str], tuple[str, str]]:
    return {(t, n): (normalise(sql), sql or "") for t, n, sql in schema_objects(_INTERNAL)}


_SHADOWS = ("data", "idx", "content", "docsize", "config")


def _fts_of(kind: str, name: str) -> str | None:
    """The full-text index a table is, or is a shadow table of (FTS5 makes and fills them)."""
    if kind != "table":
        return None
    return next((f for f in _FTS if name in (f, *(f"{f}_{s}" for s in _SHADOWS))), None)


def differences(conn: Connection) -> list[tuple[str, str]]:
    """(type, name) of every object missing, extra or changed."""
    want, got = expected(), _objects(conn)
    keys = set(want) | set(got)
    return sorted(k for k in keys if want.get(k, ("",))[0] != got.get(k, ("",))[0])


def check(conn: Connection, path: str) -> list[Finding]:
    wrong = differences(conn)
    if not wrong:
        return []
    unbuilt = deferred.missing(conn)
    if sorted(wrong) == sorted(("index", n) for n in unbuilt):
        return [
            Finding(
                "schema",
                "warning",
                f"{len(unbuilt)} of the journal's head indexes are missing"
                f" ({', '.join(unbuilt)}): an import builds them after its rows, and one"
                " is loading or was stopped before it built them. Every answer is right,"
                " but reads of the newest entries walk the whole journal and a search reads"
                " every match's row until that import or the next builds them",
                True,
                {"objects": [f"index {n}" for n in unbuilt]},
                fix=wrong,
            )
        ]
    tables = [n for t, n in wrong if t == "table" and _fts_of(t, n) is None]
    shown = ", ".join(f"{t} {n}" for t, n in wrong[:6])
    return [
        Finding(
            "schema",
            "error",
            f"the store's schema differs from schema.sql ({len(wrong)} objects: {shown}): the"
            " store maintains or answers wrongly"
            + (
                f"; its tables {', '.join(tables)} hold rows no repair rebuilds: {way_out(path)}"
                if tables
                else ""
            ),
            not tables,
            {"objects": [f"{t} {n}" for t, n in wrong]},
            fix=wrong,
        )
    ]


def repair(db: Database, wrong: list[tuple[str, str]]) -> list[str]:
    """Make the changed triggers, views and indexes again from schema.sql, and the
    full-text indexes again and refilled, in one write (a schema is changed whole), in
    schema.sql's order."""
    want = expected()
    fts = {f for t, n in wrong if (f := _fts_of(t, n)) is not None}
    if ("view", "journal_fts_content") in wrong:
        # The entry index's content view has the index's name as its prefix: SQLite's
        # defensive mode takes it for a shadow table while the index exists, so the two are
        # made again together, view first, as schema.sql makes them.
        fts.add("journal_fts")
    plain = {(t, n) for t, n in wrong if t in ("trigger", "view", "index")}
    with db.write() as conn:
        for f in sorted(fts):
            conn.execute(f'DROP TABLE IF EXISTS "{f}"')
        for t, n in sorted(plain):
            conn.execute(f'DROP {t.upper()} IF EXISTS "{n}"')
        for (t, n), (_, sql) in want.items():
            if (t, n) in plain or (t == "table" and n in fts):
                conn.execute(sql)
        if fts:
            rebuild_index(conn)
    done = [f"made {t} {n} again from schema.sql" for t, n in sorted(plain)]
    done += [
        f"made the full-text index {f} again from schema.sql and refilled it" for f in sorted(fts)
    ]
    return done
