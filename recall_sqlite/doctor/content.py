"""Rows against what their own content says: an entry's `rich`, `meaningful` and `sid_order`
(written from the content when the row is), its `ts_us` and its id (a hash of the content:
any changed byte shows), and a summary's content id. The columns derived at write time are
checked by every doctor (SQL, and one cached hash per session), and so is every summary's
uid (summaries are few); the whole re-hash of every entry runs with --deep.

A repair restores only what the id proves: content one flipped bit away from its id gets
that bit back (a bit flip on disk, or text made undecodable by one), an id a bit or two
away from its content's gets its id back, and columns derived at write time are written
again from the content. Entries are immutable in SQL (schema.sql's trigger), so the repair
lifts that trigger inside its own short write and makes it again before committing."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

from .. import derived
from .. import synapt_layout as layout
from .._record import Record
from ..db import as_bytes, as_int, as_str, scalar
from ..errors import InvalidInputError
from ..journal import codec
from ..summaries import summary_uid
from ..timestamps import parse_timestamp
from .report import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Bindings, Connection, SQLiteValue

    from ..db import Database
    from ..db import Row as DbRow

TIE = "recall_doctor_tie"
FLAGS = layout.BOOL_FIELDS
LISTS = layout.LIST_FIELDS
# The text columns an entry's content is made of, in journal_entries' content order.
TEXT = tuple(
    c
    for c in codec.CONTENT_COLUMNS
    if c not in FLAGS and c not in ("ts_us", "rich", "meaningful", "sid_order")
)
_RICH, _MEANINGFUL, _SID = (
    codec.CONTENT_COLUMNS.index(c) for c in ("rich", "meaningful", "sid_order")
)
_SELECT = (
    "SELECT seq, id, workspace_id, worktree_id, "
    + ", ".join(f"CAST({c} AS BLOB)" for c in TEXT)
    + ", auto, enriched, repair, ts_us, rich, meaningful, sid_order FROM journal_entries"
)
# A content id proves content to this many flipped bits of its own (random ids differ in 64).
_ID_BITS = 2


def tie(*args: SQLiteValue) -> int | None:
    session, entry_id = args  # (an SQL function's arguments: any SQLite value)
    if session is None:
        return None
    try:
        return codec.tie_key(as_bytes(session).decode("utf-8"), as_bytes(entry_id))
    except UnicodeDecodeError:
        return None  # undecodable: doctor/text.py reports the row


def register(conn: Connection) -> None:
    conn.create_scalar_function(TIE, tie, 2, deterministic=True)


def _nonempty(column: str) -> str:
    # '[]' first: most lists are empty, and that comparison costs no JSON parse.
    return (
        f"(CASE WHEN {column} = '[]' THEN 0"
        f" WHEN json_valid({column}) THEN json_array_length({column}) > 0 ELSE 0 END)"
    )


RICH_SQL = "(focus <> '') + " + " + ".join(
    _nonempty(c) for c in ("done", "decisions", "next_steps")
)
MEANINGFUL_SQL = (
    "("
    + " OR ".join(_nonempty(c) for c in ("done", "decisions", "next_steps"))
    + " OR (focus <> '' AND auto = 0))"
)


# -- an entry's content -------------------------------------------------------------------


class Row(Record):
    """One journal_entries row as stored: the content columns as bytes."""

    __slots__ = ("seq", "id", "workspace_pk", "worktree_pk", "raw", "flags", "derived")

    def __init__(self, r: DbRow) -> None:
        # Damage can leave any type in any column: what is not what it should be reads as
        # a value no content gives, so the row is found, never a crash.
        self.seq = _int(r[0])
        self.id = r[1] if isinstance(r[1], bytes) else b""
        self.workspace_pk = _int(r[2])
        self.worktree_pk = _int(r[3])
        n = len(TEXT)
        self.raw: dict[str, bytes | None] = {
            c: v if isinstance(v, bytes) or v is None else b"\xff"
            for c, v in zip(TEXT, r[4 : 4 + n], strict=True)
        }
        self.flags: dict[str, int] = {
            c: _int(v) for c, v in zip(FLAGS, r[4 + n : 7 + n], strict=True)
        }
        self.derived = tuple(_int(v) for v in r[7 + n : 11 + n])  # ts_us, rich, meaningful, sid


def _int(value: object) -> int:
    return value if isinstance(value, int) else -1


def _int_or_none(value: SQLiteValue) -> int | None:
    """A nullable integer column; another kind there is a TypeError (damage, reported)."""
    return None if value is None else as_int(value)


def expected(
    raw: dict[str, bytes | None], flags: dict[str, int]
) -> tuple[bytes, int, int, int, int]:
    """(id, ts_us, rich, meaningful, sid_order) the content gives; ValueError when the
    content cannot be read as an entry (undecodable, not JSON, a bad timestamp)."""
    try:
        t = {c: None if v is None else v.decode("utf-8") for c, v in raw.items()}
        lists = {c: json.loads(t[c] or "[]") for c in LISTS}
        extra = json.loads(t["extra"]) if t["extra"] is not None else None
        for c in LISTS:
            if not isinstance(lists[c], list) or not all(isinstance(x, str) for x in lists[c]):
                raise ValueError(f"{c} is not a list of strings")
        if extra is not None and not isinstance(extra, dict):
            raise ValueError("extra is not an object")
        if any(v not in (0, 1) for v in flags.values()):
            raise ValueError("a flag is neither 0 nor 1")
        digest, row, _ = codec.encode(
            t["timestamp"] or "",
            0,
            t["session_id"] or "",
            t["branch"] or "",
            t["focus"] or "",
            lists["done"],
            lists["decisions"],
            lists["next_steps"],
            lists["files_modified"],
            lists["git_log"],
            bool(flags["auto"]),
            bool(flags["enriched"]),
            t["griptree"] or "",
            t["agent_id"] or "",
            bool(flags["repair"]),
            extra,
        )
        ts = parse_timestamp(t["timestamp"] or "")
    except (UnicodeDecodeError, TypeError, KeyError) as exc:
        raise ValueError(str(exc)) from None
    return digest, ts, as_int(row[_RICH]), as_int(row[_MEANINGFUL]), as_int(row[_SID])


def _bits(a: bytes, b: bytes) -> int:
    return bin(int.from_bytes(a, "big") ^ int.from_bytes(b, "big")).count("1")


def _flips(data: bytes) -> Iterator[bytes]:
    buf = bytearray(data)
    for i in range(len(buf)):
        for bit in range(8):
            buf[i] ^= 1 << bit
            yield bytes(buf)
            buf[i] ^= 1 << bit


def recover(row: Row) -> tuple[dict[str, bytes | None], dict[str, int], bytes] | None:
    """(content columns, flags, id) as the row's id proves they were, or None."""
    with contextlib.suppress(ValueError):
        got = expected(row.raw, row.flags)[0]
        if _bits(got, row.id) <= _ID_BITS:
            return row.raw, row.flags, got  # the content is whole: the id took the flip
    for column, data in row.raw.items():
        if data is None:
            continue
        for candidate in _flips(data):
            raw = {**row.raw, column: candidate}
            with contextlib.suppress(ValueError):
                if expected(raw, row.flags)[0] == row.id:
                    return raw, row.flags, row.id
    for flag in FLAGS:
        flags = {**row.flags, flag: 1 - row.flags[flag]}
        with contextlib.suppress(ValueError):
            if expected(row.raw, flags)[0] == row.id:
                return row.raw, flags, row.id
    return None


