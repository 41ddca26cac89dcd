"""Where synapt 0.30.0 keeps its journal, and the line it writes: the one home of these rules.

Every part of the package that touches synapt's files asks here: the migration's walk and
discovery (which directories are synapt data directories, which files are buckets), the
export and the demo (the line format), the adapter's mirror (the bucket stock synapt reads
from a worktree) and doctor. Filesystem only: no SQL, no subprocess, no synapt import.

What synapt 0.30.0 does (synapt/recall/core.py `project_data_dir`, `_worktree_name`,
`project_worktree_dir`; journal.py `_journal_path`, `append_entry`), as this module
computes it for a directory a process starts in:

* the **data root** is SYNAPT_RECALL_ROOT or GRIPSPACE_ROOT when set; else, in a gr1/gr2
  workspace, its root; else, in a linked git worktree's root, the main checkout; else the
  directory itself (a subdirectory of a plain git repository is its own data root). An
  already initialized store at or below that boundary (the directory's own, say) wins.
* the **bucket** is SYNAPT_RECALL_WORKTREE when set; else in a gr2 workspace the nearest
  directory holding `.grip/`; else the nearest directory holding `.git` or
  `.gitgrip/griptree.json`; its basename.
* the journal is `<data root>/.synapt/recall/worktrees/<bucket>/journal.jsonl`; older
  synapt versions used `.synapse/recall/` and `.synapse-recall/` (with a flat
  `journal.jsonl`), which synapt renames to `.synapt/recall/` when it next runs there.
* a line is `json.dumps(asdict(entry))`: the fields in `FIELDS` order, default separators,
  ASCII escapes; appended under an exclusive `flock` of the file.

tests/unit/synapt_layout/test_synapt_layout.py runs stock synapt in each layout and compares.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from functools import cache
from pathlib import Path

from .memo import memo
from .paths.datadir import DATA_DIR, HOLDER
from .paths.datadir import RECALL as RECALL
from .paths.datadir import data_dir as _data_dir
from .paths.git import common_dir, read_gitdir_pointer
from .synapt_fields import BOOL_FIELDS as BOOL_FIELDS
from .synapt_fields import FIELDS as FIELDS
from .synapt_fields import LIST_FIELDS as LIST_FIELDS
from .synapt_fields import TEXT_FIELDS as TEXT_FIELDS
from .synapt_fields import TIMESTAMP as TIMESTAMP
from .synapt_fields import defaults as defaults

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from typing import Any, Final, TypeVar

    T = TypeVar("T")

# Data directories synapt has used, newest first, relative to their data root (the newest,
# `.synapt/recall`, is paths/datadir.py's: the store keeps its files there too).
DATA_DIRS: Final = (DATA_DIR, ".synapse/recall", ".synapse-recall")
# The directory names that hold `recall` (the two newer layouts), and the flat one.
HOLDERS: Final = (HOLDER, ".synapse")
FLAT: Final = ".synapse-recall"
JOURNAL: Final = "journal.jsonl"
WORKTREES: Final = "worktrees"
# What synapt records of a GRIPSPACE_ROOT binding inside the gripspace it was used from.
_ROOT_MARKER: Final = Path(HOLDER) / "gripspace-root"

_ENV = ("SYNAPT_RECALL_ROOT", "GRIPSPACE_ROOT", "SYNAPT_RECALL_WORKTREE")


# -- the data directory and its files --------------------------------------------------------


def data_dir(root: Path) -> Path:
    """The data directory synapt 0.30.0 uses at a data root."""
    return Path(_data_dir(root))


def bucket_file(data: Path, bucket: str) -> Path:
    """A bucket's journal inside a data directory."""
    return Path(data) / WORKTREES / bucket / JOURNAL


def owner_of_data_dir(d: Path) -> Path | None:
    """The data root a data directory belongs to, judged by its place (`X/.synapt/recall`,
    `X/.synapse/recall`, `X/.synapse-recall` -> `X`); None for any other directory."""
    if d.name == RECALL and d.parent.name in HOLDERS:
        return d.parent.parent
    if d.name == FLAT:
        return d.parent
    return None


def holds_journals(d: Path) -> bool:
    """A data directory with a bucket directory or a flat journal in it."""
    return (d / WORKTREES).is_dir() or (d / JOURNAL).is_file()


