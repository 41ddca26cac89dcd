"""A replica location on an SFTP server, through OpenSSH's `sftp` in batch mode; credentials
from an ssh agent or a key file, never the URL."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from ..checks import is_machine_id
from ..errors import SyncError
from .key import is_slug
from .remote_base import (
    OWNER_FILE,
    Position,
    Remote,
    owner_of,
    position_of,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class SftpRemote(Remote):
    """Through OpenSSH's `sftp -b`: host keys and credentials are ssh's (known_hosts, an
    agent, `key-path`)."""

    scheme = "sftp"
    watch_s = 15.0  # an ssh connection per listing

    def __init__(
        self,
        url: str,
        host: str,
        port: int | None,
        user: str | None,
        path: str,
        key_path: str | None,
    ) -> None:
        super().__init__(url)
        self.host, self.port, self.user = host, port, user
        self.path, self.key_path = path.rstrip("/") or "/", key_path

    def _remote(self, *parts: str) -> str:
        return "/".join([self.path.rstrip("/"), *parts])

    def replica(self, key_slug: str, machine: str) -> dict[str, Any]:
        block: dict[str, Any] = {
            "type": "sftp",
            "host": f"{self.host}:{self.port or 22}",
            "path": self._remote(key_slug, machine),
        }
        if self.user:
            block["user"] = self.user
        if self.key_path:
            block["key-path"] = self.key_path
        return block

    def vfs_url(self, key_slug: str, machine: str) -> str:
        user = f"{self.user}@" if self.user else ""
        return f"sftp://{user}{self.host}:{self.port or 22}{self._remote(key_slug, machine)}"

    def _batch(self, commands: list[str], *, ok_missing: bool = False) -> str | None:
        argv = ["sftp", "-q", "-b", "-", "-o", "BatchMode=yes"]
        if self.port:
            argv += ["-P", str(self.port)]
        if self.key_path:
            argv += ["-i", self.key_path]
        argv.append(f"{self.user}@{self.host}" if self.user else self.host)
        try:
            done = subprocess.run(
                argv,
                input="\n".join(commands) + "\n",
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise SyncError(f"sftp to {self.host} failed: {exc}") from None
        if done.returncode != 0:
            if ok_missing and "No such file" in done.stderr + done.stdout:
                return None
            raise SyncError(f"sftp to {self.host} failed: {done.stderr.strip()[:300]}")
        return done.stdout

    def _list(self, directory: str) -> list[str] | None:
        out = self._batch([f'ls -1 "{directory}"'], ok_missing=True)
        if out is None:
            return None
        return [line.strip().rsplit("/", 1)[-1] for line in out.splitlines() if line.strip()]

    def machines(self, key_slug: str) -> list[str]:
        return sorted(n for n in (self._list(self._remote(key_slug)) or []) if is_machine_id(n))

    def slugs(self) -> list[str]:
        return sorted(n for n in (self._list(self.path) or []) if is_slug(n))

    def read_owner(self, key_slug: str, machine: str) -> dict[str, Any] | None:
        with tempfile.TemporaryDirectory() as tmp:
            local = Path(tmp) / OWNER_FILE
            got = self._batch(
                [f'get "{self._remote(key_slug, machine, OWNER_FILE)}" "{local}"'],
                ok_missing=True,
            )
            if got is None or not local.exists():
                return None
            return owner_of(local.read_bytes())

    def write_owner(self, key_slug: str, machine: str, owner: dict[str, Any]) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            local = Path(tmp) / OWNER_FILE
            local.write_text(json.dumps(owner, sort_keys=True), encoding="utf-8")
            commands = []
            parts = [key_slug, machine]
            for i in range(1, len(parts) + 1):
                commands.append(f'-mkdir "{self._remote(*parts[:i])}"')
            commands.append(f'put "{local}" "{self._remote(key_slug, machine, OWNER_FILE)}"')
            self._batch(commands)

    def position(self, key_slug: str, machine: str) -> Position | None:
        levels = self._list(self._remote(key_slug, machine, "ltx")) or []
        names: list[tuple[str, str | None]] = []
        for level in levels:
            names += [
                (n, None) for n in self._list(self._remote(key_slug, machine, "ltx", level)) or []
            ]
        return position_of(names)

    def purge(self, key_slug: str, machine: str) -> bool:
        return False  # sftp has no recursive remove; the history ages out (retention)

    def remove(self, key_slug: str, machine: str) -> bool:
        # A retired machine writes nothing any more: its files are listed and removed one
        # by one (a purge cannot do that under a Litestream that keeps writing).
        ltx = self._remote(key_slug, machine, "ltx")
        commands = []
        for level in self._list(ltx) or []:
            where = self._remote(key_slug, machine, "ltx", level)
            commands += [f'-rm "{where}/{name}"' for name in self._list(where) or []]
            commands.append(f'-rmdir "{where}"')
        commands += [
            f'-rmdir "{ltx}"',
            f'-rm "{self._remote(key_slug, machine, OWNER_FILE)}"',
            f'-rmdir "{self._remote(key_slug, machine)}"',
        ]
        self._batch(commands)
        return machine not in self.machines(key_slug)
