"""SQLite's own check of the file (integrity_check), read as what each problem is: an index
that disagrees with its table (REINDEX rebuilds it from the table), the full-text index's
structure (rebuilt from the rows), or damage to a table's pages or to the file's structure,
which no rebuild can trust: the way out is a recovery into a new file, a re-import of
synapt's buckets, or a backup."""

from __future__ import annotations

import re

import apsw

from ..db import as_int
from ..errors import RecallError
from .report import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection

    from ..db import Database

_INDEX = re.compile(
    r"(?:missing from index|wrong # of entries in index|non-unique entry in index) (\S+)"
)
_TREE = re.compile(r"^Tree (\d+) page")
_IN_TABLE = re.compile(r" (?:in|value in) (\w+)(?:\.\w+)?\s*$")
_FTS = re.compile(r"fts5|(?:journal|summaries)_fts", re.I)


def way_out(path: str) -> str:
    """The way out of damaged pages, for a person to follow, in one sentence."""
    return (
        f"to save what is readable, `sqlite3 {path} .recover | sqlite3 NEW.db`, check it with"
        " `recall-sqlite --db NEW.db doctor` and put NEW.db in its place (after closing every"
        " process that uses the store); or start anew with `recall-sqlite --force import` to"
        " bring back the history synapt's buckets hold; or restore a backup"
    )


def check(conn: Connection, path: str) -> list[Finding]:
    problems: list[str] = []
    try:
        for r in conn.execute("PRAGMA integrity_check(1000)"):
            problems.append(str(r[0]))
    except apsw.Error as exc:
        # Damage can stop the check itself, after (or before) what it found so far.
        problems.append(f"integrity_check stopped: {exc}")
    if problems == ["ok"]:
        return []
    try:
        schema = conn.execute(
            "SELECT rootpage, type, name, tbl_name FROM sqlite_schema WHERE rootpage > 0"
        ).fetchall()
    except apsw.Error:
        schema = []
    roots = {as_int(r[0]): (str(r[1]), str(r[2])) for r in schema}
    table_of = {str(r[2]): str(r[3]) for r in schema}
    indexes: dict[str, list[str]] = {}
    tables: dict[str, list[str]] = {}
    fts: list[str] = []
    other: list[str] = []
    for problem in problems:
        for line in problem.splitlines():
            if line.startswith("***") or not line.strip():
                continue
            _classify(line, roots, indexes, tables, fts, other)
    # An index of a table whose pages are damaged disagrees with it because of them: no
    # REINDEX can read the table, so it is part of that damage.
    for name in [n for n in indexes if table_of.get(n) in tables]:
        tables[table_of[name]] += indexes.pop(name)
    out = [
        Finding(
            "index",
            "error",
            f"index {name} disagrees with its table ({len(lines)} problems, e.g. {lines[0]}):"
            " reads and searches through it miss or repeat rows",
            True,
            {"index": name, "problems": lines[:20]},
            fix=name,
        )
        for name, lines in sorted(indexes.items())
    ]
    if fts:
        out.append(
            Finding(
                "search_index",
                "error",
                f"the full-text index's structure is damaged ({fts[0]}): searches miss or fail",
                True,
                {"problems": fts[:20]},
            )
        )
    if tables or other:
        out.append(_damaged(tables, other, path))
    return out


def _classify(
    line: str,
    roots: dict[int, tuple[str, str]],
    indexes: dict[str, list[str]],
    tables: dict[str, list[str]],
    fts: list[str],
    other: list[str],
) -> None:
    m = _INDEX.search(line)
    if m:
        indexes.setdefault(m.group(1), []).append(line)
        return
    m = _TREE.match(line)
    if m and int(m.group(1)) in roots:
        kind, name = roots[int(m.group(1))]
        if _FTS.search(name):
            fts.append(line)
        else:
            (indexes if kind == "index" else tables).setdefault(name, []).append(line)
        return
    if _FTS.search(line):
        fts.append(line)
        return
    m = _IN_TABLE.search(line)
    if m:
        tables.setdefault(m.group(1), []).append(line)
        return
    other.append(line)


def _damaged(tables: dict[str, list[str]], other: list[str], path: str) -> Finding:
    where = ", ".join(sorted(tables)) or "the file's own structure"
    first = next(iter(lines[0] for lines in tables.values()), other[0] if other else "")
    return Finding(
        "damaged_pages",
        "error",
        f"pages of {where} are damaged ({first}): SQLite cannot vouch for the rows they"
        f" hold; {way_out(path)}",
        False,
        {
            "tables": sorted(tables),
            "problems": [*(x for v in tables.values() for x in v), *other][:50],
        },
    )


def reindex(db: Database, name: str) -> str:
    """Rebuild one index from its table, in its own short write."""
    quoted = '"' + name.replace('"', '""') + '"'
    try:
        with db.write() as conn:
            conn.execute(f"REINDEX {quoted}")
    except RecallError as exc:
        return f"could not rebuild index {name} ({exc}); {way_out(str(db.path))}"
    return f"rebuilt index {name} from its table (REINDEX)"
