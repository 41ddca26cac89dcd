"""A peer's rows as a pull reads them, checked against what their ids prove before any is
merged: whoever can write a replica location can write a replica, so nothing in one is
taken on trust.

* a summary's uid is its content id: recomputed here with the function that minted it
  (summaries.summary_uid), over its text, scope, creation time, author, covered range and
  source ids, its text and kind held to the local write's checks (checks.py);
* a vector is an (owner content id, model) pair with a dimension and a blob of exactly
  that many little-endian float32 values that a cosine can be taken of (the local write's
  own check, vectors/validate.py);
* a tombstone names an id of the right length, an instant, and the machine that asked
  (`asked_by`, a machine id; NULL in the peer's own file: the peer itself).

Text is read as bytes and decoded here: one row that is not UTF-8 is that row refused,
never the whole pull failed. A refused row is counted per kind (Tally) and never half
merged."""

from __future__ import annotations

import json

from .._record import Frozen
from ..checks import is_machine_id, require_model, require_summary_text, require_vector_dim
from ..errors import PeerError, RecallError
from ..limits import MAX_CLASH_SHIFT_US
from ..summaries import summary_uid
from ..timestamps import parse_timestamp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any, TypeVar

    from apsw import SQLiteValue

    T = TypeVar("T")

# The kinds a pull refuses rows of, as its report names them.
KINDS = ("entries", "summaries", "vectors", "tombstones")


class Refused(PeerError):
    """A peer's row that its id does not prove, or that breaks a local write's rule."""


def text(value: SQLiteValue) -> str:
    """A TEXT column read as a BLOB (CAST ... AS BLOB), decoded: Refused when it is not
    UTF-8 or not text at all."""
    if not isinstance(value, bytes):
        raise Refused(f"not text: {type(value).__name__}")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("not UTF-8") from None


def optional_text(value: SQLiteValue) -> str | None:
    return None if value is None else text(value)


def blob16(value: SQLiteValue) -> bytes:
    """A content id: 16 bytes."""
    if not isinstance(value, bytes) or len(value) != 16:
        raise Refused("not a 16-byte id")
    return value


def integer(value: SQLiteValue) -> int:
    if not isinstance(value, int):
        raise Refused(f"not an integer: {type(value).__name__}")
    return value


def optional_integer(value: SQLiteValue) -> int | None:
    return None if value is None else integer(value)


def instant(value: SQLiteValue) -> str:
    """An ISO-8601 instant (a tombstone's, a vector's): Refused when it does not parse."""
    at = text(value)
    try:
        parse_timestamp(at)
    except RecallError as exc:
        raise Refused(str(exc)) from None
    return at


