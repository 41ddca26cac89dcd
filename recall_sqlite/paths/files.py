"""The file operations the path code shares: bounded reads of small marker files, and
private (0600/0700), durable writes of the files the store keeps beside itself."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from ..errors import DiskFullError, RecallError, StoreError, WorkspaceAccessError, WorkspaceError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

# Marker and pointer files are tiny; a cap keeps a hostile or mistaken multi-GB file from
# stalling a hook.
SMALL_FILE_LIMIT: Final = 64 * 1024


def read_small(path: Path) -> str | None:
    """The UTF-8 text of a file of at most SMALL_FILE_LIMIT bytes; None otherwise."""
    try:
        with path.open("rb") as fh:
            data = fh.read(SMALL_FILE_LIMIT + 1)
    except OSError:
        return None
    if len(data) > SMALL_FILE_LIMIT:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def first_line(text: str) -> str:
    lines = text.splitlines()
    return lines[0].strip() if lines else ""


def ensure_private_dir(path: Path) -> None:
    """`mkdir -p`, every directory it creates private to the user (0o700 regardless of
    umask); directories that already exist are left as they are."""
    path = Path(path)
    missing: list[Path] = []
    current = path
    while not current.exists():
        if os.path.islink(current):
            raise WorkspaceError(f"cannot create directory {current}: dangling symlink")
        if os.path.lexists(current):
            break  # another process created it between the two checks
        missing.append(current)
        if current == current.parent:
            break
        current = current.parent
    if not missing and not path.is_dir():
        raise WorkspaceError(f"{path} exists and is not a directory")
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            # A concurrent process created it first: fine if it is a directory, and its
            # mode is that process's business.
            if not directory.is_dir():
                raise WorkspaceError(f"{directory} exists and is not a directory") from None
            continue
        except OSError as exc:
            raise os_failure(f"cannot create directory {directory}", exc) from exc
        try:
            os.chmod(directory, 0o700)
        except OSError as exc:
            raise WorkspaceAccessError(f"cannot make {directory} private: {exc}") from exc


def os_failure(what: str, exc: OSError) -> RecallError:
    """The typed error of a failed file operation: a full disk, a failing medium or a
    permission refused is a runtime failure (exit 1), anything else a problem with the
    workspace's paths (exit 2)."""
    import errno

    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return DiskFullError(f"{what}: the disk is full; nothing was written")
    if exc.errno in (errno.EIO, errno.EROFS):
        return StoreError(f"{what}: {exc.strerror or exc}")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return WorkspaceAccessError(f"{what}: {exc}")
    return WorkspaceError(f"{what}: {exc}")


def write_private(path: Path, payload: bytes, *, exclusive: bool) -> None:
    """Write `payload` to `path` with mode 0600 (whatever the umask) and fsync it;
    `exclusive` fails with FileExistsError when the file exists."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    try:
        if sys.platform != "win32":
            os.fchmod(fd, 0o600)  # the umask may have removed bits; make it exact
        view = memoryview(payload)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(directory: Path) -> None:
    """Make a rename or link in `directory` durable (best effort)."""
    if sys.platform == "win32":
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
