"""The schema's versions and the steps between them.

`schema.sql` (the repository's top level) is always the latest schema: a new store gets it whole
and is stamped with SCHEMA_VERSION, so no step ever runs on a fresh file. A store of an
older version runs the steps after its version in order, each in its own write
transaction together with the `user_version` it reaches, so a crash leaves the file at a
version some release wrote, never between two. Steps are forward only; there is no way
back to an older version, and an older recall-sqlite refuses a newer file untouched.

A step is a module `vNNN_<what>.py` here with `migrate(conn)`, taking the store from
version NNN - 1 to NNN; list it in STEPS. tests/unit/migrations/test_migrations.py opens the
frozen store of every earlier version (tests/stores/) and compares it with a fresh one.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection

# STEPS[i] takes a store from version i + 1 to version i + 2.
STEPS: tuple[str, ...] = (
    "v002_search",
    "v003_worktree_identity",
    "v004_integrity",
    "v005_rehome",
    "v006_bulk_index",
    "v007_convergent",
    "v008_sync",
    "v009_wake",
    "v010_compact_heads",
    "v011_search_probe",
    "v012_accountable",
)
SCHEMA_VERSION = 1 + len(STEPS)


def schema_sql() -> str:
    """The latest schema, from one path: `recall_sqlite/schema.sql` is the file itself in
    the wheel and a link to the repository's top-level `schema.sql` in a checkout."""
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    with open(os.path.join(package, "schema.sql"), encoding="utf-8") as fh:
        return fh.read()


def schema_objects(where: str = "1") -> list[tuple[str, str, str | None]]:
    """(type, name, SQL) of the objects schema.sql makes that `where` selects (an SQL
    condition on sqlite_schema), as a fresh store holds them: read from a database made
    from schema.sql in memory."""
    import apsw

    conn = apsw.Connection(":memory:")
    try:
        conn.execute(schema_sql())
        return [
            (str(t), str(n), None if sql is None else str(sql))
            for t, n, sql in conn.execute(
                f"SELECT type, name, sql FROM sqlite_schema WHERE {where}"
            )
        ]
    finally:
        conn.close()


def migrate_to(conn: Connection, version: int) -> None:
    """Run the step that takes a store to `version` (2 .. SCHEMA_VERSION), inside the
    caller's write transaction."""
    import importlib

    importlib.import_module(f"{__name__}.{STEPS[version - 2]}").migrate(conn)
