"""The engine: one apsw connection per store, its pragmas, the schema and its migrations,
the read/write transaction discipline every table module uses, the errors apsw's become,
the store-wide FTS merge and WAL checkpoint, and the types of rows and their values. The
store file's life (created, moved aside, read-only and why) is paths/storefile.py's."""

from __future__ import annotations

import os
from _thread import RLock, get_ident

import apsw

from . import migrations
from .errors import (
    BusyError,
    CorruptStoreError,
    DiskFullError,
    ForeignDatabaseError,
    NeedsMigrationError,
    NotAStoreError,
    ReadOnlyStoreError,
    RecallError,
    SchemaTooNewError,
    StoreError,
    StoreGoneError,
)
from .migrations import SCHEMA_VERSION
from .paths import storefile
from .paths.files import pure

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager
    from pathlib import Path
    from types import TracebackType
    from typing import Protocol

    from apsw import Bindings, Connection, Cursor, SQLiteValue

    from .paths.files import StrPath

    # A row as apsw hands it back (and as an INSERT takes it): any SQLite value per column.
    Row = tuple[SQLiteValue, ...]
    # What keeps replication still around a checkpoint (sync/pause.py): entered, it is
    # true when the hold was taken (and may carry `notes`).
    Hold = Callable[[], AbstractContextManager[object]]

    class Executes(Protocol):
        """What runs a statement: a connection, or one that rewrites its statements first
        (journal/deferred.py)."""

        def execute(self, statements: str, bindings: Bindings | None = ...) -> Cursor: ...


# "RCSQ": lets `file`, sqlite3 and this code tell a recall-sqlite store from any other
# SQLite file, synapt's own index/recall.db included.
APPLICATION_ID = 0x52435351
BUSY_TIMEOUT_MS = 10_000
# Index pages one FTS merge step writes: one step is one short write transaction, so
# writers wait at most for a step, never for the whole index (FTS5's 'optimize' is one).
MERGE_STEP_PAGES = 1000
# A bound on the steps, should writers keep adding segments faster than the merge absorbs.
MERGE_STEPS_BOUND = 100_000
# The way out of a damaged page, said once (doctor says the same with the damage's place).
RECOVER_HINT = (
    "`recall-sqlite doctor` says what is damaged and repairs what it can; to save the rest,"
    " `sqlite3 DB .recover | sqlite3 NEW.db` and put NEW.db in its place, or restore a backup,"
    " or start anew with --force and `recall-sqlite import` synapt's buckets"
)


def scalar(conn: Connection, sql: str, params: Bindings = ()) -> SQLiteValue:
    """The first column of the first row, or None."""
    rows = conn.execute(sql, params).fetchall()
    return rows[0][0] if rows else None


# A row's values as apsw types them: any SQLite value. Where a column holds one kind,
# these say so to the type checker; another kind there is damage (a TypeError, which
# translate_any reports as a damaged store).


def as_int(value: SQLiteValue) -> int:
    """An INTEGER column's value (a count, a seq, a pragma's answer)."""
    if isinstance(value, (int, float, str)):
        return int(value)
    raise TypeError(f"an integer column holds {type(value).__name__}")


def as_float(value: SQLiteValue) -> float:
    """A REAL column's value (a rank, a score)."""
    if isinstance(value, (int, float, str)):
        return float(value)
    raise TypeError(f"a real column holds {type(value).__name__}")


def as_str(value: SQLiteValue) -> str:
    """A TEXT column's value."""
    if isinstance(value, str):
        return value
    raise TypeError(f"a text column holds {type(value).__name__}")


def as_bytes(value: SQLiteValue) -> bytes:
    """A BLOB column's value (an id, a vector's bytes)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"a blob column holds {type(value).__name__}")


def _wal_size(path: str) -> int:
    try:
        return os.stat(f"{path}-wal").st_size
    except OSError:
        return 0


def harden(conn: Connection) -> None:
    """SQLite's hardening for files that other tools (a shell, a cloned repository) may
    have written: no schema corruption through writable_schema or shadow tables, no
    functions with side effects reachable from triggers and views, no double-quoted
    string literals (a typo'd column name is an error, not a string)."""
    conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 1)
    conn.config(apsw.SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0)
    conn.config(apsw.SQLITE_DBCONFIG_DQS_DML, 0)
    conn.config(apsw.SQLITE_DBCONFIG_DQS_DDL, 0)


