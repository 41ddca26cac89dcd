"""Where replicas live: a file path, an S3-compatible bucket, an SFTP server.

Litestream moves the data; these modules only does what Litestream has no command for: list
the machines that replicate one repository (`<url>/<key slug>/<machine>`), read and write a
machine's `owner.json` beside its replica (who writes it: never two writers on one
replica), see how far a replica has got without downloading it, and remove a machine's own
replica history (after a forget). Each location also says how Litestream reaches it (the
`replica` block of a generated config). This module parses a location; the base class
is remote_base.py and each backend a module of its own (remote_file, remote_s3, remote_sftp).

S3 goes through boto3 (installed with the `sync` extra), SFTP through OpenSSH's `sftp` in
batch mode; credentials come from the environment (AWS_* / LITESTREAM_* variables, an ssh
agent or a key file), never from the URL."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from ..errors import SyncSetupError
from .remote_base import Position, Remote
from .remote_file import FileRemote
from .remote_s3 import S3Remote
from .remote_sftp import SftpRemote

__all__ = ["FileRemote", "Position", "Remote", "S3Remote", "SftpRemote", "parse"]


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
