"""Which repository a store syncs as: a sync key that is the same on every clone.

In order: an explicit key (`git config recall-sqlite.syncKey`, or the first line of a
committed `.recall-sqlite-sync` file at the workspace root, which travels with the
repository), else the `origin` remote's URL normalised (the ssh, scp-like and https forms of
one remote are one key), else the root commit of a clone that has its whole history. A
workspace with none of them is refused with what to do: two unrelated directories must
never merge by accident.

The key names a directory of the replica location, so it also has a `slug`: readable, one
path segment, and collision-free (a hash of the key ends it)."""

from __future__ import annotations

import hashlib
import posixpath
import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

from ..errors import SyncSetupError
from ..limits import MAX_SYNC_KEY
from ..paths.files import first_line, read_small

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

GIT_CONFIG_KEY = "recall-sqlite.syncKey"
KEY_FILE = ".recall-sqlite-sync"
_GIT_TIMEOUT_S = 10.0


def check_key(key: str) -> str:
    key = key.strip()
    if not key or len(key) > MAX_SYNC_KEY or not key.isprintable():
        raise SyncSetupError(
            f"a sync key is 1 to {MAX_SYNC_KEY} printable characters, got {key[:40]!r}"
        )
    return key


def slug(key: str) -> str:
    """The key as one path segment: its readable characters and a hash of the whole."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", key).strip("-.")[:80] or "key"
    return f"{readable}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


def normalise_remote(url: str) -> str:
    """`host/path` of a git remote URL, without user, port, `.git` or slashes at the ends:
    git@github.com:org/repo.git, ssh://git@github.com/org/repo and
    https://github.com/org/repo are all `github.com/org/repo`. A local path stays a path."""
    url = url.strip()
    local = re.match(r"^file://(?:localhost)?(/.*)$", url, re.IGNORECASE)
    if local is not None:
        # A file:// URL names the path a path clone names (a shallow clone needs the URL).
        return _local(unquote(local.group(1)))
    m = re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^@/]*@)?([^/:]+)(?::\d*)?(/.*)?$", url)
    if m is None:
        # scp-like: [user@]host:path (a colon before any slash), else a local path.
        m = re.match(r"^(?:[^@/]+@)?([^/:]+):(?!//)(.*)$", url)
    if m is None:
        return _local(url)
    host, path = m.group(1).lower(), (m.group(2) or "")
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    return f"{host}/{path}".rstrip("/")


def _local(path: str) -> str:
    """A local repository's path as one key: `git clone ./origin` records
    `/abs/./origin`, `git clone origin/` `/abs/origin/`, a non-bare repository's git
    directory `/abs/origin/.git`: all `path:/abs/origin`. (A bare `origin.git` keeps its
    name: it is another directory than `origin`.)"""
    if not path.startswith("/"):
        return "path:" + path.rstrip("/")
    clean = posixpath.normpath(path)
    if clean.startswith("//"):
        clean = "/" + clean.lstrip("/")  # POSIX keeps a leading `//`; git does not mean one
    if clean.endswith("/.git"):
        clean = clean[: -len("/.git")] or "/"
    return "path:" + clean


def derive(root: Path) -> tuple[str, str]:
    """(key, how it was found) for the workspace at `root`; SyncSetupError when it has none."""
    explicit = _git(root, "config", "--get", GIT_CONFIG_KEY)
    if explicit:
        return check_key(explicit), f"git config {GIT_CONFIG_KEY}"
    text = read_small(root / KEY_FILE)
    if text is not None and first_line(text):
        return check_key(first_line(text)), f"{KEY_FILE}"
    derived = _derived(root)
    if derived:
        return derived[0]
    raise SyncSetupError(
        f"{root} has no sync key: no origin remote and no root commit (not a git "
        "repository, no commit yet, or a shallow clone); give one with "
        "`recall-sqlite sync init --key NAME` (the same on every machine)"
    )