def translate(exc: apsw.Error, path: StrPath) -> StoreError:
    """Map apsw's exceptions onto this package's typed errors."""
    if isinstance(exc, apsw.NotADBError):
        return NotAStoreError(f"{path} is not an SQLite database; {storefile.RESTORE_HINT}")
    if isinstance(exc, apsw.ReadOnlyError):
        return ReadOnlyStoreError(f"{path} is read-only: {exc}")
    if isinstance(exc, apsw.BusyError):
        # SQLite's extended code says which wait it was (a recovery of the WAL index, a
        # snapshot gone stale, a blocking lock); plain SQLITE_BUSY is the usual writer.
        code = str(apsw.mapping_extended_result_codes.get(getattr(exc, "extendedresult", 0), ""))
        kind = f" ({code})" if code.startswith("SQLITE_BUSY_") else ""
        return BusyError(f"{path} stayed locked by another writer past {BUSY_TIMEOUT_MS} ms{kind}")
    if isinstance(exc, apsw.FullError):
        return DiskFullError(f"{path}: the disk is full; nothing of this write was kept")
    if isinstance(exc, apsw.CorruptError):
        return CorruptStoreError(f"{path} is damaged ({exc}); {RECOVER_HINT}")
    if isinstance(exc, apsw.CantOpenError):
        return StoreError(f"cannot open {path}: {exc}")
    if isinstance(exc, apsw.IOError):
        return StoreError(f"{path}: I/O error ({exc})")
    return StoreError(f"{path}: {exc}")


def translate_any(exc: BaseException, path: StrPath) -> BaseException:
    """translate() for apsw errors. While rows are read, a value that cannot be decoded
    or has a type its column never holds is damage too (SQLite hands back what the page
    holds): a CorruptStoreError. The package's own errors pass unchanged."""
    if isinstance(exc, apsw.Error):
        return translate(exc, path)
    if isinstance(exc, RecallError):
        return exc
    if isinstance(exc, UnicodeDecodeError):
        return CorruptStoreError(
            f"{path}: a stored value cannot be decoded ({exc}); `recall-sqlite doctor"
            " --repair` restores it where an intact copy exists"
        )
    if isinstance(exc, (ValueError, TypeError)):
        return CorruptStoreError(
            f"{path}: a stored value is not what its column holds ({exc}); run"
            " `recall-sqlite doctor`"
        )
    return exc


def merge_fts(
    db: Database,
    index: str,
    *,
    hold: Hold | None = None,
    notes: list[str] | None = None,
) -> bool:
    """After rows left the full-text `index` (journal_fts or summaries_fts): merge its
    segments until one is left, which drops every token of a deleted document (the pages
    the old segments held are zeroed by secure_delete), then empty the WAL, with `hold`
    keeping replication still meanwhile (sync/pause.py: Litestream's read would keep the
    WAL). True when the WAL was emptied (False: a reader kept old frames alive; a later
    merge finishes). Forget, a summary's removal and a pull's scrub all end with it."""
    conn = db.conn
    for _ in range(MERGE_STEPS_BOUND):
        before = conn.total_changes()
        with db.write() as w:
            w.execute(
                f"INSERT INTO {index} ({index}, rank) VALUES ('merge', ?)", (-MERGE_STEP_PAGES,)
            )
        # FTS5's documented test: a step that changed fewer than 2 rows had nothing to merge.
        if conn.total_changes() - before < 2:
            break
    if hold is None:
        return checkpoint(conn)
    with hold() as held:
        emptied = checkpoint(conn) and bool(held)
    if notes is not None:
        notes.extend(getattr(held, "notes", ()))
    return emptied


def checkpoint(conn: Connection) -> bool:
    """Copy the WAL into the database and truncate it; False if a reader kept frames."""
    try:
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()[0][0]
    except apsw.Error:
        return False
    return busy == 0


