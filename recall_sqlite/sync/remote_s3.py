"""A replica location in an S3-compatible bucket, listed and read through boto3 (the `sync`
extra); credentials from the environment, never the URL."""

from __future__ import annotations

import json

from ..checks import is_machine_id
from ..errors import SyncError, SyncSetupError
from .key import is_slug
from .remote_base import (
    OWNER_FILE,
    TRUE_WORDS,
    Position,
    Remote,
    owner_of,
    position_of,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class S3Remote(Remote):
    scheme = "s3"
    watch_s = 10.0  # a billed LIST request per peer

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
        if self.options.get("force-path-style", "").lower() in TRUE_WORDS:
            block["force-path-style"] = True
        if self.options.get("skip-verify", "").lower() in TRUE_WORDS:
            block["skip-verify"] = True
        return block

    def vfs_url(self, key_slug: str, machine: str) -> str:
        from urllib.parse import urlencode

        query = {}
        if "endpoint" in self.options:
            query["endpoint"] = self.options["endpoint"]
        if "region" in self.options:
            query["region"] = self.options["region"]
        if self.options.get("force-path-style", "").lower() in TRUE_WORDS:
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
            style = (
                "path" if self.options.get("force-path-style", "").lower() in TRUE_WORDS else "auto"
            )
            self._client = boto3.client(
                "s3",
                endpoint_url=self.options.get("endpoint"),
                region_name=self.options.get("region") or None,
                verify=self.options.get("skip-verify", "").lower() not in TRUE_WORDS,
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
        return sorted(n for n in self._children(self._key(key_slug) + "/") if is_machine_id(n))

    def slugs(self) -> list[str]:
        top = self._key()
        return sorted(n for n in self._children(top + "/" if top else "") if is_slug(n))

    def _children(self, prefix: str) -> set[str]:
        """The names of the "directories" right under `prefix`."""
        found: set[str] = set()
        token: str | None = None
        while True:
            kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": prefix, "Delimiter": "/"}
            if token:
                kwargs["ContinuationToken"] = token
            page = self._call("list", self.client().list_objects_v2, **kwargs) or {}
            for common in page.get("CommonPrefixes", []):
                found.add(common["Prefix"].rstrip("/").rsplit("/", 1)[-1])
            token = page.get("NextContinuationToken")
            if not token:
                return found

    def read_owner(self, key_slug: str, machine: str) -> dict[str, Any] | None:
        got = self._call(
            "read of owner.json",
            self.client().get_object,
            Bucket=self.bucket,
            Key=self._key(key_slug, machine, OWNER_FILE),
        )
        return None if got is None else owner_of(got["Body"].read())

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
        return position_of(names)

    def purge(self, key_slug: str, machine: str) -> bool:
        return self._delete(key_slug, machine, keep_owner=True)

    def remove(self, key_slug: str, machine: str) -> bool:
        self._delete(key_slug, machine, keep_owner=False)
        return not self._objects(key_slug, machine)

    def _delete(self, key_slug: str, machine: str, *, keep_owner: bool) -> bool:
        keys = [
            {"Key": o["Key"]}
            for o in self._objects(key_slug, machine)
            if not (keep_owner and o["Key"].endswith("/" + OWNER_FILE))
        ]
        for i in range(0, len(keys), 1000):
            self._call(
                "delete",
                self.client().delete_objects,
                Bucket=self.bucket,
                Delete={"Objects": keys[i : i + 1000], "Quiet": True},
            )
        return True
