"""Export the store's journal back to files: `synapt` (a bucket synapt 0.30.0 reads with
the same answers as the store, to roll back or hand over) and `ndjson` (every field, the
store's id and worktree, for other tools).

A `synapt` export holds every stored version of the scope, not only the one per session
that reads show, each line exactly as synapt's `append_entry` writes it, in the order
that makes synapt's own dedup and ordering of the file pick what the store picks (see
`synapt_order`: synapt breaks its ties by file order, the store by content). Fields synapt
does not know (`extra`, kept from legacy lines) cannot be written in its format; the
report counts the entries that carried some.

Files are written atomically (a private temp file beside the target, then a rename) with
mode 0600, because memory can hold secrets; an existing file is replaced only with
`force`."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import IO, Any, Literal

from .. import identity
from .. import synapt_layout as layout
from ..checks import path_text, require_choice
from ..context import StoreContext
from ..errors import InvalidInputError, StoreError
from ..journal.codec import rich_count, tie_key
from ..journal.entry import JournalEntry
from ..journal.journal import Journal
from ..journal.order import py_key
from ..timestamps import iso_utc, parse_timestamp

ExportFormat = Literal["synapt", "ndjson"]
FORMATS: tuple[ExportFormat, ...] = ("synapt", "ndjson")
# What a path of "-" means: standard output.
STDOUT = "-"

_ndjson_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


@dataclass(frozen=True, kw_only=True)
class ExportReport:
    """What `export` wrote: where, in which format, how many lines of which worktrees."""

    path: str
    format: ExportFormat
    lines: int
    worktrees: list[str]
    all_worktrees: bool
    sessions: int
    extra_dropped: int
    workspace_id: str

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def synapt_record(e: JournalEntry) -> str:
    """One line as synapt 0.30.0's append_entry writes it (no newline)."""
    return layout.line(e.synapt_dict())


def ndjson_record(e: JournalEntry, workspace_id: str) -> str:
    """One entry for other tools: the store's id, workspace and worktree, the timestamp as
    written and as a UTC instant, every synapt field and the unknown legacy ones."""
    d: dict[str, Any] = {"id": e.id, "workspace_id": workspace_id, "worktree": e.worktree}
    for name in layout.FIELDS:
        d[name] = getattr(e, name)
        if name == "timestamp":
            d["timestamp_utc"] = iso_utc(parse_timestamp(e.timestamp))
    d["extra"] = dict(e.extra)
    return _ndjson_encode(d)


def export(
    ctx: StoreContext,
    target: str | os.PathLike[str] | IO[str],
    *,
    format: ExportFormat = "synapt",  # noqa: A002 - the CLI option's name
    worktree: str | None = None,
    all_worktrees: bool = False,
    force: bool = False,
) -> ExportReport:
    """Write the journal of one worktree (default: the current one; `worktree` names
    another by key) or of the whole workspace to `target`: a path, "-" for standard
    output, or an open text stream. Raises InvalidInputError for a bad format, an unknown
    worktree or an existing file without `force`; nothing is left half-written."""
    require_choice("format", format, FORMATS)
    if all_worktrees and worktree is not None:
        raise InvalidInputError("give a worktree or all worktrees, not both")
    if worktree is not None and ctx.worktree_pk_of(worktree) is None:
        known = sorted(w.key for w in identity.worktrees(ctx.db, ctx.workspace_pk))
        raise InvalidInputError(
            f"unknown worktree {worktree!r} in this workspace (known: {', '.join(known) or 'none'})"
        )
    journal = Journal(ctx)
    entries = journal.versions(worktree=worktree, all_worktrees=all_worktrees)
    if format == "synapt":
        entries = synapt_order(entries)
        lines = [synapt_record(e) for e in entries]
    else:
        lines = [ndjson_record(e, ctx.workspace_uuid) for e in entries]
    text = "".join(line + "\n" for line in lines)
    where = _write(target, text, force=force)
    scope = (
        sorted({e.worktree or "" for e in entries})
        if all_worktrees
        else [worktree if worktree is not None else ctx.worktree_key]
    )
    return ExportReport(
        path=where,
        format=format,
        lines=len(lines),
        worktrees=scope,
        all_worktrees=all_worktrees,
        sessions=len({e.session_id for e in entries if e.session_id}),
        extra_dropped=sum(1 for e in entries if e.extra) if format == "synapt" else 0,
        workspace_id=ctx.workspace_uuid,
    )


def synapt_order(entries: list[JournalEntry]) -> list[JournalEntry]:
    """`entries` in the order that makes synapt break its ties as the store does
    (journal/order.py): synapt keeps the first of fully tied versions of a session and
    orders sessions at one instant by their first line, so each session's lines come best
    version first, and sessions (an entry without one counts as its own) in their tie
    order. Where nothing ties, the order changes no answer of synapt's."""

    def key(e: JournalEntry) -> tuple[int, tuple[int, int, int, bytes]]:
        raw = bytes.fromhex(e.id or "")
        rank = py_key(
            e.auto,
            parse_timestamp(e.timestamp),
            rich_count(e.focus, e.done, e.decisions, e.next_steps),
            raw,
        )
        return tie_key(e.session_id, raw), rank

    return sorted(entries, key=key)