def check_derived(conn: Connection) -> list[Finding]:
    """rich, meaningful and sid_order against the content (every doctor)."""
    register(conn)
    rows = conn.execute(
        f"SELECT seq FROM journal_entries WHERE rich IS NOT ({RICH_SQL})"
        f" OR meaningful IS NOT {MEANINGFUL_SQL}"
        f" OR sid_order IS NOT coalesce({TIE}(CAST(session_id AS BLOB), id), sid_order)"
    ).fetchall()
    return [derived_finding([as_int(r[0]) for r in rows])] if rows else []


def derived_finding(seqs: list[int]) -> Finding:
    return Finding(
        "entry_derived",
        "error",
        f"{len(seqs)} entry versions carry rich, meaningful, sid_order or ts_us values their"
        f" own content does not give (seq {', '.join(map(str, seqs[:5]))}): reads pick, order"
        " or count them wrongly",
        True,
        {"seqs": seqs[:50]},
        fix=seqs,
    )


def check_deep(conn: Connection) -> list[Finding]:
    """Every entry re-hashed from its content (--deep): the id and ts_us too."""
    wrong_id: list[int] = []
    wrong_derived: list[int] = []
    for r in conn.execute(_SELECT):
        row = Row(r)
        try:
            want = expected(row.raw, row.flags)
        except ValueError:
            wrong_id.append(row.seq)  # unreadable content: its id cannot be confirmed
            continue
        if want[0] != row.id:
            wrong_id.append(row.seq)
        elif want[1:] != row.derived:
            wrong_derived.append(row.seq)
    out = []
    if wrong_id:
        out.append(content_finding(wrong_id))
    if wrong_derived:
        out.append(derived_finding(wrong_derived))
    return out