class Database:
    """One apsw connection, shared safely by threads: every read or write holds a lock
    for its whole transaction, so statements of two threads never interleave.

    A write open of a file this process may not write (read-only media, another user's
    store) opens it read-only instead: reads work, and a write says why it cannot.
    `force` starts a new store where the file is damaged, moving the damaged files aside
    first; without it damage is an error, never a fresh store (paths/storefile.py)."""

    def __init__(self, path: StrPath, *, read_only: bool = False, force: bool = False) -> None:
        # The store file as text: the engine never builds a pathlib.Path (see paths/files.py).
        self.file = pure(path)
        # The file's life through this open (refused, created, moved aside, read-only and
        # why) is paths/storefile.py's; this engine hands it the steps that need SQLite.
        self._life = storefile.StoreFile(self.file, read_only=read_only, force=force)
        # Public so the journal's hot read path can hold it without a context manager.
        self.lock = RLock()
        self.immutable = False
        # The transaction the owner thread's writes share, while it has one (shared()).
        self.sharing: Shared | None = None
        self.conn = self._life.open(self._session, self._build)
        # Which file this connection writes: a write first checks the path still names it.
        self._identity = storefile.file_identity(self.file)

    @property
    def read_only(self) -> bool:
        return self._life.read_only

    @property
    def read_only_reason(self) -> str:
        """Why a write is refused (a read-only open, or a file this process cannot write)."""
        return self._life.read_only_reason

    @property
    def moved_aside(self) -> str | None:
        """Where `force` put a damaged store (None: nothing was moved)."""
        return self._life.moved_aside

    @property
    def path(self) -> Path:
        """The store file as a Path, for hosts."""
        from pathlib import Path

        return Path(self.file)

    # -- opening: the engine's steps of the file's life -----------------------------

    def _session(self) -> Connection:
        """The connection, configured and checked, the schema brought up to date."""
        path = self.file
        try:
            try:
                return self._configured(self._open(path))
            except (apsw.CantOpenError, apsw.ReadOnlyError):
                if self.read_only:
                    raise
                # The directory (or the medium) cannot take the -wal/-shm files a writer needs.
                self._life.downgrade(f"{path} lies where this process cannot write")
                return self._configured(self._open(path))
        except apsw.Error as exc:
            raise translate(exc, path) from None

    def _configured(self, conn: Connection) -> Connection:
        try:
            self._configure(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _configure(self, conn: Connection) -> None:
        path = self.file
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        harden(conn)
        # Pages and cells freed by any write are zeroed, so a forgotten entry leaves no
        # copy in free space (journal/forget.py relies on every connection doing this);
        # the TEMP database too, where bulk.py stages entries (it does not take main's).
        conn.execute("PRAGMA secure_delete=ON")
        conn.execute("PRAGMA temp.secure_delete=ON")
        self._check_identity(conn)
        if not self.read_only:
            # WAL lets readers run beside the single writer (hooks, an MCP server and
            # an importer at once); NORMAL trades the last commits before a power
            # loss for not syncing on every commit (documented in docs/database.md).
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        # 64 MiB of page cache, allocated only as pages are used: bulk imports and vector
        # batches touch many index pages; the default 2 MiB thrashes on them.
        conn.execute("PRAGMA cache_size=-65536")
        if not self.read_only:
            self._apply_schema(conn)
        elif (version := self._user_version(conn)) == 0:
            raise NotAStoreError(
                f"{path} holds no recall-sqlite store (an SQLite database without tables); "
                + storefile.RESTORE_HINT
            )
        elif version < SCHEMA_VERSION:
            raise NeedsMigrationError(
                f"{path} has schema version {version} and needs migrating to "
                f"{SCHEMA_VERSION}: open it once without read-only"
            )

    def _build(self, built: str) -> None:
        """A new store's schema written into the empty file `built` (StoreFile.create
        publishes it under the store's name)."""
        try:
            conn = apsw.Connection(built, flags=apsw.SQLITE_OPEN_READWRITE)
            try:
                harden(conn)
                conn.execute("PRAGMA journal_mode=MEMORY")
                self._apply_schema(conn)
                conn.execute("PRAGMA journal_mode=WAL")
            finally:
                conn.close()
        except apsw.Error as exc:
            raise translate(exc, self.file) from None

    def _open(self, path: str) -> Connection:
        if not self.read_only:
            # No SQLITE_OPEN_CREATE: only _create makes a store file.
            return apsw.Connection(path, flags=apsw.SQLITE_OPEN_READWRITE)
        if os.access(path, os.W_OK):
            # A reader of a file it could write opens it read-write with every write
            # refused (query_only): SQLite then removes the -wal/-shm files when this is
            # the last connection, as it does for a writer; a read-only connection cannot,
            # and a read would leave them behind.
            conn = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READWRITE)
            try:
                conn.execute("PRAGMA query_only=ON")
                conn.execute("PRAGMA application_id").fetchall()
                return conn
            except (apsw.CantOpenError, apsw.ReadOnlyError):
                conn.close()
        conn = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
        try:
            conn.execute("PRAGMA application_id").fetchall()
            return conn
        except (apsw.CantOpenError, apsw.ReadOnlyError):
            # A WAL store on read-only media (or in a directory we may not write): SQLite
            # cannot create the -shm file. Without a WAL holding commits the main file is
            # the whole store, and immutable=1 reads it without any lock or -shm.
            conn.close()
        if _wal_size(path):
            raise ReadOnlyStoreError(
                f"{path} lies where it cannot be written and its -wal file still holds "
                "commits: open it once where it is writable to checkpoint it"
            )
        from urllib.parse import quote

        self.immutable = True
        return apsw.Connection(
            f"file:{quote(path)}?immutable=1",
            flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI,
        )

    @staticmethod
    def _user_version(conn: Connection) -> int:
        return as_int(scalar(conn, "PRAGMA user_version"))

    def _check_identity(self, conn: Connection) -> None:
        app_id = as_int(scalar(conn, "PRAGMA application_id"))
        version = self._user_version(conn)
        if app_id not in (0, APPLICATION_ID):
            raise ForeignDatabaseError(
                f"{self.file} belongs to another application (application_id {app_id:#x})"
            )
        if app_id == 0:
            tables = scalar(conn, "SELECT count(*) FROM sqlite_schema")
            if tables:
                raise ForeignDatabaseError(
                    f"{self.file} is an SQLite database of another application "
                    "(it has tables but no recall-sqlite application_id)"
                )
        if version > SCHEMA_VERSION:
            raise SchemaTooNewError(
                f"{self.file} has schema version {version}; this recall-sqlite understands "
                f"up to {SCHEMA_VERSION}: upgrade recall-sqlite"
            )

    def _apply_schema(self, conn: Connection) -> None:
        """A new file gets the latest schema whole; an older one runs each missing step in
        its own transaction (see migrations/), with foreign keys off as SQLite's table
        rebuild procedure requires (a step checks them itself before it commits)."""
        if self._user_version(conn) >= SCHEMA_VERSION:
            return
        conn.execute("PRAGMA foreign_keys=OFF")
        try:
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
                    _rollback(conn)
                    raise
        finally:
            conn.execute("PRAGMA foreign_keys=ON")

    def reader(self) -> Database:
        """Another read-only connection to the same file, for work that runs beside this
        one in another thread (SQLite releases the GIL while a statement runs)."""
        return Database(self.file, read_only=True)

    # -- transactions ---------------------------------------------------------------
    # Context managers written as classes, not with contextlib: contextlib (with functools)
    # weighs on every CLI start (bench/RESULTS.md, row 'CLI start: contextlib'), and a class
    # enters and leaves faster.

    def read(self) -> _Read:
        """A consistent snapshot for several statements (e.g. rows and their counts)."""
        return _Read(self)

    def scratch(self) -> _Scratch:
        """read(), in which TEMP tables may be built (doctor's deep checks compare with an
        index built there). A reader's connection refuses every write (query_only), TEMP
        ones too, so that is lifted for the snapshot's length; the main file is never
        written here (and write() stays refused)."""
        return _Scratch(self)

    def write(self, *, wait: bool = True) -> _Write:
        """BEGIN IMMEDIATE: take the write lock up front, so a read-then-write cannot
        fail half way with SQLITE_BUSY; roll back on any exception (nothing half-written).
        `wait=False`: BusyError at once when another writer holds the lock (a write that
        may be skipped must never make a reader wait)."""
        if self.read_only:
            raise ReadOnlyStoreError(f"{self.file}: no write, {self.read_only_reason}")
        return _Write(self, wait)

    def shared(self) -> Shared:
        """Within it, this thread's write()s share one write transaction, each a savepoint
        in it (its failure undoes only its own statements), and its read()s read that
        transaction; settle() commits what is pending, and leaving shared() commits the
        rest, on an exception too (each write() that ended well is whole). For many small
        writes whose commits would cost more than their rows (an import of many small
        sources, legacy/chunks.py). Other threads wait while a shared transaction is open,
        as they wait for a write."""
        return Shared(self)

    def check_same_file(self) -> None:
        """Refuse to write when the path no longer names the file this connection has open
        (deleted by `git clean`, replaced by a restore): SQLite would acknowledge every
        write into an unlinked file that nobody will read again."""
        if storefile.file_identity(self.file) != self._identity:
            raise StoreGoneError(
                f"{self.file} was deleted or replaced while this process had it open; "
                "nothing was written: open the store again"
            )

    def query(self, sql: str, params: Bindings = ()) -> list[tuple[SQLiteValue, ...]]:
        """One statement, no explicit transaction."""
        with self.lock:
            try:
                return self.conn.execute(sql, params).fetchall()
            except (apsw.Error, ValueError, TypeError) as exc:
                raise translate_any(exc, self.file) from None

    def close(self) -> None:
        with self.lock:
            self.conn.close()


