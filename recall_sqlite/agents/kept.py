"""One read-only store kept open between an MCP server's read calls.

Opening a store costs more than a read of it (the connection parses the schema;
bench/RESULTS.md, row 'MCP journal_read round trip against a no-op tool of the same
server (p50)', its `library_call_opened` against `library_call`), and a server answers
many reads of one directory. So
the server keeps the read-only store of its last read and hands it to the next one while
nothing a fresh open would see differently has changed: the same workspace, worktree,
branch and database path as the directory resolves to now, the same database file (a
restore or a `--force` replaces it: another inode), the same workspace id file, and the
same sync set-up (the store composes a synced journal at open). A read-only connection in
WAL mode sees every commit made since, so a kept store answers as a fresh one does.

A store whose workspace or worktree the database did not know at open (read-only, it
registers nothing and reads them as empty) is never kept: the next read opens again and
finds them once a writer has recorded them. One call at a time uses the kept store; a
call that finds it busy opens its own. Writes never come here: each opens its own store
(three writers on one store are serialised by SQLite, none loses another's write)."""

from __future__ import annotations

import os
from _thread import allocate_lock

from recall_sqlite.opening import resolve_db_path
from recall_sqlite.paths.idfile import workspace_file
from recall_sqlite.paths.resolve import resolve
from recall_sqlite.store import context_of, open_store
from recall_sqlite.sync import place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    from recall_sqlite import Store

    T = TypeVar("T")


def _stat_key(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns)


def freshness(cwd: str, db: str | None) -> tuple[object, ...] | None:
    """What a fresh read-only open of `cwd`'s store would depend on, or None when there is
    no store file to keep open."""
    r = resolve(cwd)
    path = resolve_db_path(r.root_text, db)
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (
        r.root_text,
        r.worktree,
        r.worktree_root_text,
        r.branch,
        r.resolved_by,
        r.weak,
        tuple(r.warnings),
        path,
        st.st_dev,
        st.st_ino,
        _stat_key(workspace_file(r.root_text)),
        place.syncs(path),
        place.has_peers(path),
    )


class KeptStore:
    """The read-only store of the last read, reused while `freshness` is unchanged."""

    def __init__(self) -> None:
        self._lock = allocate_lock()
        self._store: Store | None = None
        self._key: tuple[object, ...] | None = None

    def read(self, cwd: str, db: str | None, use: Callable[[Store], T]) -> T:
        """`use(store)` on a read-only store of `cwd` (or the database `db`): the kept one
        when it still answers as a fresh open would, else a new one (kept for the next
        read when it can be). Raises what open_store raises (NoStoreError, ...)."""
        if not self._lock.acquire(blocking=False):
            with open_store(cwd, db_path=db, read_only=True) as store:
                return use(store)
        try:
            key = freshness(cwd, db)
            if self._store is None or key is None or key != self._key:
                self.close()
                store = open_store(cwd, db_path=db, read_only=True)
                ctx = context_of(store)
                if key is None or not (ctx.workspace_pk and ctx.worktree_pk):
                    with store:
                        return use(store)
                self._store, self._key = store, key
            try:
                return use(self._store)
            except BaseException:
                # An error may mean the file changed under it: the next read opens anew.
                self.close()
                raise
        finally:
            self._lock.release()

    def close(self) -> None:
        store, self._store, self._key = self._store, None, None
        if store is not None:
            store.close()