def checked(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """fn(...) from checks.py with its RecallError as Refused."""
    try:
        return fn(*args, **kwargs)
    except RecallError as exc:
        raise Refused(str(exc)) from None


# -- summaries ------------------------------------------------------------------------------

# The peer's summaries as a pull reads them: text columns as bytes (decoded by summary()),
# the sources by content id in position order, and how many the summary was made with.
PEER_SUMMARIES = """
SELECT s.uid, CAST(s.branch AS BLOB), CAST(s.kind AS BLOB), CAST(s.text AS BLOB),
       CAST(s.created_at AS BLOB), s.created_us, CAST(s.author AS BLOB),
       s.covers_from, s.covers_to, s.covered_seq,
       (SELECT json_group_array(h) FROM (
            SELECT lower(hex(e.id)) AS h FROM summary_sources ss
              JOIN journal_entries e ON e.seq = ss.entry_seq
             WHERE ss.summary_id = s.id ORDER BY ss.entry_seq)),
       s.source_count, s.minted_from, s.minted_to
  FROM summaries s WHERE s.workspace_id = ? AND s.uid IS NOT NULL ORDER BY s.created_us
"""


class PeerSummary(Frozen):
    """A peer's summary, decoded and proven (or Refused)."""

    __slots__ = (
        "uid",
        "branch",
        "kind",
        "text",
        "created_at",
        "created_us",
        "author",
        "covers_from",
        "covers_to",
        "covered_seq",
        "sources",
        "minted",
        "proven",
        "source_count",
    )

    uid: bytes
    branch: str | None
    kind: str
    text: str
    created_at: str
    created_us: int
    author: str | None
    covers_from: int | None
    covers_to: int | None
    covered_seq: int
    sources: tuple[str, ...]  # the entry ids it names there, in position order (hex)
    minted: tuple[int | None, int | None]  # the covered range its uid was made with
    source_count: int  # the sources its uid was made with (more than `sources`: some forgotten)
    proven: bool  # False: a source forgotten there took what proves the uid

    def __init__(self, row: tuple[SQLiteValue, ...]) -> None:
        branch, author = optional_text(row[1]), optional_text(row[6])
        if branch is not None:
            checked(require_summary_text, "branch", branch, allow_empty=True)
        if author is not None:
            checked(require_summary_text, "author", author)
        try:
            # Made by SQLite's json_group_array from hex ids: text, never the peer's bytes.
            sources = json.loads(str(row[10])) if row[10] is not None else []
            if not isinstance(sources, list):
                raise ValueError
        except ValueError:
            raise Refused("sources are not a JSON list") from None
        covers = (optional_integer(row[7]), optional_integer(row[8]))
        # Where the peer translated its covers from another machine's positions, it kept
        # the range the uid was made with (schema v12).
        minted = (optional_integer(row[12]), optional_integer(row[13]))
        self._set(
            uid=blob16(row[0]),
            branch=branch,
            kind=checked(require_summary_text, "kind", text(row[2])),
            text=checked(require_summary_text, "text", text(row[3])),
            created_at=text(row[4]),
            created_us=integer(row[5]),
            author=author,
            covers_from=covers[0],
            covers_to=covers[1],
            covered_seq=integer(row[9]),
            sources=tuple(str(h) for h in sources),
            minted=minted if minted[0] is not None else covers,
            # A source forgotten on the peer took its link with it (the uid was made with
            # it): such a summary cannot be proven, only kept as it came (counted apart).
            proven=integer(row[11]) == len(sources),
            source_count=integer(row[11]),
        )
        try:
            at_us = parse_timestamp(self.created_at)
        except RecallError as exc:
            raise Refused(str(exc)) from None
        if not 0 <= self.created_us - at_us < MAX_CLASH_SHIFT_US:
            raise Refused("created_us is not its created_at")
        if self.proven and self.uid != self.uid_of():
            raise Refused("its uid is not its content's")

    def uid_of(self) -> bytes:
        return summary_uid(
            self.branch,
            self.kind,
            self.text,
            self.created_at,
            self.author,
            self.minted[0],
            self.minted[1],
            list(self.sources),
        )


# -- vectors --------------------------------------------------------------------------------


def vector(model: SQLiteValue, dim: SQLiteValue, at: SQLiteValue, blob: SQLiteValue) -> str:
    """A peer's embedding checked as a local put checks it; its model's name back."""
    name = checked(require_model, text(model))
    n = checked(require_vector_dim, "dimension", integer(dim))
    if not isinstance(blob, bytes) or len(blob) != 4 * n:
        raise Refused(f"its embedding is not {n} float32 values")
    instant(at)
    from ..vectors.validate import check_embedding

    checked(check_embedding, blob)
    return name


# -- who asked ------------------------------------------------------------------------------


class Tally:
    """What a merge refused, per kind, and which machine asked for each removal it applied
    (the peer's own tombstones name the peer; one it pulled names whom it pulled it from)."""

    def __init__(self, peer: str, me: str | None) -> None:
        self.peer, self.me = peer, me
        self.refused: dict[str, int] = dict.fromkeys(KINDS, 0)
        self.unproven = 0  # summaries kept whose sources were partly forgotten
        self.asked: dict[str, dict[str, int]] = {}

    def asker(self, value: SQLiteValue) -> str | None:
        """The machine a peer's tombstone names as the one that asked, or None to refuse it:
        not a machine id, or this machine (whose own removals are all here already)."""
        if value is None:
            return self.peer
        if not is_machine_id(value) or value == self.me:
            return None
        assert isinstance(value, str)
        return value

    def earlier(
        self, held: tuple[SQLiteValue, SQLiteValue], at: SQLiteValue, by: SQLiteValue
    ) -> tuple[str, str | None] | None:
        """Two machines asked for one removal: every machine names the one that asked first
        (then the smaller id), so all agree whatever the order of their pulls. The peer's
        (instant, asker: None for this machine) to record over `held` (this store's
        (instant, asked_by)), or None to keep what is here."""
        if self.me is None:
            return None
        who = self.peer if by is None else by
        try:
            their_at = instant(at)
            ours = (parse_timestamp(str(held[0])), str(held[1] or self.me))
            theirs = (parse_timestamp(their_at), str(who))
        except (Refused, RecallError):
            return None
        if not is_machine_id(who) or theirs >= ours:
            return None
        return their_at, None if who == self.me else str(who)

    def refuse(self, kind: str, n: int = 1) -> None:
        self.refused[kind] += n

    def tombstones(
        self,
        rows: Iterable[Sequence[SQLiteValue]],
        held: Mapping[bytes, tuple[SQLiteValue, SQLiteValue]],
    ) -> tuple[list[tuple[bytes, str, str]], list[tuple[bytes, str, str | None]]]:
        """A peer's tombstones (id, instant, asked_by) of one kind against those `held`
        here (id -> (instant, asked_by)): the new ones, each checked (refused ones counted),
        as (id, instant, who asked); and the held ones the peer says another machine asked
        for first (`earlier`), as (id, instant, asker: None for this machine)."""
        new: list[tuple[bytes, str, str]] = []
        earlier: list[tuple[bytes, str, str | None]] = []
        for raw_id, raw_at, raw_by in rows:
            mine = held.get(raw_id) if isinstance(raw_id, bytes) else None
            if mine is not None:
                first = self.earlier(mine, raw_at, raw_by)
                if first is not None and isinstance(raw_id, bytes):
                    earlier.append((raw_id, *first))
                continue
            asker = self.asker(raw_by)
            try:
                if asker is None:
                    raise Refused("it names no machine, or this one")
                new.append((blob16(raw_id), instant(raw_at), asker))
            except Refused:
                self.refuse("tombstones")
        return new, earlier

    def applied(self, machine: str, kind: str, n: int) -> None:
        if n:
            mine = self.asked.setdefault(
                machine, dict.fromkeys(("entries", "summaries", "vectors"), 0)
            )
            mine[kind] += n

    def forgotten_by(self) -> tuple[tuple[str, int, int, int], ...]:
        """(machine, entries, summaries, vectors) removed here at each machine's asking."""
        return tuple(
            (m, c["entries"], c["summaries"], c["vectors"]) for m, c in sorted(self.asked.items())
        )
