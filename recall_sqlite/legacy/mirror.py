"""The store's own lines in synapt's buckets: appended as synapt appends, and accounted for
in the import bookkeeping as they are written, so survey, import, verify and doctor take
them for what they are (the store's own, already in it) and not for lines that grew the
file.

Who appends: the adapter's mirror (every entry written through activated synapt goes to
the bucket stock synapt reads from that worktree), its fill of the mirror after a first
import, and `export --to-buckets`. Each append is synapt's (`synapt_layout.append_lines`:
the file under synapt's lock, the lines written and fsynced) and, still under the lock, extends
the file's import record (`import_sources`) by exactly those lines, each a 'duplicate' of
the row it holds (`entry_provenance`), in one transaction. The record is extended only
when it accounted for the whole file just before the append (same size, same mtime, same
prefix hash): a line another process appended earlier is then not the store's, the record
stays as it was, and the next survey, verify or import sees the file as grown and takes
every line after the record, that one and ours (as duplicates) alike. A file the store has
never seen, written empty to full by the store, gets a record of its own.

The order (file first, then the record) keeps a crash harmless: a line on disk the record
does not cover is a line an import reads again as a duplicate."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from .. import identity
from .. import synapt_layout as layout
from ..context import StoreContext
from ..db import as_int
from ..errors import RecallError
from .find import Checkout
from .lines import Bad, classify
from .plan import source_key
from .sources import EMPTY_SHA, SOURCE_COLS, current, hash_prefix

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection

# Called under synapt's lock after the lines are written: (stat before, stat after).
OnLocked = Callable[[os.stat_result, os.stat_result], None]


def key_of(ctx: StoreContext, root: Path, path: Path) -> str:
    """The import bookkeeping key of `path` (plan.py's rule), from the worktrees the
    store records (no walk: this runs on every adapter write)."""
    checkouts = [
        Checkout(w.key, w.name, Path(w.root))
        for w in identity.worktrees(ctx.db, ctx.workspace_pk)
        if w.root
    ]
    return source_key(Path(os.path.abspath(path)), root, checkouts)


def append_own(
    ctx: StoreContext,
    root: Path,
    path: Path,
    lines: Sequence[str],
    *,
    worktree: str | None = None,
    on_locked: OnLocked | None = None,
) -> bool:
    """Append `lines` (each as synapt_layout.line writes one, no newline) to the bucket at
    `path` under synapt's lock, and account for them as the store's own. `worktree`: the
    worktree a new record of the file is filed under (default: the store's). Returns
    whether the lines were accounted for (False: the file held lines the store has not
    imported, so they are left to the next import, ours as duplicates)."""
    if not lines:
        return True

    def account(before: os.stat_result, after: os.stat_result, data: bytes) -> bool:
        try:
            accounted = _account(ctx, root, path, before, after, data, worktree)
        except RecallError:
            # The lines are written and their entries stored; unaccounted, they are only
            # lines the next import reads as duplicates: no reason to fail the write.
            accounted = False
        if on_locked is not None:
            on_locked(before, after)
        return accounted

    return bool(layout.append_lines(path, lines, account))


def _account(
    ctx: StoreContext,
    root: Path,
    path: Path,
    before: os.stat_result,
    after: os.stat_result,
    data: bytes,
    worktree: str | None,
) -> bool:
    key = key_of(ctx, root, path)
    seqs = _stored_seqs(ctx, data)
    if seqs is None:
        return False
    with ctx.db.read() as conn:
        cur = current(conn, ctx.workspace_pk, key)
    if cur is None:
        if before.st_size:
            return False  # the file has lines the store never imported
        sha, start_line = hashlib.sha256(data).hexdigest(), 0
    else:
        if not (
            cur.complete
            and not cur.tail_open
            and cur.size == before.st_size
            and cur.mtime_ns == before.st_mtime_ns
        ):
            return False
        with open(path, "rb") as fh:
            h = hash_prefix(fh, cur.size)
        if h.hexdigest() != cur.sha256:
            return False
        h.update(data)
        sha, start_line = h.hexdigest(), cur.lines
    with ctx.db.write() as conn:
        now = current(conn, ctx.workspace_pk, key)
        if now != cur:
            return False  # an import of this file ran meanwhile: it decides
        source_id = _new_record(ctx, conn, path, key, worktree) if now is None else now.id
        conn.executemany(
            "INSERT INTO entry_provenance (source_id, line, entry_seq, status)"
            " VALUES (?, ?, ?, 'duplicate')",
            [(source_id, start_line + i, seq) for i, seq in enumerate(seqs, 1)],
        )
        conn.execute(
            "UPDATE import_sources SET size = ?, sha256 = ?, lines = ?, tail_open = 0,"
            " duplicates = duplicates + ?, complete = 1, mtime_ns = ? WHERE id = ?",
            (after.st_size, sha, start_line + len(seqs), len(seqs), after.st_mtime_ns, source_id),
        )
    return True


def _stored_seqs(ctx: StoreContext, data: bytes) -> list[int] | None:
    """The journal seq of each line's entry, as an import would resolve it; None when a
    line is not an entry the store holds (an import is left to decide about it)."""
    seqs: list[int] = []
    for raw in data.split(b"\n")[:-1]:
        fate = classify(raw, True)
        if isinstance(fate, Bad):
            return None
        rows = ctx.db.query(
            "SELECT seq FROM journal_entries WHERE workspace_id = ? AND id = ?",
            (ctx.workspace_pk, fate.id),
        )
        if not rows:
            return None
        seqs.append(as_int(rows[0][0]))
    return seqs


def _new_record(
    ctx: StoreContext, conn: Connection, path: Path, key: str, worktree: str | None
) -> int:
    """A first import record of a bucket the store itself started."""
    split = layout.split_bucket_path(path)
    bucket, kind = (split[1], split[2]) if split is not None else (path.parent.name, "file")
    wt_key = worktree if worktree is not None else ctx.worktree_key
    wt_pk = ctx.worktree_pk_of(wt_key)
    if wt_pk is None:
        wt_pk = ctx.worktree_pk
    rows = conn.execute(
        "INSERT INTO import_sources (workspace_id, path, version, bucket, layout, worktree_id,"
        f" sha256) VALUES (?, ?, 1, ?, ?, ?, ?) RETURNING {SOURCE_COLS}",
        (ctx.workspace_pk, key, bucket, kind, wt_pk, EMPTY_SHA),
    ).fetchall()
    return as_int(rows[0][0])