def _rollback(conn: Connection) -> None:
    """ROLLBACK, when SQLite has not rolled back already (a full disk does): the error
    that matters is the first one, not "no transaction is active"."""
    try:
        conn.execute("ROLLBACK")
    except apsw.Error:
        pass


class _Read:
    __slots__ = ("db", "within")

    def __init__(self, db: Database) -> None:
        self.db = db
        self.within = False

    def __enter__(self) -> Connection:
        db = self.db
        db.lock.acquire()
        # (Taken the lock: another thread's shared transaction is not open now.)
        self.within = _sharing(db) is not None
        if self.within:
            return db.conn
        try:
            db.conn.execute("BEGIN")
        except (apsw.Error, ValueError, TypeError) as exc:
            db.lock.release()
            raise translate_any(exc, db.file) from None
        except BaseException:
            db.lock.release()
            raise
        return db.conn

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        db = self.db
        try:
            if self.within:
                if isinstance(exc, (apsw.Error, ValueError, TypeError)):
                    raise translate_any(exc, db.file) from None
                return
            # (A damaged page can fail even a reader's COMMIT.)
            _commit(db)
            if isinstance(exc, (apsw.Error, ValueError, TypeError)):
                raise translate_any(exc, db.file) from None
        finally:
            db.lock.release()


