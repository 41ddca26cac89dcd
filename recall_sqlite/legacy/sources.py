"""The import bookkeeping of one source file (`import_sources`): what import and verify
both read to know how far a file was imported and what its prefix hashed to."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .. import identity
from ..db import Database, as_bytes, as_int
from ..journal.codec import pre_v7_entry_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import _Hash
    from typing import BinaryIO

    from apsw import Connection

    from ..context import StoreContext


@dataclass
class Source:
    """The current version row of a source file."""

    id: int
    version: int
    worktree_id: int
    size: int
    sha256: str
    mtime_ns: int
    lines: int
    tail_open: bool
    complete: bool


SOURCE_COLS = "id, version, worktree_id, size, sha256, mtime_ns, lines, tail_open, complete"
EMPTY_SHA = hashlib.sha256().hexdigest()


def blocks(fh: BinaryIO, size: int) -> Iterator[bytes]:
    """The next `size` bytes of a file (fewer at its end), a MiB at a time."""
    left = size
    while left:
        block = fh.read(min(left, 1 << 20))
        if not block:
            return
        yield block
        left -= len(block)


def hash_prefix(fh: BinaryIO, size: int) -> _Hash:
    h = hashlib.sha256()
    for block in blocks(fh, size):
        h.update(block)
    return h


def current(conn: Connection, workspace_pk: int, path: str) -> Source | None:
    """The current (not superseded) version row of a source file."""
    rows = conn.execute(
        f"SELECT {SOURCE_COLS} FROM import_sources WHERE workspace_id = ? AND path = ?"
        " AND superseded = 0",
        (workspace_pk, path),
    ).fetchall()
    if not rows:
        return None
    r = rows[0]
    return Source(
        as_int(r[0]),
        as_int(r[1]),
        as_int(r[2]),
        as_int(r[3]),
        str(r[4]),
        as_int(r[5]),
        as_int(r[6]),
        bool(r[7]),
        bool(r[8]),
    )


def current_in(db: Database, workspace_pk: int, path: str) -> Source | None:
    with db.read() as conn:
        return current(conn, workspace_pk, path)


def recorded_keys(ctx: StoreContext) -> set[str]:
    """The keys of every source of the workspace with a current import record."""
    return {
        str(k)
        for (k,) in ctx.db.query(
            "SELECT path FROM import_sources WHERE workspace_id = ? AND superseded = 0",
            (ctx.workspace_pk,),
        )
    }


def recorded_worktrees(db: Database, workspace_pk: int) -> dict[str, str]:
    """source key -> the key of the worktree its rows are in."""
    keys = {w.pk: w.key for w in identity.worktrees(db, workspace_pk)}
    return {
        str(p): keys[as_int(w)]
        for p, w in db.query(
            "SELECT path, worktree_id FROM import_sources"
            " WHERE workspace_id = ? AND superseded = 0",
            (workspace_pk,),
        )
        if as_int(w) in keys
    }


def states(db: Database, workspace_pk: int, path_of: Callable[[str], Path]) -> dict[str, str]:
    """source key -> a short import state from size and mtime (no reading)."""
    out: dict[str, str] = {}
    for raw_key, raw_size, mtime, complete in db.query(
        "SELECT path, size, mtime_ns, complete FROM import_sources"
        " WHERE workspace_id = ? AND superseded = 0",
        (workspace_pk,),
    ):
        key, size = str(raw_key), as_int(raw_size)
        try:
            st = os.stat(path_of(key))
        except OSError:
            out[key] = "imported; file gone"
            continue
        if complete and st.st_size == size and st.st_mtime_ns == mtime:
            out[key] = "imported"
        elif not complete:
            out[key] = "import interrupted: run import again"
        elif st.st_size > size:
            out[key] = "partly imported (file has more)"
        else:
            out[key] = "imported; file changed since"
    return out


def sources_by_worktree(db: Database, workspace_pk: int) -> dict[int, int]:
    """worktrees.id -> how many imported files (current versions) are filed under it."""
    return {
        as_int(w): as_int(n)
        for w, n in db.query(
            "SELECT worktree_id, count(*) FROM import_sources WHERE workspace_id = ?"
            " AND superseded = 0 GROUP BY worktree_id",
            (workspace_pk,),
        )
    }


def accounted(db: Database, workspace_pk: int) -> dict[str, int]:
    """source key -> bytes of its file that its current import record accounts for."""
    return {
        str(k): as_int(n)
        for k, n in db.query(
            "SELECT path, size FROM import_sources WHERE workspace_id = ? AND superseded = 0",
            (workspace_pk,),
        )
    }


def known_ids(db: Database, workspace_pk: int, ids: set[bytes]) -> set[bytes]:
    """The entry ids of `ids` the workspace holds or forgot (an import creates neither)."""
    import json

    found: set[bytes] = set()
    batch = sorted(ids)
    for i in range(0, len(batch), 10_000):
        chunk = json.dumps([b.hex() for b in batch[i : i + 10_000]])
        for (eid,) in db.query(
            "SELECT id FROM journal_entries WHERE workspace_id = ?1"
            " AND id IN (SELECT unhex(value) FROM json_each(?2))"
            " UNION SELECT id FROM journal_tombstones WHERE workspace_id = ?1"
            " AND id IN (SELECT unhex(value) FROM json_each(?2))",
            (workspace_pk, chunk),
        ):
            found.add(as_bytes(eid))
    return found


class Tombstones:
    """The workspace's forgotten ids, as an import checks a line against them: v7 ids by
    content, and pre-v7 ids (salted with this store's workspace uuid) when any remain."""

    def __init__(self, db: Database, workspace_pk: int, workspace_uuid: str) -> None:
        rows = db.query(
            "SELECT id, formula FROM journal_tombstones WHERE workspace_id = ?", (workspace_pk,)
        )
        self._ids = {as_bytes(i) for i, f in rows if f == 2}
        self._pre_v7 = {as_bytes(i) for i, f in rows if f == 1}
        self._uuid = workspace_uuid

    @property
    def any(self) -> bool:
        """Whether any id is forgotten at all (most imports: none, and no line is checked)."""
        return bool(self._ids or self._pre_v7)

    @property
    def needs_canon(self) -> bool:
        """Whether `forgot` reads an entry's canonical JSON (only pre-v7 ids need it)."""
        return bool(self._pre_v7)

    def forgot(self, entry_id: bytes, canon: str) -> bool:
        if entry_id in self._ids:
            return True
        return bool(self._pre_v7) and pre_v7_entry_id(self._uuid, canon) in self._pre_v7
