"""doctor's checks of the store's rows, in read snapshots and none under the write lock:
the file's pages (pages.py), foreign keys, the derived state against its one definition
(derived.py), the columns derived at write time, every summary re-hashed and, with `deep`,
every entry (content.py), text that cannot be decoded (text.py), the full-text indexes
(search/index.py: cheap by default, token by token with `deep`), the JSON columns, the
guard tables. What the checks need of the journal's rows is read in one pass over them
(journal_pass.py), in one snapshot, while integrity_check runs beside it on a large store;
when damage stops that pass, each check reads the rows itself, as before. A check the
damage itself stops becomes a finding, never doctor's failure."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from typing import Any

import apsw

from .. import derived
from ..db import as_int
from ..errors import RecallError
from ..search.index import check_index
from . import content, journal_pass, pages, schema, text
from .report import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ParamSpec

    from apsw import Connection

    from ..context import StoreContext
    from ..db import Database
    from .journal_pass import JournalRows

    P = ParamSpec("P")

# The foreign keys doctor --repair may mend: links that are derived (a summary's source,
# a vector's owner), never the rows history is made of.
_LINK_TABLES = frozenset({"summary_sources", "vectors"})


# From this size on, integrity_check runs on a second connection beside the other checks.
BESIDE_BYTES = 16 << 20


class _Beside(threading.Thread):
    """integrity_check (the longest check) on a second read-only connection while the
    others run on the store's own: with two cores, doctor takes about as long as
    integrity_check alone. `findings` is None when the second connection could not be
    opened (the check then runs on the store's connection, after the others)."""

    def __init__(self, db: Database, step: Callable[[Connection], list[Finding]]) -> None:
        super().__init__(name="recall-sqlite doctor: integrity_check", daemon=True)
        self.db, self.step = db, step
        self.findings: list[Finding] | None = None

    def run(self) -> None:
        try:
            other = self.db.reader()
        except (RecallError, apsw.Error, OSError):
            return
        try:
            self.findings = guarded("integrity_check", _in_read, other, self.step)
        finally:
            other.close()


def run(ctx: StoreContext, *, deep: bool) -> list[Finding]:
    db = ctx.db
    path = str(db.path)

    def integrity(conn: Connection) -> list[Finding]:
        return pages.check(conn, path)

    beside: _Beside | None = None
    if _size(path) >= BESIDE_BYTES:
        beside = _Beside(db, integrity)
        beside.start()
    rest: list[Finding] = list(guarded("schema", _in_read, db, lambda c: schema.check(c, path)))
    journal = _journal(db)
    if journal is not None:
        found, unindexed = journal
        for name in JOURNAL_CHECKS:
            rest.extend(found[name])
    else:
        # Damage stopped the pass: each check reads the rows itself, and says what stops it.
        unindexed = None
        for name, step in _ONE_BY_ONE:
            rest.extend(guarded(name, _in_read, db, step))
    steps: list[tuple[str, Callable[[Any], list[Finding]]]] = [
        ("guard tables", _guards),
        # Every summary re-hashed against its uid even in the quick check: summaries are
        # few (one per session or day; ~15 µs each, 75 ms at 5000), and a pulled summary's
        # text is what another machine could have changed. Entries (a million) wait for --deep.
        ("summary content", content.check_summaries),
    ]
    if deep:
        steps += [("entry content", content.check_deep)]
    for name, step in steps:
        rest.extend(guarded(name, _in_read, db, step))
    rest.extend(guarded("full-text index", _index, db, deep, unindexed))
    if beside is not None:
        beside.join()
    if beside is not None and beside.findings is not None:
        first = beside.findings
    else:
        first = guarded("integrity_check", _in_read, db, integrity)
    return first + rest


def _size(path: str) -> int:
    total = 0
    for name in (path, f"{path}-wal"):
        with contextlib.suppress(OSError):
            total += os.stat(name).st_size
    return total


def _in_read(db: Database, step: Callable[[Connection], list[Finding]]) -> list[Finding]:
    found: list[Finding] = []
    try:
        with db.read() as conn:
            found = step(conn)
    except RecallError:
        if found:
            return found  # the snapshot's end failed on the damage the check just found
        raise
    return found


def guarded(
    name: str, step: Callable[P, list[Finding]], *args: P.args, **kwargs: P.kwargs
) -> list[Finding]:
    try:
        return step(*args, **kwargs)
    except (RecallError, apsw.Error, ValueError, TypeError) as exc:
        # (What damage hands a check: SQLite's errors, values of the wrong type.)
        return [
            Finding(
                "unreadable",
                "error",
                f"the {name} check could not read the store: {exc}",
                data={"check": name},
            )
        ]


# The checks the pass over the journal feeds (journal_pass.py), in the report's order.
JOURNAL_CHECKS = (
    "foreign keys",
    "derived state",
    "derived columns",
    "undecodable text",
    "JSON columns",
)


def _journal(db: Database) -> tuple[dict[str, list[Finding]], int] | None:
    """The findings of JOURNAL_CHECKS from one pass over the journal's rows, all in one
    snapshot, and the entries missing from the full-text index; None when damage stopped
    the pass (each check then reads for itself, as it says what stopped it)."""
    try:
        with db.read() as conn:
            rows = journal_pass.run(conn)
            found = {
                "foreign keys": guarded("foreign keys", _foreign_keys, conn, rows.orphans),
                "derived state": guarded("derived state", _derived, conn, rows),
                "derived columns": (
                    [content.derived_finding(list(rows.derived))] if rows.derived else []
                ),
                "undecodable text": guarded("undecodable text", _text, conn, rows),
                "JSON columns": _json_finding(list(rows.json)),
            }
    except (RecallError, apsw.Error, ValueError, TypeError):
        return None
    return found, rows.unindexed


def _foreign_keys(conn: Connection, journal: int | None = None) -> list[Finding]:
    """foreign_key_check's rows; `journal`: those of journal_entries, counted by the pass
    (every other table is checked here, the journal's parents are not read again)."""
    if journal is None:
        fk = conn.execute("PRAGMA foreign_key_check").fetchall()
        tables = sorted({str(r[0]) for r in fk})
        count = len(fk)
    else:
        counts = {journal_pass.TABLE: journal}
        for (table,) in conn.execute(
            "SELECT DISTINCT m.name FROM sqlite_schema m JOIN pragma_foreign_key_list(m.name)"
            f" WHERE m.type = 'table' AND m.name <> '{journal_pass.TABLE}' ORDER BY m.name"
        ).fetchall():
            counts[str(table)] = len(
                conn.execute(f'PRAGMA foreign_key_check("{table}")').fetchall()
            )
        tables = sorted(t for t, n in counts.items() if n)
        count = sum(counts.values())
    if not count:
        return []
    return [
        Finding(
            "foreign_keys",
            "error",
            f"{count} rows name a parent row that does not exist (tables: {', '.join(tables)})",
            set(tables) <= _LINK_TABLES,
            {"rows": count, "tables": tables},
        )
    ]


def _derived(conn: Connection, rows: JournalRows | None = None) -> list[Finding]:
    return [
        Finding(d.kind, "error", d.detail, True, d.to_dict(), fix=d.rows)
        for d in derived.check(conn, entries=rows.entries if rows is not None else None)
    ]


def _text(conn: Connection, rows: JournalRows) -> list[Finding]:
    return text.findings([*text.scan(conn, skip=(journal_pass.TABLE,)), *rows.undecodable])


def _index(db: Database, deep: bool, unindexed: int | None = None) -> list[Finding]:
    with db.scratch() if deep else db.read() as conn:
        index = check_index(conn, deep=deep, missing_entries=unindexed)
    if index.ok:
        return []
    return [
        Finding(
            "search_index",
            "error",
            "the full-text index disagrees with the rows it indexes"
            " (searches miss or show wrong entries)",
            True,
            index.to_dict(),
        )
    ]


def _json(conn: Connection) -> list[Finding]:
    rows = conn.execute(
        f"SELECT seq FROM journal_entries WHERE NOT ({journal_pass.JSON_OK}) LIMIT 20"
    ).fetchall()
    return _json_finding([as_int(r[0]) for r in rows])


def _json_finding(seqs: list[int]) -> list[Finding]:
    bad = seqs[:20]
    if not bad:
        return []
    return [
        Finding(
            "json",
            "error",
            f"entries (seq {', '.join(map(str, bad))}) hold list or extra columns that"
            " are not valid JSON",
            data={"seqs": bad},
        )
    ]


def _guards(conn: Connection) -> list[Finding]:
    out = []
    guard = conn.execute("SELECT workspace_id FROM journal_bulk").fetchall()
    if guard:
        out.append(
            Finding(
                "bulk_guard",
                "error",
                "journal_bulk is not empty: inserts of those workspaces skip the dedup trigger",
                True,
                {"workspaces": [as_int(r[0]) for r in guard]},
            )
        )
    rehome = conn.execute("SELECT count(*) FROM journal_rehome").fetchall()
    if rehome[0][0]:
        out.append(
            Finding(
                "rehome_guard",
                "error",
                "journal_rehome is not empty: entries' worktrees can be"
                " changed outside a re-homing import",
                True,
                {"rows": int(rehome[0][0])},
            )
        )
    return out


# The same checks, each reading the rows itself: what runs when damage stops the pass
# (and the tests' oracle of it).
_ONE_BY_ONE: tuple[tuple[str, Callable[[Connection], list[Finding]]], ...] = (
    ("foreign keys", _foreign_keys),
    ("derived state", _derived),
    ("derived columns", content.check_derived),
    ("undecodable text", text.check),
    ("JSON columns", _json),
)