class _Scratch:
    __slots__ = ("db", "lifted", "inner")

    def __init__(self, db: Database) -> None:
        self.db = db
        self.lifted = False
        self.inner = _Read(db)

    def __enter__(self) -> Connection:
        self.db.lock.acquire()
        try:
            self.lifted = bool(scalar(self.db.conn, "PRAGMA query_only"))
            if self.lifted:
                self.db.conn.execute("PRAGMA query_only=OFF")
            return self.inner.__enter__()
        except BaseException:
            self._leave()
            raise

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            self.inner.__exit__(kind, exc, tb)
        finally:
            self._leave()

    def _leave(self) -> None:
        """query_only back as it was, and the lock released."""
        try:
            if self.lifted:
                self.db.conn.execute("PRAGMA query_only=ON")
        finally:
            self.db.lock.release()


class _Write:
    __slots__ = ("db", "wait", "within")

    def __init__(self, db: Database, wait: bool) -> None:
        self.db = db
        self.wait = wait
        self.within = False

    def __enter__(self) -> Connection:
        db = self.db
        db.lock.acquire()
        try:
            conn = db.conn
            shared = _sharing(db)
            self.within = shared is not None
            if shared is not None:
                if not shared.open:
                    shared.begin(self.wait)
                try:
                    conn.execute("SAVEPOINT shared_write")
                except apsw.Error as exc:
                    raise translate(exc, db.file) from None
            else:
                _begin(db, self.wait)
        except BaseException:
            db.lock.release()
            raise
        return conn

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        db = self.db
        conn = db.conn
        if self.within:
            try:
                _leave_savepoint(db, exc)
            finally:
                db.lock.release()
            return
        try:
            if exc is not None:
                _rollback(conn)
                if isinstance(exc, apsw.Error):
                    raise translate(exc, db.file) from None
                return
            _commit(db)
        finally:
            db.lock.release()