def content_finding(seqs: list[int]) -> Finding:
    return Finding(
        "entry_content",
        "error",
        f"{len(seqs)} entry versions hold content their id does not match (seq"
        f" {', '.join(map(str, seqs[:5]))}): bytes changed on disk or around the store",
        True,
        {"seqs": seqs[:50]},
        fix=seqs,
    )


@contextlib.contextmanager
def lifted(conn: Connection, *triggers: str) -> Iterator[None]:
    """Inside the caller's write: `triggers` dropped, and made again from their own SQL
    before the write commits (DDL is transactional: a failure brings them back)."""
    saved = [
        (
            name,
            scalar(
                conn, "SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND name = ?", (name,)
            ),
        )
        for name in triggers
    ]
    for name, sql in saved:
        if sql:
            conn.execute(f'DROP TRIGGER "{name}"')
    yield
    for _, sql in saved:
        if sql:
            conn.execute(as_str(sql))


def _rows(conn: Connection, seqs: list[int]) -> list[Row]:
    return [
        Row(r)
        for r in conn.execute(
            f"{_SELECT} WHERE seq IN (SELECT value FROM json_each(?))", (json.dumps(seqs),)
        )
    ]


def repair_entries(db: Database, seqs: list[int]) -> list[str]:
    """Restore the entries `seqs` from what their ids prove, one short write each, and
    write their derived-at-write columns again; the heads and counts of their sessions
    follow. Rows no id can vouch for are left and said."""
    done: list[str] = []
    lost: list[int] = []
    with db.read() as conn:
        found = _rows(conn, seqs)
    for row in found:
        restored = recover(row) if _needs_recovery(row) else (row.raw, row.flags, row.id)
        if restored is None:
            lost.append(row.seq)
            continue
        raw, flags, eid = restored
        with db.write() as conn:
            now = _rows(conn, [row.seq])
            if not now or now[0].raw != row.raw or now[0].id != row.id:
                continue  # changed (or forgotten) since it was read: the next doctor looks again
            _rewrite(conn, row, raw, flags, eid)
        what = "content" if (raw, flags, eid) != (row.raw, row.flags, row.id) else "derived columns"
        done.append(f"restored the {what} of entry seq {row.seq} from what its id proves")
    if lost:
        done.append(
            f"could not restore entry versions seq {', '.join(map(str, lost[:10]))}: no intact"
            " copy (forget them with `recall-sqlite journal forget ID`, re-import synapt's"
            " buckets or restore a backup)"
        )
    return done


def _needs_recovery(row: Row) -> bool:
    try:
        return expected(row.raw, row.flags)[0] != row.id
    except ValueError:
        return True


def _rewrite(
    conn: Connection, row: Row, raw: dict[str, bytes | None], flags: dict[str, int], eid: bytes
) -> None:
    _, ts_us, rich, meaningful, sid = expected(raw, flags)
    text = {c: None if v is None else v.decode("utf-8") for c, v in raw.items()}
    sets = ", ".join(f"{c} = ?" for c in (*TEXT, *FLAGS))
    with lifted(conn, "journal_entries_immutable"):
        conn.execute(
            f"UPDATE journal_entries SET {sets}, id = ?, ts_us = ?, rich = ?, meaningful = ?,"
            " sid_order = ? WHERE seq = ?",
            (
                *(text[c] for c in TEXT),
                *(flags[f] for f in FLAGS),
                eid,
                ts_us,
                rich,
                meaningful,
                sid,
                row.seq,
            ),
        )
    session = text["session_id"] or ""
    derived.rebuild(
        conn, row.workspace_pk, sessions=[session] if session else [], since_seq=row.seq - 1
    )
    branch = text["branch"] or ""
    derived.recount(conn, row.workspace_pk, branch)
    derived.recount(conn, row.workspace_pk, branch, row.worktree_pk)


# -- a summary's content ------------------------------------------------------------------

_SUMMARY_TEXT = ("branch", "kind", "text", "created_at", "author")
_SUMMARY_SELECT = (
    "SELECT s.id, s.uid, "
    + ", ".join(f"CAST(s.{c} AS BLOB)" for c in _SUMMARY_TEXT)
    # The range its uid was made with: a pulled summary's own (schema v12), else its covers.
    + ", coalesce(s.minted_from, s.covers_from), coalesce(s.minted_to, s.covers_to),"
    " s.source_count,"
    " (SELECT json_group_array(lower(hex(e.id))) FROM (SELECT e.id FROM summary_sources x"
    "   JOIN journal_entries e ON e.seq = x.entry_seq WHERE x.summary_id = s.id ORDER BY e.seq) e),"
    " (SELECT count(*) FROM summary_sources x WHERE x.summary_id = s.id), s.created_us"
    " FROM summaries s"
)


