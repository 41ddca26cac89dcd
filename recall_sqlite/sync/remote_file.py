"""A replica location on a path (or a file:// URL): a directory Litestream writes to."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from ..checks import is_machine_id
from ..errors import SyncError
from .key import is_slug
from .remote_base import (
    OWNER_FILE,
    Position,
    Remote,
    iso_of_mtime,
    owner_of,
    position_of,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class FileRemote(Remote):
    scheme = "file"
    watch_s = 0.5  # a few directory listings

    def __init__(self, base: Path) -> None:
        super().__init__(f"file://{base}")
        self.base = base

    def _dir(self, key_slug: str, machine: str) -> Path:
        return self.base / key_slug / machine

    def replica(self, key_slug: str, machine: str) -> dict[str, Any]:
        return {"type": "file", "path": str(self._dir(key_slug, machine))}

    def vfs_url(self, key_slug: str, machine: str) -> str:
        return f"file://{self._dir(key_slug, machine)}"

    def machines(self, key_slug: str) -> list[str]:
        try:
            names = os.listdir(self.base / key_slug)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise SyncError(f"cannot list {self.base / key_slug}: {exc.strerror}") from None
        return sorted(n for n in names if is_machine_id(n))

    def slugs(self) -> list[str]:
        try:
            names = os.listdir(self.base)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise SyncError(f"cannot list {self.base}: {exc.strerror}") from None
        return sorted(n for n in names if is_slug(n))

    def read_owner(self, key_slug: str, machine: str) -> dict[str, Any] | None:
        try:
            data = (self._dir(key_slug, machine) / OWNER_FILE).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SyncError(f"cannot read the owner of {machine}'s replica: {exc}") from None
        return owner_of(data)

    def write_owner(self, key_slug: str, machine: str, owner: dict[str, Any]) -> None:
        directory = self._dir(key_slug, machine)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=".owner-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(json.dumps(owner, sort_keys=True).encode())
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, directory / OWNER_FILE)
        except OSError as exc:
            raise SyncError(f"cannot write {directory / OWNER_FILE}: {exc}") from None

    def position(self, key_slug: str, machine: str) -> Position | None:
        root = self._dir(key_slug, machine) / "ltx"
        names: list[tuple[str, str | None]] = []
        try:
            levels = os.listdir(root)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SyncError(f"cannot list {root}: {exc.strerror}") from None
        for level in levels:
            with_dir = root / level
            try:
                for entry in os.scandir(with_dir):
                    names.append((entry.name, iso_of_mtime(entry.stat().st_mtime)))
            except OSError:
                continue
        return position_of(names)

    def purge(self, key_slug: str, machine: str) -> bool:
        shutil.rmtree(self._dir(key_slug, machine) / "ltx", ignore_errors=True)
        return True

    def remove(self, key_slug: str, machine: str) -> bool:
        directory = self._dir(key_slug, machine)
        try:
            shutil.rmtree(directory)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise SyncError(f"cannot delete {directory}: {exc.strerror or exc}") from None
        return not directory.exists()