def _commit(db: Database) -> None:
    """COMMIT; on failure the connection is never left inside the transaction."""
    try:
        db.conn.execute("COMMIT")
    except apsw.Error as failed:
        _rollback(db.conn)
        raise translate(failed, db.file) from None


def _begin(db: Database, wait: bool) -> None:
    """BEGIN IMMEDIATE on a file that is still the store's (`wait` False: BusyError at once
    when another writer holds the lock)."""
    conn = db.conn
    db.check_same_file()
    try:
        if not wait:
            conn.set_busy_timeout(0)
        try:
            conn.execute("BEGIN IMMEDIATE")
        finally:
            if not wait:
                conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    except apsw.Error as exc:
        raise translate(exc, db.file) from None


def _sharing(db: Database) -> Shared | None:
    """The shared transaction this thread's statements go into, if any."""
    shared = db.sharing
    return shared if shared is not None and shared.owner == get_ident() else None


def _leave_savepoint(db: Database, exc: BaseException | None) -> None:
    """The end of a write() inside a shared transaction: its savepoint released, or rolled
    back on an exception. Should SQLite have rolled back the whole transaction (a full
    disk does), the rows of earlier writes went with it: that is the error, never a
    silent loss."""
    conn, shared = db.conn, db.sharing
    assert shared is not None
    try:
        if exc is None:
            conn.execute("RELEASE shared_write")
            return
        if conn.in_transaction:
            conn.execute("ROLLBACK TO shared_write")
            conn.execute("RELEASE shared_write")
    except apsw.Error as failed:
        _rollback(conn)
        shared.closed()
        raise translate(failed, db.file) from None
    if not conn.in_transaction:
        shared.closed()
        raise StoreError(
            f"{db.file}: the shared write transaction was rolled back ({exc});"
            " the writes pending in it were not stored"
        ) from exc
    if isinstance(exc, apsw.Error):
        raise translate(exc, db.file) from None


class Shared:
    """Database.shared()."""

    __slots__ = ("db", "owner", "open")

    def __init__(self, db: Database) -> None:
        self.db = db
        self.owner = get_ident()
        self.open = False

    def __enter__(self) -> Shared:
        with self.db.lock:
            if self.db.sharing is not None:
                raise StoreError("a shared transaction is open on this connection already")
            self.db.sharing = self
        return self

    def begin(self, wait: bool) -> None:
        """Open the transaction (the caller holds the lock): one more hold of the lock,
        given back when it ends, keeps other threads out until then."""
        _begin(self.db, wait)
        self.db.lock.acquire()
        self.open = True

    def settle(self) -> None:
        """Commit what the shared transaction holds; the next write() opens another."""
        db = self.db
        with db.lock:
            if not self.open:
                return
            try:
                _commit(db)
            finally:
                if not db.conn.in_transaction:
                    self.closed()

    def abandon(self) -> None:
        """Roll back everything the shared transaction holds, the writes that ended well
        too: for work that spans them and failed after them (legacy/chunks.py writes the
        rows of several writes at the end)."""
        with self.db.lock:
            if self.open:
                try:
                    _rollback(self.db.conn)
                finally:
                    self.closed()

    def closed(self) -> None:
        """The transaction ended (committed or rolled back): its hold of the lock given back."""
        if self.open:
            self.open = False
            self.db.lock.release()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        db = self.db
        with db.lock:
            try:
                if exc is None:
                    self.settle()
                elif self.open:
                    # Every write() that ended without an error is whole (a failed one
                    # undid its own savepoint): they are kept, as their own commits would
                    # have been. The exception that ends the block is the one reported.
                    try:
                        self.settle()
                    except StoreError:
                        pass
            finally:
                db.sharing = None