def alternatives(root: Path, chosen: str) -> list[tuple[str, str]]:
    """The keys this clone would have by its other sources (the origin remote, the root
    commit), other than `chosen`: where another clone found its key elsewhere (one with no
    origin keys by its root commit), its machines replicate under one of these."""
    return [(k, how) for k, how in _derived(root) if k != chosen]


def _derived(root: Path) -> list[tuple[str, str]]:
    """(key, how it was found) from the repository itself, in `derive`'s order: the origin
    remote's URL normalised, then the root commit of a clone with its whole history."""
    found: list[tuple[str, str]] = []
    origin = _git(root, "config", "--get", "remote.origin.url")
    if origin:
        found.append((normalise_remote(origin), "the origin remote"))
    if _git(root, "rev-parse", "--is-shallow-repository") == "false":
        roots = (_git(root, "rev-list", "--max-parents=0", "HEAD") or "").split()
        if roots:
            found.append((f"root:{min(roots)}", "the repository's root commit"))
    return found


def record_explicit(root: Path, key: str, *, committed: bool) -> str:
    """Keep an explicit key where `derive` finds it: in the clone's git config, or (with
    `committed`) in `.recall-sqlite-sync` at the root, to commit so every clone has it."""
    key = check_key(key)
    if committed:
        (root / KEY_FILE).write_text(key + "\n", encoding="utf-8")
        return f"{root / KEY_FILE} (commit it)"
    if _git(root, "rev-parse", "--git-dir") is None:
        raise SyncSetupError(
            f"{root} is not a git repository: keep the key in a file with --commit-key"
        )
    if _git(root, "config", GIT_CONFIG_KEY, key) is None:
        raise SyncSetupError(f"could not write {GIT_CONFIG_KEY} into {root}'s git config")
    return f"git config {GIT_CONFIG_KEY}"


def _git(root: Path, *args: str) -> str | None:
    """git's answer in `root`, stripped, or None when git fails or is not installed."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def elsewhere_dicts(
    found: tuple[tuple[str, str, tuple[str, ...]], ...],
) -> list[dict[str, Any]]:
    """Machines of this repository under other keys (setup.elsewhere), as --json gives them."""
    return [{"key": k, "source": how, "machines": list(ms)} for k, how, ms in found]


# -- the facts of a repository, beside each machine's replica ---------------------------------

# A slug as slug() makes it: readable characters, a dash, 8 hex digits of the key's hash.
_SLUG = re.compile(r"^[A-Za-z0-9._-]{1,80}-[0-9a-f]{8}$")


def is_slug(name: str) -> bool:
    """A directory name of a replica location that slug() could have made (anything else
    there is not a repository's)."""
    return _SLUG.match(name) is not None and name not in (".", "..")


def facts(root: Path) -> dict[str, str]:
    """What identifies this clone's repository whatever its key: the root commit (a clone
    with its whole history), the origin remote normalised, and the clone's own path as a
    path clone of it would name it in its origin. `sync run` writes them into owner.json
    beside its replica, so a clone keyed otherwise can be told where its peers are."""
    found: dict[str, str] = {"path": _local(str(root.absolute()))}
    origin = _git(root, "config", "--get", "remote.origin.url")
    if origin:
        found["origin"] = normalise_remote(origin)
    if _git(root, "rev-parse", "--is-shallow-repository") == "false":
        roots = (_git(root, "rev-list", "--max-parents=0", "HEAD") or "").split()
        if roots:
            found["root"] = min(roots)
    return found


def same_repository(mine: dict[str, str], theirs: Any) -> str | None:
    """How two clones' facts show one repository ("the same root commit", ...), or None.
    A fork shares the root commit too: this is a reason to tell, never to join unasked."""
    if not isinstance(theirs, dict):
        return None

    def both(name: str) -> bool:
        return bool(mine.get(name)) and mine.get(name) == theirs.get(name)

    if both("root"):
        return "the same root commit"
    if both("origin"):
        return "the same origin"
    if mine.get("origin") and mine.get("origin") == theirs.get("path"):
        return "a clone of the repository it replicates"
    if mine.get("path") and mine.get("path") == theirs.get("origin"):
        return "a clone of this repository"
    return None
