"""journal forget in files: the copies of forgotten entry versions in synapt's buckets.

After forget removed the rows, every synapt store of the workspace (the walk's, which
includes every worktree's mirror bucket) is read under synapt's own lock for lines that
hold a forgotten version: the line of the version itself (found by its content address,
as an import would), and a damaged line (truncated, say) that carries its text. A copy is
the store's own when the version was first stored by a write through the store (no line
of a user's file brought it in): then every copy in a bucket is one the store wrote (the
adapter's mirror, its fill, `export --to-buckets`), and it is removed. Any other copy is a
line of the user's own history: it is listed by path and line, and removed only with
`scrub_sources`.

A file is rewritten in place, as synapt's own compact_journal does: under the exclusive
lock every synapt writer takes, from the first removed line on, then truncated and
fsynced, so a concurrent append waits and is kept. Its import record then no longer fits
(lines went), so the file is imported again as a new version of its source: every line
left is a duplicate of a stored row, and survey, verify and doctor see it whole."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from .. import synapt_layout as layout
from ..journal.forget import FileCopy, FileOutcome, ForgetTarget
from .lines import Bad, classify
from .plan import Plan

# (the files it rewrote) -> None: imports them again (legacy.py passes the importer).
Reimport = Callable[[list[Path]], None]


def _forms(text: str) -> tuple[bytes, ...]:
    """The bytes `text` takes in a JSON line: escaped as synapt writes (ASCII), and raw."""
    escaped = json.dumps(text)[1:-1].encode("ascii")
    raw = text.encode("utf-8", "surrogatepass")
    return (escaped,) if escaped == raw else (escaped, raw)


class _Matcher:
    """Tells which forgotten version a line holds, cheaply for the lines that hold none."""

    def __init__(self, targets: tuple[ForgetTarget, ...]) -> None:
        self.by_id = {t.id: t for t in targets}
        # Every line synapt writes carries its timestamp verbatim; a line that has none of
        # theirs (and no escape that could spell one) is no copy of them.
        self.stamps = {json.dumps(t.timestamp)[1:-1].encode("ascii") for t in targets}
        self.needles = [(form, t) for t in targets for n in t.needles() for form in _forms(n)]

    def match(self, data: bytes) -> ForgetTarget | None:
        stamped = b"\\" in data or any(s in data for s in self.stamps)
        carrying = next((t for form, t in self.needles if form in data), None)
        if not stamped and carrying is None:
            return None
        fate = classify(data, True)
        if isinstance(fate, Bad):
            return carrying  # a damaged line that carries the text
        return self.by_id.get(fate.id)


def forget_copies(
    plan: Plan, targets: tuple[ForgetTarget, ...], *, scrub_sources: bool, reimport: Reimport
) -> FileOutcome:
    """Remove the store's own copies of `targets` (and, with `scrub_sources`, every copy)
    from the workspace's synapt stores; list the rest."""
    if not targets:
        return FileOutcome((), (), False)
    matcher = _Matcher(targets)
    copies: list[FileCopy] = []
    errors: list[str] = []
    rewritten: list[Path] = []
    seen: set[Path] = set()
    for store in plan.everything:
        path = store.path
        if path in seen:
            continue
        seen.add(path)
        try:
            found, changed = _cut_copies(path, matcher, scrub_sources)
        except OSError as exc:
            errors.append(f"{path}: {exc.strerror or exc}")
            continue
        copies += found
        if changed:
            rewritten.append(path)
    copies += _other_files(plan, matcher, seen, errors)
    reimported = False
    if rewritten:
        try:
            reimport(rewritten)
            reimported = True
        except Exception as exc:  # noqa: BLE001 - the rows are gone already: say, never lose it
            errors.append(f"re-importing {len(rewritten)} rewritten file(s) failed: {exc}")
    return FileOutcome(tuple(copies), tuple(errors), reimported)


# synapt's own caches of what it read from the journal, rewritten at every session start:
# a copy of forgotten text there is removed with the file (synapt makes it anew).
_CACHES = (("wake", "latest.md"),)
# Files and directories of a data directory that are no synapt copy of the journal: the
# store's own (its database, WAL and adapter state), and its sync state beside it
# (`<db>-sync/`), where Litestream's local copy of recent pages is the sync purge's to
# remove (sync/pause.py), which the forget's report states on its own lines.
_OURS = ("recall-sqlite.db", "workspace.json", "recall-sqlite-synapt.json")
_SCAN_LIMIT = 64 << 20


def _other_files(
    plan: Plan, matcher: _Matcher, buckets: set[Path], errors: list[str]
) -> list[FileCopy]:
    """synapt's other files in the workspace's data directories (its session-start wake
    text, its index, ...) that quote a forgotten version's text: a cache is removed, any
    other file listed (at the line of its first copy; line 0: the whole file went)."""
    found: list[FileCopy] = []
    forms = {form for form, _ in matcher.needles}
    for d in plan.walk.data_dirs:
        for top, dirs, names in os.walk(d.path):
            dirs[:] = [x for x in dirs if not x.startswith(_OURS)]
            for name in names:
                path = Path(top) / name
                if path in buckets or name.startswith(_OURS) or path.is_symlink():
                    continue
                try:
                    if path.stat().st_size > _SCAN_LIMIT:
                        continue
                    data = path.read_bytes()
                except OSError as exc:
                    errors.append(f"{path}: {exc.strerror or exc}")
                    continue
                hits = [data.find(f) for f in forms if f in data]
                if not hits:
                    continue
                target = next(t for form, t in matcher.needles if form in data)
                if (path.parent.name, name) in _CACHES:
                    try:
                        path.unlink()
                    except OSError as exc:
                        errors.append(f"{path}: {exc.strerror or exc}")
                        continue
                    found.append(FileCopy(str(path), 0, target.id.hex(), True, "cache"))
                else:
                    line = data.count(b"\n", 0, min(hits)) + 1
                    found.append(FileCopy(str(path), line, target.id.hex(), False, "other"))
    return found


def _cut_copies(path: Path, matcher: _Matcher, scrub_sources: bool) -> tuple[list[FileCopy], bool]:
    """The copies in one file, and whether it was rewritten (under synapt's lock)."""
    with open(path, "r+b") as f:
        layout.lock(f)
        data = f.read()
        lines = data.split(b"\n")
        keep: list[bytes] = []
        found: list[FileCopy] = []
        first_cut: int | None = None
        offset = 0
        last_kept = True
        for raw in lines[:-1] if data.endswith(b"\n") else lines:
            target = matcher.match(raw) if raw.strip() else None
            last_kept = target is None or not (target.own or scrub_sources)
            if not last_kept:
                assert target is not None
                found.append(FileCopy(str(path), len(keep) + 1, target.id.hex(), True))
                if first_cut is None:
                    first_cut = offset
            else:
                if target is not None:
                    found.append(FileCopy(str(path), len(keep) + 1, target.id.hex(), False))
                keep.append(raw)
            offset += len(raw) + 1
        if first_cut is None:
            return found, False
        text = b"".join(x + b"\n" for x in keep)
        if not data.endswith(b"\n") and last_kept and text:
            text = text[:-1]  # an unterminated last line stays unterminated
        f.seek(first_cut)
        f.write(text[first_cut:])
        f.truncate()
        f.flush()
        os.fsync(f.fileno())
    return found, True
