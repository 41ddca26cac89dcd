"""Where replicas live: a file path, an S3-compatible bucket, an SFTP server.

Litestream moves the data; this module only does what Litestream has no command for: list
the machines that replicate one repository (`<url>/<key slug>/<machine>`), read and write a
machine's `owner.json` beside its replica (who writes it: never two writers on one
replica), see how far a replica has got without downloading it, and remove a machine's own
replica history (after a forget). Each location also says how Litestream reaches it (the
`replica` block of a generated config).

S3 goes through boto3 (installed with the `sync` extra), SFTP through OpenSSH's `sftp` in
batch mode; credentials come from the environment (AWS_* / LITESTREAM_* variables, an ssh
agent or a key file), never from the URL."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from ..errors import SyncError, SyncSetupError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

OWNER_FILE = "owner.json"
# A Litestream LTX file name: <min txid>-<max txid>.ltx, both 16 hex digits.
LTX_NAME = re.compile(r"^([0-9a-f]{16})-([0-9a-f]{16})\.ltx$")
_MACHINE = re.compile(r"^[0-9a-f]{12,32}$")
_TRUE = {"1", "true", "yes", "on"}


class Position:
    """How far a replica has got: its newest transaction id and when that was written."""

    __slots__ = ("txid", "written_at")

    def __init__(self, txid: int, written_at: str | None) -> None:
        self.txid, self.written_at = txid, written_at

    def __repr__(self) -> str:
        return f"Position({self.txid:#x}, {self.written_at!r})"


class Remote:
    """One replica location (see parse)."""

    scheme = ""

    def __init__(self, url: str) -> None:
        self.url = url

    def describe(self) -> str:
        return self.url

    def replica(self, key_slug: str, machine: str) -> dict[str, Any]:
        """The `replica:` block of a Litestream config for this machine's replica."""
        raise NotImplementedError

    def machines(self, key_slug: str) -> list[str]:
        """The machines that have a replica (or an owner file) of this repository."""
        raise NotImplementedError

    def vfs_url(self, key_slug: str, machine: str) -> str:
        """The replica URL Litestream's VFS reads (sync peek)."""
        raise NotImplementedError

    def read_owner(self, key_slug: str, machine: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def write_owner(self, key_slug: str, machine: str, owner: dict[str, Any]) -> None:
        raise NotImplementedError

    def position(self, key_slug: str, machine: str) -> Position | None:
        """The replica's newest transaction, or None when it holds none yet."""
        raise NotImplementedError

    def purge(self, key_slug: str, machine: str) -> bool:
        """Delete this machine's replica history (its owner file stays); False when this
        kind of location cannot (the history then ages out with the retention)."""
        raise NotImplementedError


def parse(url: str) -> Remote:
    """A replica location from what a user typed: a path or file:// URL, s3://bucket/prefix
    (?endpoint=...&region=...&force-path-style=true), or sftp://[user@]host[:port]/path
    (?key-path=...). Anything else is a SyncSetupError saying what is accepted."""
    text = url.strip()
    if not text:
        raise SyncSetupError("the replica URL is empty")
    if "://" not in text:
        return FileRemote(Path(text).expanduser().absolute())
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise SyncSetupError(f"file URLs name a local path: {text!r}")
        return FileRemote(Path(unquote(parts.path)).absolute())
    options = {k.lower(): v[-1] for k, v in parse_qs(parts.query).items()}
    if parts.password:
        raise SyncSetupError(
            "put no password in the replica URL (it would be written into config files): "
            "use environment variables, an ssh agent or a key file"
        )
    if scheme == "s3":
        if not parts.netloc:
            raise SyncSetupError(f"an s3 URL names a bucket: s3://BUCKET/PREFIX, got {text!r}")
        unknown = set(options) - {"endpoint", "region", "force-path-style", "skip-verify"}
        if unknown:
            raise SyncSetupError(f"unknown s3 options {sorted(unknown)} in {text!r}")
        return S3Remote(text, parts.netloc, parts.path.strip("/"), options)
    if scheme == "sftp":
        if not parts.hostname:
            raise SyncSetupError(f"an sftp URL names a host: sftp://HOST/PATH, got {text!r}")
        unknown = set(options) - {"key-path"}
        if unknown:
            raise SyncSetupError(f"unknown sftp options {sorted(unknown)} in {text!r}")
        return SftpRemote(
            text, parts.hostname, parts.port, parts.username, parts.path, options.get("key-path")
        )
    raise SyncSetupError(
        f"replica URL {text!r}: recall-sqlite syncs to a path (file://), s3:// (any "
        "S3-compatible store) or sftp://"
    )


def _position_of(names: list[tuple[str, str | None]]) -> Position | None:
    best: Position | None = None
    for name, when in names:
        m = LTX_NAME.match(name)
        if m is None:
            continue
        txid = int(m.group(2), 16)
        if best is None or txid > best.txid:
            best = Position(txid, when)
    return best


# -- a path -------------------------------------------------------------------------------


class FileRemote(Remote):
    scheme = "file"

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
        return sorted(n for n in names if _MACHINE.match(n))

    def read_owner(self, key_slug: str, machine: str) -> dict[str, Any] | None:
        try:
            data = (self._dir(key_slug, machine) / OWNER_FILE).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SyncError(f"cannot read the owner of {machine}'s replica: {exc}") from None
        return _owner(data)

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
                    names.append((entry.name, _iso(entry.stat().st_mtime)))
            except OSError:
                continue
        return _position_of(names)

    def purge(self, key_slug: str, machine: str) -> bool:
        shutil.rmtree(self._dir(key_slug, machine) / "ltx", ignore_errors=True)
        return True


def _iso(mtime: float) -> str:
    from ..timestamps import iso_utc

    return iso_utc(int(mtime * 1_000_000))


def _owner(data: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(data)
    except ValueError:
        return {"unreadable": True}
    return value if isinstance(value, dict) else {"unreadable": True}


# -- S3 -----------------------------------------------------------------------------------


class S3Remote(Remote):
    scheme = "s3"

    def __init__(self, url: str, bucket: str, prefix: str, options: dict[str, str]) -> None:
        super().__init__(url)
        self.bucket, self.prefix, self.options = bucket, prefix, options
        self._client: Any = None

    def _key(self, *parts: str) -> str:
        return "/".join(p for p in (self.prefix, *parts) if p)

    def replica(self, key_slug: str, machine: str) -> dict[str, Any]:
        block: dict[str, Any] = {
            "type": "s3",
            "bucket": self.bucket,
            "path": self._key(key_slug, machine),
        }
        if "endpoint" in self.options:
            block["endpoint"] = self.options["endpoint"]
        if "region" in self.options:
            block["region"] = self.options["region"]
        if self.options.get("force-path-style", "").lower() in _TRUE:
            block["force-path-style"] = True
        if self.options.get("skip-verify", "").lower() in _TRUE:
            block["skip-verify"] = True
        return block

    def vfs_url(self, key_slug: str, machine: str) -> str:
        from urllib.parse import urlencode

        query = {}
        if "endpoint" in self.options:
            query["endpoint"] = self.options["endpoint"]
        if "region" in self.options:
            query["region"] = self.options["region"]
        if self.options.get("force-path-style", "").lower() in _TRUE:
            query["forcePathStyle"] = "true"
        url = f"s3://{self.bucket}/{self._key(key_slug, machine)}"
        return f"{url}?{urlencode(query)}" if query else url

    def client(self) -> Any:
        if self._client is None:
            try:
                import boto3
                from botocore.config import Config
            except ModuleNotFoundError:
                from ..dist import install_hint

                raise SyncSetupError(
                    f"s3 replicas need boto3: install the sync extra: {install_hint('sync')}"
                ) from None
            style = "path" if self.options.get("force-path-style", "").lower() in _TRUE else "auto"
            self._client = boto3.client(
                "s3",
                endpoint_url=self.options.get("endpoint"),
                region_name=self.options.get("region") or None,
                verify=self.options.get("skip-verify", "").lower() not in _TRUE,
                config=Config(s3={"addressing_style": style}, retries={"max_attempts": 3}),
            )
        return self._client

    def _call(self, what: str, fn: Any, **kwargs: Any) -> Any:
        try:
            return fn(**kwargs)
        except Exception as exc:  # noqa: BLE001 - botocore's errors are many; one message
            code = getattr(exc, "response", {}).get("Error", {}).get("Code", "")
            if code in ("NoSuchKey", "404"):
                return None
            raise SyncError(f"s3 {what} in {self.bucket}: {type(exc).__name__}: {exc}") from None

    def machines(self, key_slug: str) -> list[str]:
        found: set[str] = set()
        token: str | None = None
        while True:
            kwargs: dict[str, Any] = {
                "Bucket": self.bucket,
                "Prefix": self._key(key_slug) + "/",
                "Delimiter": "/",
            }
            if token:
                kwargs["ContinuationToken"] = token
            page = self._call("list", self.client().list_objects_v2, **kwargs) or {}
            for common in page.get("CommonPrefixes", []):
                name = common["Prefix"].rstrip("/").rsplit("/", 1)[-1]
                if _MACHINE.match(name):
                    found.add(name)
            token = page.get("NextContinuationToken")
            if not token:
                return sorted(found)

    def read_owner(self, key_slug: str, machine: str) -> dict[str, Any] | None:
        got = self._call(
            "read of owner.json",
            self.client().get_object,
            Bucket=self.bucket,
            Key=self._key(key_slug, machine, OWNER_FILE),
        )
        return None if got is None else _owner(got["Body"].read())

    def write_owner(self, key_slug: str, machine: str, owner: dict[str, Any]) -> None:
        self._call(
            "write of owner.json",
            self.client().put_object,
            Bucket=self.bucket,
            Key=self._key(key_slug, machine, OWNER_FILE),
            Body=json.dumps(owner, sort_keys=True).encode(),
        )

    def _objects(self, key_slug: str, machine: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            kwargs: dict[str, Any] = {
                "Bucket": self.bucket,
                "Prefix": self._key(key_slug, machine) + "/",
            }
            if token:
                kwargs["ContinuationToken"] = token
            page = self._call("list", self.client().list_objects_v2, **kwargs) or {}
            out.extend(page.get("Contents", []))
            token = page.get("NextContinuationToken")
            if not token:
                return out

    def position(self, key_slug: str, machine: str) -> Position | None:
        names = []
        for obj in self._objects(key_slug, machine):
            when = obj.get("LastModified")
            names.append((obj["Key"].rsplit("/", 1)[-1], when.isoformat() if when else None))
        return _position_of(names)

    def purge(self, key_slug: str, machine: str) -> bool:
        keys = [
            {"Key": o["Key"]}
            for o in self._objects(key_slug, machine)
            if not o["Key"].endswith("/" + OWNER_FILE)
        ]
        for i in range(0, len(keys), 1000):
            self._call(
                "delete",
                self.client().delete_objects,
                Bucket=self.bucket,
                Delete={"Objects": keys[i : i + 1000], "Quiet": True},
            )
        return True


# -- SFTP ---------------------------------------------------------------------------------


class SftpRemote(Remote):
    """Through OpenSSH's `sftp -b`: host keys and credentials are ssh's (known_hosts, an
    agent, `key-path`)."""

    scheme = "sftp"

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
        return sorted(n for n in (self._list(self._remote(key_slug)) or []) if _MACHINE.match(n))

    def read_owner(self, key_slug: str, machine: str) -> dict[str, Any] | None:
        with tempfile.TemporaryDirectory() as tmp:
            local = Path(tmp) / OWNER_FILE
            got = self._batch(
                [f'get "{self._remote(key_slug, machine, OWNER_FILE)}" "{local}"'],
                ok_missing=True,
            )
            if got is None or not local.exists():
                return None
            return _owner(local.read_bytes())

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
        return _position_of(names)

    def purge(self, key_slug: str, machine: str) -> bool:
        return False  # sftp has no recursive remove; the history ages out (retention)
