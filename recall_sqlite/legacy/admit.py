"""What an import takes: only what synapt wrote.

A path given by hand must be a synapt journal (a `journal.jsonl` where synapt lays its
journals out, or a file whose lines are synapt entries) or a directory holding synapt
stores. Anything else (a typo, `/etc/passwd`, a directory with no store) is refused before
anything is written: an import would otherwise quarantine every line of a stranger's file,
raw text included, into the store. `force` takes a stray file anyway (a bucket copied out
of its place, half of whose lines are damaged, say)."""

from __future__ import annotations

import json
from pathlib import Path

from .. import synapt_layout as layout
from ..errors import InvalidInputError
from .find import NO_JOURNAL, NOT_A_FILE, NOT_FOUND
from .plan import Plan

# How much of a stray file is read to judge it: enough lines to see what it is, bounded
# so a huge file costs nothing.
SAMPLE_LINES = 50
SAMPLE_BYTES = 1 << 20
_FIELDS = frozenset(layout.FIELDS)


def is_entry_line(line: bytes) -> bool:
    """A JSON object shaped like a synapt journal entry: a text timestamp, and mostly
    synapt's own fields."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return False
    if not isinstance(obj, dict) or not isinstance(obj.get("timestamp"), str):
        return False
    return 2 * len(_FIELDS.intersection(obj)) > len(obj)


def looks_like_journal(path: Path) -> bool:
    """Whether a file's lines are synapt entries: of its first SAMPLE_LINES non-blank
    lines, at least one and at least half are entries (a damaged line or two does not
    make a journal a stranger). An empty file is one (it brings nothing)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(SAMPLE_BYTES)
    except OSError:
        return True  # unreadable: the import reports it as such, not as a stranger
    lines = [x for x in head.split(b"\n") if x.strip()][:SAMPLE_LINES]
    if not lines:
        return True  # empty: nothing of a stranger's can reach the store
    entries = sum(1 for x in lines if is_entry_line(x))
    return entries > 0 and 2 * entries >= len(lines)


def refuse_strangers(plan: Plan, *, force: bool = False) -> None:
    """Raise InvalidInputError, naming each, for the given paths an import must not take:
    one that does not exist or holds no synapt store, and (unless `force`) a file outside
    synapt's layout whose lines are not synapt entries."""
    refused = [
        f"{p.path}: {p.reason}"
        for p in plan.problems
        if p.reason in (NOT_FOUND, NOT_A_FILE) or p.reason.startswith(NO_JOURNAL)
    ]
    if not force:
        refused += [
            f"{s.path}: not a synapt journal (not where synapt keeps one, and its lines are"
            " not synapt entries; --force imports it anyway)"
            for s in plan.stores
            if s.bucket.layout == "file" and not looks_like_journal(s.path)
        ]
    if refused:
        raise InvalidInputError(
            "refusing to import, nothing was written: " + "; ".join(refused[:5])
        )
