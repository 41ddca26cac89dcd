"""Lines of synapt's journals that still hold a forgotten entry version, for doctor.

A forget removes the store's own copies from synapt's buckets (copies.py), on this machine
and, since issue 32, on every machine that pulls it. What can still be left: a user's line
that forget listed and did not remove (without `--scrub-sources`), a file that could not be
rewritten, and the mirror lines of a forget a pull applied before pulls scrubbed files. An
import never brings such a line back (it is quarantined as 'forgotten', no byte kept), so
verify takes it for accounted; the text is still in the file, though.

Every line whose entry was forgotten is known by its place: the forget moved its record
to the quarantine as 'forgotten' (schema.sql's journal_entries_after_delete), and an
import of a line whose entry was forgotten before records it so. Only those lines are read
again, each checked against the tombstones by its content address.

A user's line that a forget looked at and left in place (it lists such a line, and removes
it only with `--scrub-sources`) is no leftover: the forget marks its record (`LEFT`), and
doctor names only the lines no forget has looked at (or could not rewrite)."""

from __future__ import annotations

from pathlib import Path

from ..context import StoreContext
from ..db import as_int
from ..journal.forget import FileCopy
from .lines import Bad, LineReader, classify
from .plan import Plan
from .sources import Tombstones

# The detail of a quarantined 'forgotten' line a forget left in place on purpose.
LEFT = "a line of a file the store did not write, left in place by forget (listed)"


def mark_left(ctx: StoreContext, plan: Plan, left: list[FileCopy]) -> None:
    """Mark the records of the lines a forget listed and left in place (a user's lines):
    they are the forget's decision, not a leftover for doctor to name."""
    keys = {str(s.path): s.key for s in plan.everything}
    rows = [(keys[c.path], c.line) for c in left if c.path in keys]
    if not rows:
        return
    with ctx.db.write() as conn:
        conn.executemany(
            "UPDATE quarantine SET detail = ? WHERE reason = 'forgotten' AND line = ?"
            " AND source_id = (SELECT id FROM import_sources WHERE workspace_id = ?"
            " AND path = ? AND superseded = 0)",
            [(LEFT, line, ctx.workspace_pk, key) for key, line in rows],
        )


def leftovers(ctx: StoreContext, plan: Plan) -> tuple[list[FileCopy], list[str]]:
    """The lines of the workspace's synapt stores (their current import records) that
    hold a forgotten version, and the files that could not be read."""
    ws = ctx.workspace_pk
    places: dict[str, set[int]] = {}
    for key, line in ctx.db.query(
        "SELECT s.path, q.line FROM quarantine q JOIN import_sources s ON s.id = q.source_id"
        " WHERE s.workspace_id = ? AND s.superseded = 0 AND q.reason = 'forgotten'"
        " AND q.detail <> ?",
        (ws, LEFT),
    ):
        places.setdefault(str(key), set()).add(as_int(line))
    if not places:
        return [], []
    tombstones = Tombstones(ctx.db, ws, ctx.workspace_uuid)
    found: list[FileCopy] = []
    errors: list[str] = []
    seen: set[Path] = set()
    for store in plan.everything:
        lines = places.get(store.key)
        if not lines or store.path in seen:
            continue
        seen.add(store.path)
        try:
            found += _holding(store.path, lines, tombstones)
        except OSError as exc:
            errors.append(f"{store.path}: {exc.strerror or exc}")
    return found, errors


def _holding(path: Path, lines: set[int], tombstones: Tombstones) -> list[FileCopy]:
    out = []
    last = max(lines)
    with open(path, "rb") as fh:
        for n, (_offset, data, _length, terminated) in enumerate(LineReader(fh, hashed=False), 1):
            if n > last:
                break
            if n not in lines or data is None:
                continue
            fate = classify(data, terminated)
            if not isinstance(fate, Bad) and tombstones.forgot(fate.id, fate.canon):
                out.append(FileCopy(str(path), n, fate.id.hex(), False))
    return out
