"""What sync keeps beside a store, in one private directory `<db>-sync/`: the configuration
`sync init` wrote, this machine's id, the generated Litestream configs, Litestream's own
local state, the lock and the files `sync run` coordinates through, and the temporary
copies of peers a pull merges.

The machine id is random and remembers which file it was minted for (device and inode): a
store copied or restored elsewhere is another machine, with an id of its own, so two
files never write one replica."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path

from ..checks import require_machine_id
from ..errors import SyncSetupError
from ..paths.files import ensure_private_dir, write_private
from . import place
from .key import slug

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .peers import PeerBook
    from .remote import Remote

CONFIG_VERSION = 1
DEFAULT_PULL_EVERY_S = 30.0
# How long the replica keeps history: a forgotten entry's old pages age out of it within
# snapshot interval + retention (docs/sync.md, "Forget across machines").
DEFAULT_RETENTION = "1h"


class SyncState:
    """The paths of `<db>-sync/` (named in place.py) and what is in them."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = Path(db_path)
        self.dir = Path(place.directory(db_path))
        self.config_file = self.dir / place.CONFIG
        self.machine_file = self.dir / place.MACHINE
        self.replicate_config = self.dir / place.REPLICATE_CONFIG
        self.peers_config = self.dir / place.PEERS_CONFIG
        self.meta = self.dir / place.META
        self.pulls = self.dir / place.PULLS
        self.log = self.dir / place.LOG
        self.run_lock = self.dir / place.RUN_LOCK
        self.run_info = self.dir / place.RUN_INFO
        self.pause_request = self.dir / place.PAUSE_REQUEST
        self.pause_ack = self.dir / place.PAUSE_ACK

    @property
    def book(self) -> PeerBook:
        from .peers import PeerBook

        return PeerBook(self.dir / place.PEERS)

    def ensure(self) -> None:
        ensure_private_dir(self.dir)

    # -- configuration -----------------------------------------------------------------

    def configured(self) -> bool:
        return self.config_file.is_file()

    def config(self) -> SyncConfig:
        try:
            data = json.loads(self.config_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SyncSetupError(
                f"sync is not set up for {self.db_path}: run `recall-sqlite sync init --url URL`"
                " (on a new machine: `recall-sqlite sync restore --url URL`)"
            ) from None
        except (OSError, ValueError) as exc:
            raise SyncSetupError(f"{self.config_file} cannot be read: {exc}") from None
        return SyncConfig.from_dict(data, self.config_file)

    def save_config(self, config: SyncConfig) -> None:
        self.ensure()
        write_private(
            self.config_file,
            json.dumps(config.to_dict(), indent=2, sort_keys=True).encode() + b"\n",
            exclusive=False,
        )

    # -- this machine ------------------------------------------------------------------

    def machine(self) -> str:
        """This file's machine id, minted on first use and again for a copied or restored
        file (whose device and inode differ); Litestream's local state of an old id goes."""
        st = os.stat(self.db_path)
        try:
            data = json.loads(self.machine_file.read_text(encoding="utf-8"))
            if data.get("dev") == st.st_dev and data.get("ino") == st.st_ino:
                found = data["machine"]
            else:
                found = None
        except (OSError, ValueError, KeyError, AttributeError):
            found = None
        if found is not None:
            # It names this machine's replica directory (and what a forget purges): an id
            # of another shape would write, or delete, outside the replica location.
            try:
                return require_machine_id("machine", found, error=SyncSetupError)
            except SyncSetupError as exc:
                raise SyncSetupError(
                    f"{self.machine_file}: {exc}; remove that file to mint a new one"
                ) from None
        machine = secrets.token_hex(8)
        self.ensure()
        shutil.rmtree(self.meta, ignore_errors=True)
        write_private(
            self.machine_file,
            json.dumps(
                {
                    "machine": machine,
                    "store": secrets.token_hex(8),
                    "dev": st.st_dev,
                    "ino": st.st_ino,
                    "host": socket.gethostname(),
                }
            ).encode(),
            exclusive=False,
        )
        return machine

    def store_token(self) -> str:
        """A random token of this file's machine id: who owns the replica (owner.json)."""
        self.machine()
        data = json.loads(self.machine_file.read_text(encoding="utf-8"))
        return str(data["store"])


@dataclass
class SyncConfig:
    """What `sync init` chose: the replica location, the sync key, how often to pull, how
    long the replica keeps history. Mutable: `sync run --pull-every` adjusts it for a run."""

    url: str
    key: str
    key_source: str
    pull_every_s: float = DEFAULT_PULL_EVERY_S
    retention: str = DEFAULT_RETENTION

    @property
    def slug(self) -> str:
        return slug(self.key)

    def remote(self) -> Remote:
        from .remote import parse

        return parse(self.url)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": CONFIG_VERSION,
            "url": self.url,
            "key": self.key,
            "key_source": self.key_source,
            "pull_every_s": self.pull_every_s,
            "retention": self.retention,
        }

    @classmethod
    def from_dict(cls, data: Any, path: Path) -> SyncConfig:
        try:
            if int(data.get("version", 0)) > CONFIG_VERSION:
                raise SyncSetupError(f"{path} was written by a newer recall-sqlite")
            return cls(
                str(data["url"]),
                str(data["key"]),
                str(data.get("key_source", "")),
                float(data.get("pull_every_s", DEFAULT_PULL_EVERY_S)),
                str(data.get("retention", DEFAULT_RETENTION)),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            raise SyncSetupError(
                f"{path} is not a sync configuration: run `recall-sqlite sync init` again"
            ) from None
