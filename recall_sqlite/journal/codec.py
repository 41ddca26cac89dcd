"""The one definition of a journal entry on disk: synapt's fields and their kinds, the
derived columns (`rich`, `meaningful`), the canonical JSON an entry id is hashed from, the
column order of `journal_entries` rows, and the select list rows are decoded from.

Every writer (an append, a batch, the legacy importer's fast path) builds its row with
`encode`, and every reader selects `select_list()` and decodes with `SELECT_INDEX`, so the
rules cannot drift apart between paths."""

from __future__ import annotations

from _json import encode_basestring

from .. import synapt_fields as synapt
from ..memo import bounded, memo
from .order import NO_SESSION_ORDER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from ..db import Row

# The fields synapt's _entry_richness counts, and its "rich content".
RICH_FIELDS = ("focus", "done", "decisions", "next_steps")


def rich_count(
    focus: str, done: Sequence[str], decisions: Sequence[str], next_steps: Sequence[str]
) -> int:
    """How many of focus/done/decisions/next_steps are non-empty (synapt's richness)."""
    return (
        (1 if focus else 0)
        + (1 if done else 0)
        + (1 if decisions else 0)
        + (1 if next_steps else 0)
    )


def is_meaningful(
    focus: str, auto: bool, done: Sequence[str], decisions: Sequence[str], next_steps: Sequence[str]
) -> bool:
    """synapt's read_latest(meaningful=True) rule: any done/decisions/next_steps, or a
    focus written by hand (an auto-extracted focus alone carries no signal)."""
    return bool(done or decisions or next_steps or (focus and not auto))


