"""Text that cannot be decoded: a TEXT value whose bytes are not UTF-8 (a flipped bit, a
row written around the store) makes every read that meets it fail, and integrity_check
does not look inside values. Every TEXT column of every table of the store is scanned; the
entries and summaries found are restored by doctor/content.py where an intact copy exists
(their content ids say which bytes were there)."""

from __future__ import annotations

from typing import Any

from ..db import as_int
from .report import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection, SQLiteValue

    from ..db import Row

# The tables of the store's schema that hold text; the full-text index's shadow tables
# (rebuilt from the rows) and SQLite's own are not.
_SKIP_PREFIXES = ("sqlite_", "journal_fts", "summaries_fts")
FUNCTION = "recall_doctor_bad_utf8"


def _bad_utf8(*values: SQLiteValue) -> int | None:
    return first_undecodable(values)


def first_undecodable(values: tuple[SQLiteValue, ...]) -> int | None:
    """The index of the first value whose bytes are not UTF-8, or None."""
    for i, v in enumerate(values):
        if isinstance(v, bytes):
            try:
                v.decode("utf-8")
            except UnicodeDecodeError:
                return i
    return None


def register(conn: Connection) -> None:
    conn.create_scalar_function(FUNCTION, _bad_utf8, -1, deterministic=True)


def _text_tables(conn: Connection) -> list[tuple[str, list[str], list[str]]]:
    """(table, its TEXT columns, the columns that identify a row) of the store's tables."""
    out = []
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
        " ORDER BY name"
    ).fetchall():
        if str(name).startswith(_SKIP_PREFIXES):
            continue
        info = conn.execute(f'PRAGMA table_info("{name}")').fetchall()
        text = [str(r[1]) for r in info if str(r[2]).upper() == "TEXT"]
        keys = [str(r[1]) for r in sorted(info, key=lambda r: as_int(r[5])) if r[5]]
        rowid = not conn.execute(
            "SELECT 1 FROM sqlite_schema WHERE name = ? AND sql LIKE '%WITHOUT ROWID%'", (name,)
        ).fetchall()
        if text:
            out.append((str(name), text, ["rowid"] if rowid else keys))
    return out


def text_columns(conn: Connection, table: str) -> list[str]:
    """The TEXT columns of `table`, in its order (empty for a table this check skips)."""
    return next((columns for name, columns, _ in _text_tables(conn) if name == table), [])


def scan(conn: Connection, *, skip: tuple[str, ...] = ()) -> list[tuple[str, Row, str]]:
    """(table, the row's key values as stored bytes, column) of every undecodable value;
    not in the tables `skip` names (a pass over them looks already: journal_pass.py)."""
    register(conn)
    found: list[tuple[str, tuple[Any, ...], str]] = []
    for table, columns, keys in _text_tables(conn):
        if table in skip:
            continue
        if _all_decode(conn, table, columns):
            continue
        casts = ", ".join(f'CAST("{c}" AS BLOB)' for c in columns)
        key_sql = ", ".join(f'CAST("{k}" AS BLOB)' if k != "rowid" else "rowid" for k in keys)
        for row in conn.execute(
            f'SELECT {FUNCTION}({casts}) AS bad, {key_sql} FROM "{table}" WHERE bad IS NOT NULL'
        ).fetchall():
            found.append((table, tuple(row[1:]), columns[as_int(row[0])]))
    return found


def _all_decode(conn: Connection, table: str, columns: list[str]) -> bool:
    """Whether every value of the columns is UTF-8, told by one decode of all of them
    joined by NUL bytes (UTF-8 pieces joined by an ASCII byte decode exactly when each
    piece does), not a call into Python per row (bench/RESULTS.md, row 'doctor: text
    decoded whole'). False sends the table to the row-by-row scan, which names the
    values."""
    pieces = " || x'00' || ".join(f"""coalesce(CAST("{c}" AS BLOB), x'')""" for c in columns)
    joined = conn.execute(
        f"SELECT CAST(group_concat({pieces}, x'00') AS BLOB) FROM \"{table}\""
    ).fetchall()[0][0]
    if joined is None:
        return True  # no rows
    if not isinstance(joined, bytes):
        return False
    try:
        joined.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def check(conn: Connection) -> list[Finding]:
    return findings(scan(conn))


def findings(bad: list[tuple[str, Row, str]]) -> list[Finding]:
    """The findings of the undecodable values `scan` found (by table, in each row order)."""
    if not bad:
        return []
    by_table: dict[str, list[tuple[tuple[Any, ...], str]]] = {}
    for table, key, column in bad:
        by_table.setdefault(table, []).append((key, column))
    out = []
    for table, rows in sorted(by_table.items()):
        repairable = table in ("journal_entries", "summaries")
        shown = ", ".join(f"{_key_text(k)} ({c})" for k, c in rows[:5])
        out.append(
            Finding(
                "undecodable_text",
                "error",
                f"{len(rows)} rows of {table} hold text that is not UTF-8 ({shown}): every read"
                " that meets them fails"
                + (
                    "; doctor --repair restores the bytes where the content id says what they were"
                    if repairable
                    else ""
                ),
                repairable,
                {"table": table, "rows": [[_key_text(k), c] for k, c in rows[:50]]},
                fix=(table, [k for k, _ in rows]),
            )
        )
    return out


def _key_text(key: Row) -> str:
    return "/".join(
        v.decode("utf-8", "backslashreplace") if isinstance(v, bytes) else str(v) for v in key
    )