class _Summary:
    """One summaries row as stored, its text columns as bytes."""

    __slots__ = ("row", "id", "uid", "raw", "created_us")

    def __init__(self, r: DbRow) -> None:
        self.row = r
        self.id = _int(r[0])
        self.uid = r[1] if isinstance(r[1], bytes) else None
        self.raw: dict[str, bytes | None] = {
            c: v if isinstance(v, bytes) or v is None else b"\xff"
            for c, v in zip(_SUMMARY_TEXT, r[2:7], strict=True)
        }
        self.created_us = r[12]

    def checkable(self) -> bool:
        # A summary whose source was forgotten lost a link its id was made with.
        return self.uid is not None and _int(self.row[9]) == _int(self.row[11])

    def uid_of(self, raw: dict[str, bytes | None]) -> bytes:
        try:
            t = {c: None if v is None else v.decode("utf-8") for c, v in raw.items()}
            sources = json.loads(as_str(self.row[10]))
            return summary_uid(
                t["branch"],
                t["kind"] or "",
                t["text"] or "",
                t["created_at"] or "",
                t["author"],
                _int_or_none(self.row[7]),
                _int_or_none(self.row[8]),
                sources,
            )
        except (UnicodeDecodeError, TypeError) as exc:
            raise ValueError(str(exc)) from None

    def created_us_of(self, raw: dict[str, bytes | None]) -> int:
        try:
            return parse_timestamp((raw["created_at"] or b"").decode("utf-8"))
        except (UnicodeDecodeError, InvalidInputError) as exc:
            raise ValueError(str(exc)) from None

    def whole(self) -> bool:
        """Its content matches its id (where it has one), and created_us its created_at."""
        try:
            if self.checkable() and self.uid_of(self.raw) != self.uid:
                return False
            return bool(self.created_us_of(self.raw) == self.created_us)
        except ValueError:
            return False


def _summaries(conn: Connection, where: str = "", params: Bindings = ()) -> list[_Summary]:
    return [_Summary(r) for r in conn.execute(_SUMMARY_SELECT + where, params).fetchall()]


def check_summaries(conn: Connection) -> list[Finding]:
    """Each summary against its content id and its created_at (--deep)."""
    wrong = [x.id for x in _summaries(conn) if not x.whole()]
    if not wrong:
        return []
    return [
        Finding(
            "summary_content",
            "error",
            f"{len(wrong)} summaries hold content their id or creation time does not match (#"
            f"{', #'.join(map(str, wrong[:5]))}): bytes changed on disk or around the store",
            True,
            {"ids": wrong[:50]},
            fix=wrong,
        )
    ]


def _restored(x: _Summary) -> dict[str, bytes | None] | None:
    """The text columns as the id proves them (unchanged when they match it already)."""
    if not x.checkable():
        return x.raw if _decodes(x.raw) else None
    with contextlib.suppress(ValueError):
        if x.uid_of(x.raw) == x.uid:
            return x.raw
    for column, data in x.raw.items():
        for candidate in _flips(data or b""):
            trial = {**x.raw, column: candidate}
            with contextlib.suppress(ValueError):
                if x.uid_of(trial) == x.uid:
                    return trial
    return None


def _decodes(raw: dict[str, bytes | None]) -> bool:
    try:
        for v in raw.values():
            if v is not None:
                v.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def repair_summaries(db: Database, ids: list[int]) -> list[str]:
    done: list[str] = []
    for sid in ids:
        with db.read() as conn:
            found = _summaries(conn, " WHERE s.id = ?", (sid,))
        if not found:
            continue
        x = found[0]
        fixed = _restored(x)
        try:
            created_us = x.created_us_of(fixed) if fixed is not None else None
        except ValueError:
            created_us = None
        if fixed is None or created_us is None:
            done.append(
                f"could not restore summary #{sid}: no intact copy (remove it, or restore a backup)"
            )
            continue
        text = {c: None if v is None else v.decode("utf-8") for c, v in fixed.items()}
        # The index holds the text as it was written: the restored text is what it indexed.
        with db.write() as conn, lifted(conn, "summaries_fts_after_update"):
            conn.execute(
                "UPDATE summaries SET branch = ?, kind = ?, text = ?, created_at = ?,"
                " author = ?, created_us = ? WHERE id = ?",
                (*(text[c] for c in _SUMMARY_TEXT), created_us, sid),
            )
        done.append(f"restored the content of summary #{sid} from what its id proves")
    return done