# The canonical form (sorted keys, no spaces, UTF-8 kept) is what ids are hashed from. Its
# encoder is built on first use, so a read never imports json (see jsontext), and once:
# json.dumps with non-default options constructs a new encoder on every call.
@memo
def _canonical() -> Callable[[object], str]:
    import json

    return json.JSONEncoder(
        sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode


def canonical_json(value: object) -> str:
    return _canonical()(value)


# List columns hold JSON arrays as json.dumps writes them with UTF-8 kept.
_string: Callable[[str], str] = encode_basestring
_BOOL = {True: "true", False: "false"}

# The columns an entry's content determines, in row order; a row is the store's four
# (id, workspace, worktree, when stored) followed by these.
CONTENT_COLUMNS = (
    "session_id",
    "branch",
    "timestamp",
    "ts_us",
    "focus",
    "done",
    "decisions",
    "next_steps",
    "files_modified",
    "git_log",
    "auto",
    "enriched",
    "repair",
    "griptree",
    "agent_id",
    "extra",
    "rich",
    "meaningful",
    "sid_order",
)
ROW_COLUMNS = ("id", "workspace_id", "worktree_id", "stored_us", *CONTENT_COLUMNS)
INSERT_SQL = (
    f"INSERT INTO journal_entries ({', '.join(ROW_COLUMNS)})"
    f" VALUES ({','.join('?' * len(ROW_COLUMNS))})"
    " ON CONFLICT (workspace_id, id) DO NOTHING RETURNING seq"
)


def _sha256(data: bytes) -> bytes:
    """sha256, with hashlib imported on the first write: loading OpenSSL weighs on a start
    (bench/RESULTS.md, row 'CLI start: hashlib'), and a read-only process (a session-start
    hook) never hashes."""
    global _sha256
    from hashlib import sha256

    def _sha256(data: bytes) -> bytes:
        return sha256(data).digest()

    return _sha256(data)


def entry_id(canon: str) -> bytes:
    """An entry version's id: the first 16 bytes of sha256 of its canonical JSON, and of
    nothing else, so identical versions have one id in every workspace and on every
    machine (schema v7; before, the workspace uuid was hashed in: see pre_v7_entry_id)."""
    return _sha256(canon.encode())[:16]


def pre_v7_entry_id(workspace_uuid: str, canon: str) -> bytes:
    """The id stores before schema v7 gave the same version: what their tombstones hold."""
    return _sha256(f"{workspace_uuid}\n{canon}".encode())[:16]


@bounded(65536)
def session_tie(session_id: str) -> int:
    """The tie order of a session (journal/order.py): a hash of its id, below
    NO_SESSION_ORDER. Cached: a session has many versions, an import many lines of one."""
    return session_tie_utf8(session_id.encode())


def session_tie_utf8(session_id: bytes) -> int:
    """session_tie of the session id whose UTF-8 bytes are `session_id` (doctor reads the
    rows' text as bytes: it must not fail on a row that is not UTF-8)."""
    return int.from_bytes(_sha256(b"session\n" + session_id)[:8], "big") >> 2


def tie_key(session_id: str, digest: bytes) -> int:
    """An entry's `sid_order`: its session's tie order, or for an entry without a session
    one after every session's, from its own id."""
    if session_id:
        return session_tie(session_id)
    return NO_SESSION_ORDER | (int.from_bytes(digest[:8], "big") >> 2)


def encode(
    timestamp: str,
    ts_us: int,
    session_id: str,
    branch: str,
    focus: str,
    done: Sequence[str],
    decisions: Sequence[str],
    next_steps: Sequence[str],
    files_modified: Sequence[str],
    git_log: Sequence[str],
    auto: bool,
    enriched: bool,
    griptree: str,
    agent_id: str,
    repair: bool,
    extra: Mapping[str, object] | None,
) -> tuple[bytes, Row, str]:
    """(the entry id, the CONTENT_COLUMNS values, the canonical JSON) of validated field
    values.

    The id is hashed from the canonical JSON of the synapt fields plus `extra` when there
    is any (entry_id): the same entry always gets the same id, so identical appends, the
    copies of a line in several legacy buckets and the copies on several machines
    collapse. The canonical JSON is written out directly (exactly what `canonical_json`
    gives for these types; the tests hold the two equal) because the importer runs this
    once per line."""
    e = _string
    do, de, ne = [e(x) for x in done], [e(x) for x in decisions], [e(x) for x in next_steps]
    fm, gl = [e(x) for x in files_modified], [e(x) for x in git_log]
    extra_json = canonical_json(extra) if extra else None
    # Keys in sorted order; "extra" sorts between "enriched" and "files_modified".
    canon = (
        f'{{"agent_id":{e(agent_id)},"auto":{_BOOL[auto]},"branch":{e(branch)},'
        f'"decisions":[{",".join(de)}],"done":[{",".join(do)}],"enriched":{_BOOL[enriched]},'
        + (f'"extra":{extra_json},' if extra_json is not None else "")
        + f'"files_modified":[{",".join(fm)}],"focus":{e(focus)},'
        f'"git_log":[{",".join(gl)}],"griptree":{e(griptree)},"next_steps":[{",".join(ne)}],'
        f'"repair":{_BOOL[repair]},"session_id":{e(session_id)},"timestamp":{e(timestamp)}}}'
    )
    digest = entry_id(canon)
    row = (
        session_id,
        branch,
        timestamp,
        ts_us,
        focus,
        f"[{', '.join(do)}]" if do else "[]",
        f"[{', '.join(de)}]" if de else "[]",
        f"[{', '.join(ne)}]" if ne else "[]",
        f"[{', '.join(fm)}]" if fm else "[]",
        f"[{', '.join(gl)}]" if gl else "[]",
        int(auto),
        int(enriched),
        int(repair),
        griptree,
        agent_id,
        extra_json,
        rich_count(focus, done, decisions, next_steps),
        1 if is_meaningful(focus, auto, done, decisions, next_steps) else 0,
        tie_key(session_id, digest),
    )
    return digest, row, canon


# -- reading ------------------------------------------------------------------------------

# What a read selects, by name. The five JSON lists and `extra` arrive as one JSON array
# built by SQLite (text concatenation, no JSON parsing): one Python string per row instead
# of six, and one json.loads per read instead of one per field.
SELECT_COLUMNS = (
    "seq",
    "id",
    "worktree_id",
    "session_id",
    "branch",
    "timestamp",
    "focus",
    "auto",
    "enriched",
    "repair",
    "griptree",
    "agent_id",
    "lists",
)
SELECT_INDEX = {name: i for i, name in enumerate(SELECT_COLUMNS)}
# The order of the values inside the `lists` column.
LISTS_ORDER = (*synapt.LIST_FIELDS, "extra")


def select_list(alias: str = "") -> str:
    """The SQL select list of SELECT_COLUMNS, for a table aliased `alias`."""
    a = f"{alias}." if alias else ""
    lists = " || ',' || ".join(
        f"coalesce({a}extra, 'null')" if n == "extra" else f"{a}{n}" for n in LISTS_ORDER
    )
    plain = ", ".join(f"{a}{n}" for n in SELECT_COLUMNS[:-1])
    return f"{plain}, '[' || {lists} || ']'"
