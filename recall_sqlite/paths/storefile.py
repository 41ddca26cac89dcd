"""The store's files as the filesystem sees them, no SQL: what their look says before SQLite
opens them (an empty file, a WAL without its database: damage, never "no store yet"),
moving damaged files aside instead of writing over them, and publishing a newly built
store under its name in one step."""

from __future__ import annotations

import os

from ..errors import CorruptStoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

    from .files import StrPath

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