def journals_in(d: Path) -> Iterator[tuple[Path, str, str]]:
    """(file, bucket name, layout) of every journal in data directory `d`: the flat
    `journal.jsonl` first (layout 'flat', named after the data root), then
    `worktrees/<bucket>/journal.jsonl` by name (layout 'worktrees'). Raises OSError when
    `worktrees/` cannot be listed."""
    flat = d / JOURNAL
    if flat.is_file():
        owner = owner_of_data_dir(d)
        yield flat, (owner.name if owner is not None else d.name), "flat"
    wt = d / WORKTREES
    if wt.is_dir():
        for name in sorted(os.listdir(wt)):
            j = wt / name / JOURNAL
            if j.is_file():
                yield j, name, "worktrees"


def split_bucket_path(path: Path) -> tuple[Path, str, str] | None:
    """(data root, bucket, layout) for a file laid out as synapt lays out journals
    (`<root>/.synapt/recall/worktrees/<bucket>/journal.jsonl`, or a flat
    `<root>/.synapse-recall/journal.jsonl`, ...); None for any other file."""
    p = Path(os.path.abspath(path))
    if p.name != JOURNAL:
        return None
    if p.parent.parent.name == WORKTREES:
        owner = owner_of_data_dir(p.parent.parent.parent)
        return (owner, p.parent.name, "worktrees") if owner is not None else None
    owner = owner_of_data_dir(p.parent)
    return (owner, owner.name, "flat") if owner is not None else None


def is_initialized_store(recall_dir: Path) -> bool:
    """synapt's test for a data directory recall has written to (not one another tool
    merely created): knowledge, an index database, or a bucket journal."""
    if (recall_dir / "knowledge.jsonl").exists():
        return True
    index = recall_dir / "index"
    if (index / "recall.db").exists() or (index / "index.db").exists():
        return True
    wt = recall_dir / WORKTREES
    if wt.is_dir():
        with contextlib.suppress(OSError):
            return any((wt / n / JOURNAL).exists() for n in os.listdir(wt))
    return False


# -- which file synapt uses from a directory ---------------------------------------------------


def journal_for(directory: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> Path:
    """The journal file stock synapt 0.30.0, started in `directory` with environment `env`
    (default: this process's), reads and appends to. Raises ValueError where synapt
    refuses to resolve (a missing SYNAPT_RECALL_ROOT, a bad SYNAPT_RECALL_WORKTREE, $HOME)."""
    environ = os.environ if env is None else env
    start = Path(directory).resolve()
    home = _home(environ)
    return bucket_file(data_dir(data_root(start, environ, home)), bucket(start, environ, home))


def data_root(start: Path, env: Mapping[str, str], home: Path) -> Path:
    """synapt's project_data_dir root for a process started in `start` (resolved)."""
    for var in ("SYNAPT_RECALL_ROOT", "GRIPSPACE_ROOT"):
        value = env.get(var)
        if value:
            resolved = Path(os.path.expanduser(value)).resolve()
            if not resolved.is_dir():
                raise ValueError(f"{var} points at a directory that does not exist: {resolved}")
            return resolved
    marked = _marked_root(start, home)
    if marked is not None:
        return marked
    boundary = _linked_main(start)
    grip = gripspace_root(boundary if boundary is not None else start, home)
    if grip is not None:
        boundary = grip
    nearest = _nearest_store(start, boundary if boundary is not None else start, home)
    if nearest is not None:
        return nearest
    if boundary is not None:
        return boundary
    if start == home:
        raise ValueError(f"synapt refuses to keep a store at $HOME ({home})")
    return start


def bucket(start: Path, env: Mapping[str, str], home: Path) -> str:
    """synapt's _worktree_name for a process started in `start` (resolved)."""
    label = env.get("SYNAPT_RECALL_WORKTREE")
    if label:
        if "/" in label or "\\" in label or label in (".", ".."):
            raise ValueError(f"SYNAPT_RECALL_WORKTREE must be a bare label, got {label!r}")
        return label
    grip = gripspace_root(start, home)
    if grip is not None and (grip / ".grip").is_dir():
        # gr2: one bucket per desk, the nearest `.grip/` by locality.
        for candidate in _up(start):
            if (candidate / ".grip").is_dir():
                return candidate.name
            if candidate == home:
                break
        return grip.name
    for candidate in _up(start):
        if (candidate / ".git").exists() or (candidate / ".gitgrip" / "griptree.json").exists():
            return candidate.name
        if candidate == grip:
            break
    return grip.name if grip is not None else start.name


def gripspace_root(path: Path, home: Path) -> Path | None:
    """synapt's _find_gripspace_root: the gr1 or gr2 workspace `path` lies in, or None."""
    for current in _up(path):
        gitgrip = current / ".gitgrip"
        if gitgrip.is_dir():
            if (gitgrip / "griptree.json").exists():
                parent = _griptree_parent(current, home)
                if parent is not None:
                    return parent
                return current if (current / ".grip").is_dir() else None
            if (gitgrip / "griptrees.json").exists():
                return current
            if (gitgrip / "spaces" / "main" / "gripspace.yml").exists():
                return current
        if (current / ".grip").is_dir():
            return current
        if current == home:
            break
    return None


def _up(path: Path) -> Iterator[Path]:
    current = path
    while current != current.parent:
        yield current
        current = current.parent


def _home(env: Mapping[str, str]) -> Path:
    value = env.get("HOME")
    return Path(value).resolve() if value else Path.home().resolve()


def _linked_main(start: Path) -> Path | None:
    """The main checkout of a linked worktree whose root is `start` (synapt asks git for
    the common directory; this reads the same from git's files)."""
    dotgit = start / ".git"
    if dotgit.is_dir() or not dotgit.is_file():
        return None
    gitdir = read_gitdir_pointer(dotgit)
    if gitdir is None or not os.path.isdir(gitdir):
        return None
    common, _ = common_dir(gitdir)
    return Path(common).parent


def _griptree_parent(griptree: Path, home: Path) -> Path | None:
    try:
        children = list(griptree.iterdir())
    except OSError:
        return None
    for child in children:
        dotgit = child / ".git"
        if not dotgit.is_file():
            continue
        try:
            text = dotgit.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if not text.startswith("gitdir:"):
            continue
        main = Path(text.split(":", 1)[1].strip())
        while main.name != ".git" and main != main.parent:
            main = main.parent
        if main.name != ".git":
            continue
        for candidate in _up(main.parent):
            if (candidate / ".gitgrip" / "griptrees.json").exists():
                return candidate
            if candidate == home:
                break
    return None


def _nearest_store(start: Path, stop_at: Path, home: Path) -> Path | None:
    for current in (start, *start.parents):
        if is_initialized_store(data_dir(current)):
            return current
        if current in (stop_at, home):
            return None
    return None


def _marked_root(start: Path, home: Path) -> Path | None:
    """The root an earlier GRIPSPACE_ROOT-bound synapt call recorded in this gripspace."""
    own = gripspace_root(start, home)
    if own is None:
        return None
    try:
        recorded = Path((own / _ROOT_MARKER).read_text().strip())
    except (OSError, UnicodeDecodeError):
        return None
    if not recorded.is_dir() or not (
        (recorded / ".gitgrip").is_dir() or (recorded / ".grip").is_dir()
    ):
        return None
    if (recorded / ".gitgrip" / "griptree.json").is_file() and _griptree_parent(
        recorded, home
    ) == own:
        return None  # a root pointing at one of its own griptrees: synapt ignores it
    return recorded


def neutral_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` without synapt's overrides: how stock synapt started at a worktree's root by
    hand (not by gr, not by the adapter) resolves."""
    return {k: v for k, v in (os.environ if env is None else env).items() if k not in _ENV}


# -- the line ---------------------------------------------------------------------------------


# json.dumps' defaults, built on first use (the journal's reads import this module for
# its field names alone) and once: append_entry writes json.dumps(entry.to_dict()).
@memo
def _encoder() -> Callable[[Any], str]:
    import json

    return json.JSONEncoder().encode


def _encode(value: Any) -> str:
    return _encoder()(value)


def line(fields: Mapping[str, Any]) -> str:
    """One journal line exactly as synapt 0.30.0's append_entry writes it, without the
    newline: `fields` in FIELDS order, a missing one (not the timestamp) as synapt's
    default. Raises ValueError for a field synapt does not have."""
    unknown = set(fields) - set(FIELDS)
    if unknown:
        raise ValueError(f"not synapt journal fields: {sorted(unknown)}")
    full = defaults()
    full.update(fields)
    return _encode({name: full[name] for name in FIELDS})


def append_lines(
    path: Path,
    lines: Sequence[str],
    under_lock: Callable[[os.stat_result, os.stat_result, bytes], T] | None = None,
) -> T | None:
    """Append lines (each as `line` writes one, no newline) to a bucket as append_entry
    does: directories made as needed, the file opened for appending and held under synapt's
    exclusive lock while they are written, then fsynced. `under_lock(before, after, data)`
    runs still under the lock, with the file's stat before and after and the bytes written
    (the store accounts for its own lines there: legacy/mirror.py); its answer is returned."""
    data = "".join(text + "\n" for text in lines).encode("utf-8")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as f:
        lock(f)
        before = os.fstat(f.fileno())
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
        after = os.fstat(f.fileno())
        return under_lock(before, after, data) if under_lock is not None else None


def lock(f: Any) -> None:
    """synapt's lock_exclusive: a blocking exclusive flock (released when the file closes)."""
    try:
        import fcntl
    except ImportError:  # Windows: synapt locks a sentinel byte; nothing to share here
        return
    fcntl.flock(f.fileno(), fcntl.LOCK_EX)


# The shape of a line exactly as append_entry writes it (field order, ", " and ": ", ASCII
# escapes), so the survey can read such a line without a JSON parse: line_pattern() proves
# its shape and types, noncanonical_escape() that every escape is one json.dumps itself
# writes (so equal content means equal bytes); neither admits a NUL or a lone surrogate.
# Possessive repeats where Python has them (3.11): a run of plain characters ends at a quote
# or a backslash, which it cannot hold, so giving characters back never makes a match; not
# saving the positions to give back makes the survey's match of a line faster
# (bench/RESULTS.md, row 'survey: possessive repeats').
_MANY = b"*+" if sys.version_info >= (3, 11) else b"*"
_PLAIN = rb'[^"\\\x00-\x1f\x7f-\xff]' + _MANY
_JSTR = rb'"' + _PLAIN + rb"(?:\\." + _PLAIN + rb")" + _MANY + rb'"'
_JLIST = rb"\[(?:" + _JSTR + rb"(?:, " + _JSTR + rb")" + _MANY + rb")?\]"
# The groups the survey reads from such a line, in the order of FIELDS: match.groups()
# gives them so.
CAPTURED: Final = ("timestamp", "session_id", "branch", "auto", "enriched")


def _field_pattern(name: str) -> bytes:
    if name == "timestamp":
        value = b'"(?P<timestamp>' + TIMESTAMP.encode() + b')"'
    elif name in LIST_FIELDS:
        value = _JLIST
    else:
        value = rb"(?:true|false)" if name in BOOL_FIELDS else _JSTR
        if name in CAPTURED:
            value = b"(?P<" + name.encode() + b">" + value + b")"
    return b'"' + name.encode() + b'": ' + value


@cache
def line_pattern() -> re.Pattern[bytes]:
    """The whole line, field by field (compiled on first use: only the survey needs it,
    and compiling costs a journal read's start-up milliseconds)."""
    return re.compile(rb"\{" + b", ".join(_field_pattern(n) for n in FIELDS) + rb"\}")


@cache
def noncanonical_escape() -> re.Pattern[bytes]:
    """A backslash not starting an escape json.dumps(ensure_ascii=True) writes: \\u0000,
    surrogates, \\/, upper-case hex, escaped printable ASCII. (It may also flag the second
    backslash of an escaped backslash: that only sends a valid line to the parser.)"""
    return re.compile(
        rb'\\(?!["\\bfnrt]|u(?:000[1-7bef]|001[0-9a-f]|007f|00[89a-f][0-9a-f]'
        rb"|0[1-9a-f][0-9a-f]{2}|[1-9a-c][0-9a-f]{3}|d[0-7][0-9a-f]{2}|[ef][0-9a-f]{3}))"
    )
