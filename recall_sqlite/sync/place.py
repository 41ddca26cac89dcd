"""Where sync keeps its files beside a store: the one private directory `<db>-sync/` and the
names in it. On text paths with nothing but `os`: every open of a store asks whether it
syncs (`syncs`, `has_peers`), and a read's start imports no pathlib (paths/files.py).

state.py builds its paths from these names; nothing else spells them."""

from __future__ import annotations

import os

SUFFIX = "-sync"
CONFIG = "config.json"  # what `sync init` chose (state.SyncConfig)
MACHINE = "machine.json"  # this file's machine id
PEERS = "peers.json"  # what this machine knows of the others (peers.PeerBook)
REPLICATE_CONFIG = "litestream.yml"
PEERS_CONFIG = "peers.yml"
META = "meta"  # Litestream's local state (its meta-path)
PULLS = "pulls"  # peers restored for a merge, removed after it
LOG = "litestream.log"
RUN_LOCK = "run.lock"  # held by a live `sync run`
RUN_INFO = "run.json"
LITESTREAM_PID = "litestream.json"  # the Litestream a `sync run` started (orphan.py)
PAUSE_REQUEST = "pause.request"
PAUSE_ACK = "pause.ack"


def directory(db_path: str | os.PathLike[str]) -> str:
    """`<db>-sync/`, beside the store file."""
    return os.fspath(db_path) + SUFFIX


def syncs(db_path: str | os.PathLike[str]) -> bool:
    """True once `sync init` (or `sync restore`) set this store up."""
    return os.path.exists(os.path.join(directory(db_path), CONFIG))


def has_peers(db_path: str | os.PathLike[str]) -> bool:
    """True once a pull or a status recorded what the other machines hold."""
    return os.path.exists(os.path.join(directory(db_path), PEERS))