def _write(target: str | os.PathLike[str] | IO[str], text: str, *, force: bool) -> str:
    """Write `text` to the target; returns what to call it in a report."""
    if not isinstance(target, (str, os.PathLike)):
        target.write(text)
        target.flush()
        return getattr(target, "name", "<stream>")
    if os.fspath(target) == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        return STDOUT
    path_text("the output path", target)
    try:
        # abspath, not resolve: the name the user gave, normalised, symlinks left alone.
        path = Path(os.path.abspath(Path(target).expanduser()))
        if path.is_dir():
            raise InvalidInputError(f"{path} is a directory; name the file to write")
        if not path.parent.is_dir():
            raise InvalidInputError(f"{path.parent} does not exist")
        if path.exists() and not force:
            raise InvalidInputError(f"{path} exists; pass --force to replace it")
    except (OSError, ValueError) as exc:  # a name too long, a NUL in it, ...
        if isinstance(exc, InvalidInputError):
            raise
        raise InvalidInputError(f"cannot write to {os.fspath(target)!r}: {exc}") from None
    # mkstemp creates the file 0600 in the target's directory, so the rename below is
    # atomic and the content is never readable by others, even for a moment.
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise StoreError(f"cannot write in {path.parent}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if force:
            os.replace(tmp, path)
        else:
            # link() refuses an existing name, so a file that appeared since the check
            # above is not overwritten either.
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise InvalidInputError(f"{path} exists; pass --force to replace it") from None
            except OSError:
                # A filesystem without hard links: the check above is what we have.
                os.replace(tmp, path)
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return str(path)


# -- back to synapt's own buckets -----------------------------------------------------------


@dataclass(frozen=True)
class BucketWrite:
    """One bucket `export --to-buckets` wrote: the file stock synapt reads from the roots of
    `worktrees`, how many lines it held and how many the export appended."""

    path: str
    worktrees: list[str]
    had: int
    appended: int
    unknown: int
    accounted: bool

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class BucketsReport:
    """What `export --to-buckets` did: the buckets it wrote, the worktrees it skipped."""

    buckets: list[BucketWrite]
    skipped: list[dict[str, str]]
    workspace_id: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace_id": self.workspace_id,
            "appended": sum(b.appended for b in self.buckets),
            "buckets": [b.to_dict() for b in self.buckets],
            "skipped": list(self.skipped),
        }


# (bucket path, lines, worktree key of a new import record) -> whether accounted for.
Append = Callable[[Path, list[str], str], bool]


def to_buckets(ctx: StoreContext, *, append: Append, worktree: str | None = None) -> BucketsReport:
    """For every worktree (or `worktree` alone) whose directory exists, append to the
    bucket stock synapt 0.30.0 reads from its root (synapt_layout.journal_for, with none
    of synapt's overrides set) every stored version of the worktree that the bucket does
    not hold yet: imported, written natively, written through the adapter. Lines already
    there are kept as they are (and not written twice); the new ones are appended in one
    write under synapt's lock, in `synapt_order`, and accounted for as the store's own
    (legacy/mirror.py), so switching back to stock synapt loses nothing and `verify`
    stays clean. Worktrees synapt cannot be started in (gone, known only from an imported
    file) are listed as skipped."""
    rows = identity.worktrees(ctx.db, ctx.workspace_pk)
    if worktree is not None:
        rows = [w for w in rows if w.key == worktree]
        if not rows:
            raise InvalidInputError(f"unknown worktree {worktree!r} in this workspace")
    env = layout.neutral_env()
    by_bucket: dict[Path, list[str]] = {}
    skipped: list[dict[str, str]] = []
    for w in rows:
        if not w.root or not os.path.isdir(w.root):
            why = "known only from an imported file" if not w.root else "its directory is gone"
            skipped.append({"worktree": w.key, "why": why})
            continue
        try:
            bucket = layout.journal_for(w.root, env)
        except ValueError as exc:  # where synapt itself refuses to resolve
            skipped.append({"worktree": w.key, "why": str(exc)})
            continue
        by_bucket.setdefault(bucket, []).append(w.key)
    journal = Journal(ctx)
    out = []
    for bucket, keys in sorted(by_bucket.items()):
        present, had, unknown = _ids_in(bucket, ctx)
        entries = [e for k in keys for e in journal.versions(worktree=k)]
        missing = synapt_order([e for e in entries if bytes.fromhex(e.id or "") not in present])
        lines = [synapt_record(e) for e in missing]
        accounted = append(bucket, lines, keys[0]) if lines else True
        out.append(BucketWrite(str(bucket), keys, had, len(lines), unknown, accounted))
    return BucketsReport(out, skipped, ctx.workspace_uuid)


def _ids_in(bucket: Path, ctx: StoreContext) -> tuple[set[bytes], int, int]:
    """(entry ids of the bucket's lines, its lines, how many of them the store lacks)."""
    from .lines import Bad, classify
    from .sources import known_ids

    try:
        data = bucket.read_bytes()
    except FileNotFoundError:
        return set(), 0, 0
    except OSError as exc:
        raise StoreError(f"cannot read {bucket}: {exc.strerror or exc}") from None
    ids: set[bytes] = set()
    lines = [x for x in data.split(b"\n") if x.strip()]
    for raw in lines:
        fate = classify(raw, True)
        if not isinstance(fate, Bad):
            ids.add(fate.id)
    return ids, len(lines), len(ids - known_ids(ctx.db, ctx.workspace_pk, ids))
