"""The file operations the path code shares: bounded reads of small marker files,
private (0600/0700), durable writes of the files the store keeps beside itself, and the
few operations on path text that pathlib would do.

The path code works on `str` paths with os.path, never pathlib: importing pathlib imports
`re`, `fnmatch` and `urllib.parse`, a large part of a hook's `journal read` process
(bench/RESULTS.md, row 'CLI start: re').
`pure` spells a path as pathlib would (so messages and keys are unchanged) and `real`
resolves it as Path.resolve does; tests/unit/paths/test_path_text.py holds both to pathlib."""

from __future__ import annotations

import os
import sys
from errno import EBADF, ELOOP, ENOENT, ENOTDIR
from stat import S_ISDIR, S_ISREG

from ..errors import DiskFullError, RecallError, StoreError, WorkspaceAccessError, WorkspaceError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

    StrPath = str | os.PathLike[str]

# Marker and pointer files are tiny; a cap keeps a hostile or mistaken multi-GB file from
# stalling a hook.
SMALL_FILE_LIMIT: Final = 64 * 1024


def pure(path: StrPath) -> str:
    """`path` as str(pathlib.PurePosixPath(path)) spells it: empty and '.' parts and a
    trailing slash dropped, '..' kept (it is not resolved), two leading slashes kept."""
    text = os.fspath(path)
    parts = [p for p in text.split("/") if p and p != "."]
    body = "/".join(parts)
    if text.startswith("/"):
        double = text.startswith("//") and not text.startswith("///")
        return ("//" if double else "/") + body
    return body or "."


def real(path: StrPath) -> str:
    """Path(path).resolve(): absolute, symlinks resolved as far as they exist; OSError
    for a symlink loop (which os.path.realpath alone would hide)."""
    resolved = os.path.realpath(path)
    try:
        os.stat(resolved)
    except OSError as exc:
        if exc.errno == ELOOP:
            raise
    return resolved


# The errors pathlib's exists/is_dir/is_file answer False for (ENOENT, ENOTDIR, EBADF,
# ELOOP); any other (EACCES, ENAMETOOLONG) is raised, as it is there, and becomes the
# caller's typed error instead of a misleading "does not exist".
_ABSENT = frozenset((ENOENT, ENOTDIR, EBADF, ELOOP))


def _mode(path: str) -> int | None:
    try:
        return os.stat(path).st_mode
    except OSError as exc:
        if exc.errno in _ABSENT:
            return None
        raise
    except ValueError:  # an embedded NUL
        return None


def exists(path: str) -> bool:
    """Path(path).exists()."""
    return _mode(path) is not None


def is_dir(path: str) -> bool:
    """Path(path).is_dir()."""
    mode = _mode(path)
    return mode is not None and S_ISDIR(mode)


def is_file(path: str) -> bool:
    """Path(path).is_file()."""
    mode = _mode(path)
    return mode is not None and S_ISREG(mode)


def within(path: str, root: str) -> bool:
    """Whether `path` is `root` or below it (both pure and absolute): is_relative_to."""
    return path == root or path.startswith(root if root.endswith("/") else root + "/")


def relative(path: str, root: str) -> str:
    """`path` below `root` (within() holds) as relative_to(root).as_posix() spells it."""
    return path[len(root) :].lstrip("/") or "."


def read_small(path: StrPath) -> str | None:
    """The UTF-8 text of a file of at most SMALL_FILE_LIMIT bytes; None otherwise."""
    try:
        with open(path, "rb") as fh:
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


def ensure_private_dir(path: StrPath) -> None:
    """`mkdir -p`, every directory it creates private to the user (0o700 regardless of
    umask); directories that already exist are left as they are."""
    path = pure(path)
    missing: list[str] = []
    current = path
    while not os.path.exists(current):
        if os.path.islink(current):
            raise WorkspaceError(f"cannot create directory {current}: dangling symlink")
        if os.path.lexists(current):
            break  # another process created it between the two checks
        missing.append(current)
        up = os.path.dirname(current) or "."
        if up == current:
            break
        current = up
    if not missing and not os.path.isdir(path):
        raise WorkspaceError(f"{path} exists and is not a directory")
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            # A concurrent process created it first: fine if it is a directory, and its
            # mode is that process's business.
            if not os.path.isdir(directory):
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


def write_private(path: StrPath, payload: bytes, *, exclusive: bool) -> None:
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


def fsync_dir(directory: StrPath) -> None:
    """Make a rename or link in `directory` durable (best effort)."""
    if sys.platform == "win32":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass
