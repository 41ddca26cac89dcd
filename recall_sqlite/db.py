"""The engine: one apsw connection per store, its pragmas, the schema and its migrations,
and the read/write transaction discipline every table module uses."""

from __future__ import annotations

import contextlib
import os
from _thread import RLock
from pathlib import Path

import apsw

from . import migrations
from .errors import (
    BusyError,
    ForeignDatabaseError,
    NotAStoreError,
    ReadOnlyStoreError,
    SchemaTooNewError,
    StoreError,
)
from .migrations import SCHEMA_VERSION

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

# "RCSQ": lets `file`, sqlite3 and this code tell a recall-sqlite store from any other
# SQLite file, synapt's own index/recall.db included.
APPLICATION_ID = 0x52435351
BUSY_TIMEOUT_MS = 10_000


def scalar(conn: apsw.Connection, sql: str, params: Any = ()) -> Any:
    """The first column of the first row, or None."""
    rows: list[tuple[Any, ...]] = conn.execute(sql, params).fetchall()
    return rows[0][0] if rows else None


def _private_file(path: Path) -> None:
    """Create the database file 0600 before SQLite does, so it (and the -wal/-shm files
    SQLite derives from its mode) is never readable by other users."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    os.close(fd)


def translate(exc: apsw.Error, path: Path) -> StoreError:
    """Map apsw's exceptions onto this package's typed errors."""
    if isinstance(exc, apsw.NotADBError):
        return NotAStoreError(f"{path} is not an SQLite database")
    if isinstance(exc, apsw.ReadOnlyError):
        return ReadOnlyStoreError(f"{path} is read-only: {exc}")
    if isinstance(exc, apsw.BusyError):
        return BusyError(f"{path} stayed locked by another writer past {BUSY_TIMEOUT_MS} ms")
    if isinstance(exc, apsw.CantOpenError):
        return StoreError(f"cannot open {path}: {exc}")
    return StoreError(f"{path}: {exc}")


class Database:
    """One apsw connection, shared safely by threads: every read or write holds a lock
    for its whole transaction, so statements of two threads never interleave."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        # Public so the journal's hot read path can hold it without a context manager.
        self.lock = RLock()
        self.conn = self._connect()

    # -- opening --------------------------------------------------------------------

    def _connect(self) -> apsw.Connection:
        path = self.path
        if self.read_only:
            if not path.exists():
                raise StoreError(f"{path} does not exist (cannot open read-only)")
            flags = apsw.SQLITE_OPEN_READONLY
        else:
            if path.exists() and not os.access(path, os.W_OK):
                raise ReadOnlyStoreError(f"{path} is not writable; open it with read_only=True")
            _private_file(path)
            flags = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
        try:
            conn = apsw.Connection(str(path), flags=flags)
            conn.set_busy_timeout(BUSY_TIMEOUT_MS)
            self._check_identity(conn)
            if not self.read_only:
                # WAL lets readers run beside the single writer (hooks, an MCP server and
                # an importer at once); NORMAL trades the last commits before a power
                # loss for not syncing on every commit (documented in the README).
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            # 64 MiB of page cache, allocated only as pages are used: bulk imports and vector
            # batches touch many index pages; the default 2 MiB thrashes on them.
            conn.execute("PRAGMA cache_size=-65536")
            if not self.read_only:
                self._apply_schema(conn)
            elif (version := self._user_version(conn)) == 0:
                raise StoreError(f"{path} has no recall-sqlite schema yet (opened read-only)")
            elif version < SCHEMA_VERSION:
                raise StoreError(
                    f"{path} has schema version {version} and needs migrating to "
                    f"{SCHEMA_VERSION}: open it once without read-only")
        except apsw.Error as exc:
            raise translate(exc, path) from None
        return conn

    @staticmethod
    def _user_version(conn: apsw.Connection) -> int:
        return int(scalar(conn, "PRAGMA user_version"))

    def _check_identity(self, conn: apsw.Connection) -> None:
        app_id = int(scalar(conn, "PRAGMA application_id"))
        version = self._user_version(conn)
        if app_id not in (0, APPLICATION_ID):
            raise ForeignDatabaseError(
                f"{self.path} belongs to another application (application_id {app_id:#x})"
            )
        if app_id == 0:
            tables = scalar(conn, "SELECT count(*) FROM sqlite_schema")
            if tables:
                raise ForeignDatabaseError(
                    f"{self.path} is an SQLite database of another application "
                    "(it has tables but no recall-sqlite application_id)"
                )
        if version > SCHEMA_VERSION:
            raise SchemaTooNewError(
                f"{self.path} has schema version {version}; this recall-sqlite understands "
                f"up to {SCHEMA_VERSION}: upgrade recall-sqlite"
            )

    def _apply_schema(self, conn: apsw.Connection) -> None:
        """A new file gets the latest schema whole; an older one runs each missing step in
        its own transaction (see migrations/)."""
        while (version := self._user_version(conn)) < SCHEMA_VERSION:
            conn.execute("BEGIN IMMEDIATE")
            try:
                # Re-read under the write lock: another process may have just done it.
                version = self._user_version(conn)
                if version == 0:
                    conn.execute(migrations.schema_sql())
                    conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                    version = SCHEMA_VERSION
                elif version < SCHEMA_VERSION:
                    version += 1
                    migrations.migrate_to(conn, version)
                conn.execute(f"PRAGMA user_version={version}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    # -- transactions ---------------------------------------------------------------

    @contextlib.contextmanager
    def read(self) -> Iterator[apsw.Connection]:
        """A consistent snapshot for several statements (e.g. rows and their counts)."""
        with self.lock:
            conn = self.conn
            try:
                conn.execute("BEGIN")
                try:
                    yield conn
                finally:
                    conn.execute("COMMIT")
            except apsw.Error as exc:
                raise translate(exc, self.path) from None

    @contextlib.contextmanager
    def autocommit(self) -> Iterator[apsw.Connection]:
        """Statements under the lock with no explicit transaction: each one sees the latest
        commit. For reads whose statements need not share one snapshot."""
        with self.lock:
            try:
                yield self.conn
            except apsw.Error as exc:
                raise translate(exc, self.path) from None

    @contextlib.contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        """BEGIN IMMEDIATE: take the write lock up front, so a read-then-write cannot
        fail half way with SQLITE_BUSY; roll back on any exception (nothing half-written)."""
        if self.read_only:
            raise ReadOnlyStoreError(f"{self.path} is open read-only")
        with self.lock:
            conn = self.conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except apsw.Error as exc:
                raise translate(exc, self.path) from None
            try:
                yield conn
            except BaseException as exc:
                with contextlib.suppress(apsw.Error):
                    conn.execute("ROLLBACK")
                if isinstance(exc, apsw.Error):
                    raise translate(exc, self.path) from None
                raise
            try:
                conn.execute("COMMIT")
            except apsw.Error as exc:
                with contextlib.suppress(apsw.Error):
                    conn.execute("ROLLBACK")
                raise translate(exc, self.path) from None

    def query(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        """One statement, no explicit transaction."""
        with self.lock:
            try:
                return self.conn.execute(sql, params).fetchall()
            except apsw.Error as exc:
                raise translate(exc, self.path) from None

    def close(self) -> None:
        with self.lock:
            self.conn.close()
