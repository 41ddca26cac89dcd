"""The store's files as the filesystem sees them, no SQL: what their look says before SQLite
opens them (an empty file, a WAL without its database: damage, never "no store yet"),
moving damaged files aside instead of writing over them, publishing a newly built store
under its name in one step, and the life of the file through one open (`StoreFile`):
refused, created, moved aside, or opened read-only, and why. The engine (db.py) does what
needs SQLite and hands it in."""

from __future__ import annotations

import os

from ..errors import (
    CorruptStoreError,
    DiskFullError,
    NoStoreError,
    NotAStoreError,
    StoreError,
    WorkspaceError,
)
from .datadir import DB_FILE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Final, TypeVar

    from .files import StrPath

    C = TypeVar("C")  # the engine's connection

# What to do about damage, said once: every message about a damaged store ends with it.
RESTORE_HINT: Final = (
    "restore it from a backup, or start a new store with --force (open_store(force=True); the"
    " damaged files are kept beside it) and run `recall-sqlite import` to bring back the"
    " history synapt's buckets hold"
)


def wal_of(path: StrPath) -> str:
    return f"{os.fspath(path)}-wal"


def size_of(path: StrPath) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def damage(path: StrPath) -> str | None:
    """What is wrong with the store's files by their look alone, or None. A store is built
    elsewhere and published whole (`publish`), so an empty file under its name was never a
    store being created: it lost its content (a sync tool, a bad copy, a truncation). A
    WAL without its database holds commits SQLite would delete on the next open."""
    size = size_of(path)
    if size is None:
        wal = size_of(wal_of(path))
        if wal:
            return f"{path} is missing but its -wal file holds {wal} bytes of commits"
        return None
    if size == 0:
        return f"{path} is empty (0 bytes): a store that lost its content"
    return None


def damaged_error(what: str) -> CorruptStoreError:
    return CorruptStoreError(f"{what}; nothing was created over it: {RESTORE_HINT}")


def move_aside(path: str, stamp: str) -> str:
    """Rename a damaged store (and its -wal) to `<name>.damaged-<stamp>` beside it, so a new
    store can take the name and the old bytes stay for `.recover`. The -shm holds nothing
    of the data and is removed."""
    target = f"{path}.damaged-{stamp}"
    for suffix in ("", "-wal"):
        try:
            os.replace(f"{path}{suffix}", f"{target}{suffix}")
        except FileNotFoundError:
            pass
    try:
        os.unlink(f"{path}-shm")
    except FileNotFoundError:
        pass
    return target


def publish(built: str, path: str) -> bool:
    """Give the complete store file `built` the name `path`, durably; False (and `built`
    removed) when another process published one first: its store is the one to use."""
    fd = os.open(built, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        try:
            # link() fails when the name exists: a racing creator never replaces the winner.
            os.link(built, path)
        except FileExistsError:
            return False
        except (OSError, NotImplementedError):
            # No hard links here (some FUSE and FAT mounts): a rename that checks first.
            # A loser that replaced a winner's fresh file makes the winner's first write
            # fail with StoreGoneError, never a lost write.
            if os.path.lexists(path):
                return False
            os.replace(built, path)
    finally:
        try:
            os.unlink(built)
        except FileNotFoundError:
            pass
    try:
        dfd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass
    return True


def check_store_path(path: str, *, creating: bool) -> None:
    """A store's own name, before anything is created: a directory is not a store, and a
    directory that does not exist is not made (a typo must not create a tree somewhere)."""
    if os.path.isdir(path):
        raise WorkspaceError(
            f"{path} is a directory: a store is a file (e.g. {os.path.join(path, DB_FILE)})"
        )
    directory = os.path.dirname(path) or "."
    if creating and not os.path.isdir(directory):
        raise WorkspaceError(f"cannot create {path}: the directory {directory} does not exist")


def file_identity(path: str) -> tuple[int, int] | None:
    """Which file the name holds (device, inode), or None: a writer checks the name still
    holds the file its connection has open (a `git clean`, a restore)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class StoreFile:
    """The store file through one open. A damaged file is an error, or with `force` it is
    moved aside first (never a fresh store over damage without it); a missing one is made
    whole (`build` writes a new store's schema into a file: the engine's); a file this
    process may not write, on a write open, is opened read-only with the reason said
    (`downgrade`). `session` opens and configures the engine's connection for
    `read_only`; when forced and SQLite cannot read the file as a store (another file under
    its name, a damaged header), it goes aside too and a new store takes the name."""

    __slots__ = ("path", "read_only", "read_only_reason", "moved_aside", "force")

    def __init__(self, path: str, *, read_only: bool, force: bool) -> None:
        self.path = path
        self.read_only = read_only
        # Why a write is refused (a read-only open, or a file this process cannot write).
        self.read_only_reason = "it is open read-only"
        self.moved_aside: str | None = None  # where force put a damaged store
        self.force = force

    def open(self, session: Callable[[], C], build: Callable[[str], None]) -> C:
        path = self.path
        check_store_path(path, creating=False)
        what = damage(path)
        if what is not None:
            if self.read_only or not self.force:
                raise damaged_error(what)
            self._move_aside()
        if not os.path.lexists(path) or (os.path.islink(path) and not os.path.exists(path)):
            if self.read_only:
                raise NoStoreError(f"{path} does not exist (no store yet; nothing was created)")
            self.create(build)
        elif not self.read_only and not os.access(path, os.W_OK):
            self.downgrade(f"{path} is not writable")
        try:
            return session()
        except (NotAStoreError, CorruptStoreError):
            if self.read_only or not self.force or self.moved_aside is not None:
                raise
        self._move_aside()
        self.create(build)
        return session()

    def downgrade(self, why: str) -> None:
        """Go on read-only: reads work, a write says `why` it cannot."""
        self.read_only = True
        self.read_only_reason = f"{why} (opened read-only)"

    def _move_aside(self) -> None:
        import time

        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        self.moved_aside = move_aside(self.path, stamp)

    def create(self, build: Callable[[str], None]) -> None:
        """A new store, built under a private temporary name and published whole: its own
        name never shows an empty or half-made file (`damage` relies on that). Nothing is
        created through a dangling symlink (SQLite would create its target with the
        umask's mode, wherever it points) or in a directory that does not exist."""
        path = self.path
        if os.path.islink(path):
            raise StoreError(f"{path} is a dangling symlink; refusing to create a store through it")
        # The store makes its own data directory before opening; a directory named by hand
        # (--db) must exist.
        check_store_path(path, creating=True)
        directory, name = os.path.split(path)
        built = os.path.join(directory, f".{name}.{os.getpid()}.{os.urandom(6).hex()}.new")
        try:
            # 0600 before SQLite sees it, so it (and the -wal/-shm files SQLite derives from
            # its mode) is never readable by other users.
            os.close(os.open(built, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            build(built)
            publish(built, path)
        except OSError as exc:
            raise _creation_error(path, exc) from None
        finally:
            for suffix in ("", "-journal", "-wal", "-shm"):
                try:
                    os.unlink(f"{built}{suffix}")
                except OSError:
                    pass


def _creation_error(path: str, exc: OSError) -> StoreError:
    import errno

    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return DiskFullError(f"cannot create {path}: the disk is full; nothing was created")
    return StoreError(f"cannot create {path}: {exc.strerror or exc}")
