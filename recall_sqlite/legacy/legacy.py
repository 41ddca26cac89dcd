"""`store.legacy`: legacy JSONL stores of the store's workspace. Composition only: the plan
(every store the workspace has, where each goes) handed to survey, import and verify, and
the export back to files, each of which lives in its own module."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO

from .. import identity
from ..checks import require_int
from ..context import StoreContext
from ..errors import WorkspaceError
from ..journal.forget import FileCopy, FileOutcome, ForgetTarget
from ..limits import MAX_LINE_BYTES
from ..paths import idfile
from .admit import refuse_strangers
from .assign import KnownWorktree
from .copies import forget_copies
from .export import BucketsReport, ExportFormat, ExportReport, export, to_buckets
from .importer import CHUNK_LINES, Importer, ImportReport
from .mirror import OnLocked, append_own
from .plan import Plan, as_mapping, as_paths, make_plan
from .sources import (
    accounted,
    known_ids,
    recorded_keys,
    recorded_worktrees,
    sources_by_worktree,
    states,
)
from .survey import SurveyReport, survey
from .verify import Verifier, VerifyReport

Progress = Callable[[int, int], None]
# Import states (sources.states) in which a file still starts with what was imported.
_PREFIX_KEPT = frozenset(
    ("imported", "partly imported (file has more)", "import interrupted: run import again")
)
# One path, or an iterable of them (plan.as_paths checks either at run time).
Paths = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]


class Legacy:
    """Legacy stores of the store's workspace (`store.legacy`)."""

    def __init__(self, ctx: StoreContext, root: Path | None = None) -> None:
        self._ctx = ctx
        self._opened_at = root

    def root(self) -> Path:
        """The workspace root: where the store was opened, else the recorded root that
        exists and carries this workspace's id."""
        if self._opened_at is not None:
            return self._opened_at
        roots = identity.roots(self._ctx.db, self._ctx.workspace_pk)
        for r in roots:
            try:
                if (
                    Path(r).is_dir()
                    and idfile.read_workspace_id(Path(r)) == self._ctx.workspace_uuid
                ):
                    return Path(r)
            except WorkspaceError:
                continue
        for r in roots:
            if Path(r).is_dir():
                return Path(r)
        return Path(roots[0])

    def recorded(self) -> list[KnownWorktree]:
        return [
            KnownWorktree(w.key, w.name, w.root, w.pk)
            for w in identity.worktrees(self._ctx.db, self._ctx.workspace_pk)
        ]

    def plan(
        self,
        paths: Paths = (),
        *,
        mapping: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> Plan:
        """Every store of the workspace, the ones `paths` select and where each goes."""
        given, mapping = as_paths(paths), as_mapping(mapping)
        return make_plan(
            self.root(),
            given,
            recorded=self.recorded(),
            sources=recorded_worktrees(self._ctx.db, self._ctx.workspace_pk),
            mapping=mapping,
            cwd=cwd,
        )

    def sources_by_worktree(self) -> dict[str, int]:
        """worktree key -> how many imported files are filed under it."""
        keys = {w.pk: w.key for w in identity.worktrees(self._ctx.db, self._ctx.workspace_pk)}
        counts = sources_by_worktree(self._ctx.db, self._ctx.workspace_pk)
        return {keys[pk]: n for pk, n in counts.items() if pk in keys}

    def states(self, plan: Plan) -> dict[str, str]:
        """source key -> a short import state from size and mtime (no reading)."""
        return states(self._ctx.db, self._ctx.workspace_pk, plan.path_of)

    def survey(
        self,
        paths: Paths = (),
        *,
        mapping: Mapping[str, str] | None = None,
        progress: Progress | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> SurveyReport:
        """`survey()` with this workspace's worktrees and import states (reads only)."""
        plan = self.plan(paths, mapping=mapping, cwd=cwd)
        db, ws = self._ctx.db, self._ctx.workspace_pk
        states = self.states(plan)
        # A file rewritten since its import is read whole by the next import (as a new
        # version); only a file that kept its imported prefix has one to skip.
        kept = {k: n for k, n in accounted(db, ws).items() if states.get(k) in _PREFIX_KEPT}
        return survey(
            plan=plan,
            states=states,
            progress=progress,
            accounted=kept,
            known=lambda ids: known_ids(db, ws, ids),
        )

    def import_paths(
        self,
        paths: Paths = (),
        *,
        mapping: Mapping[str, str] | None = None,
        progress: Progress | None = None,
        chunk_lines: int = CHUNK_LINES,
        max_line: int = MAX_LINE_BYTES,
        cwd: str | os.PathLike[str] | None = None,
        force: bool = False,
        defer_indexes: bool = False,
        jobs: int | None = None,
    ) -> ImportReport:
        """Import every legacy journal `paths` select (none: every store of the workspace).
        Idempotent; safe to kill at any point and re-run; never writes to the source
        files. The report lists the workspace's stores still not imported. A given path
        that is no synapt journal nor holds one raises InvalidInputError before anything
        is written (`force`: take a stray file anyway; legacy/admit.py). `defer_indexes`:
        build the journal's head indexes after the rows, for a load no one reads
        meanwhile (a little faster; until they are built, a read of the newest entries or
        a search walks the journal: legacy/importer.py). `jobs`: worker processes that read,
        parse and identify the lines while this process writes (None: one per CPU, at
        most 4, where a worker would not run the caller's main script again: guard a
        script's own code with `if __name__ == "__main__"`; 1: none). A small load starts
        none; the store ends the same whatever the count (legacy/workers.py)."""
        if jobs is not None:
            jobs = require_int("jobs", jobs, minimum=1)
        given = as_paths(paths)
        plan = self.plan(given, mapping=mapping, cwd=cwd)
        refuse_strangers(plan, force=force)
        return Importer(self._ctx).run(
            plan,
            progress=progress,
            chunk_lines=chunk_lines,
            max_line=max_line,
            given=given,
            defer_indexes=defer_indexes,
            jobs=jobs,
        )

    def verify(
        self,
        paths: Paths = (),
        *,
        deep: bool = False,
        progress: Progress | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> VerifyReport:
        """Check every line of every store `paths` select (none: the whole workspace,
        which also fails for every store found but not imported)."""
        plan = self.plan(paths, cwd=cwd)
        return Verifier(self._ctx).run(plan, deep=deep, progress=progress)

    def append_own(
        self,
        path: str | os.PathLike[str],
        lines: Sequence[str],
        *,
        worktree: str | None = None,
        on_locked: OnLocked | None = None,
    ) -> bool:
        """Append `lines` (synapt's line format) to the synapt bucket at `path` under
        synapt's lock and account for them as the store's own (legacy/mirror.py): the
        adapter's mirror and `export --to-buckets` write through this."""
        return append_own(
            self._ctx,
            self.root(),
            Path(os.path.abspath(path)),
            lines,
            worktree=worktree,
            on_locked=on_locked,
        )

    def forget_copies(
        self, targets: tuple[ForgetTarget, ...], *, scrub_sources: bool = False
    ) -> FileOutcome:
        """journal.forget's reach into files (legacy/copies.py): remove the store's own
        copies of the forgotten versions from the workspace's synapt buckets, list the
        copies in the user's files (remove them too with `scrub_sources`), and import the
        rewritten files again."""
        recorded = recorded_keys(self._ctx)
        plan = self.plan()

        def reimport(paths: list[Path]) -> None:
            keys = {s.path: s.key for s in plan.everything}
            again = [p for p in paths if keys.get(p) in recorded]
            if again:
                self.import_paths(again)

        outcome = forget_copies(plan, targets, scrub_sources=scrub_sources, reimport=reimport)
        left = [c for c in outcome.copies if not c.removed and c.kind == "bucket"]
        if left:
            from .leftovers import mark_left

            mark_left(self._ctx, plan, left)
        return outcome

    def forgotten_copies(self) -> tuple[list[FileCopy], list[str]]:
        """Lines of the workspace's synapt journals that still hold a forgotten entry
        version (leftovers.py), and the files that could not be read: doctor's."""
        from .leftovers import leftovers

        return leftovers(self._ctx, self.plan())

    def export_to_buckets(self, *, worktree: str | None = None) -> BucketsReport:
        """`export --format synapt --to-buckets`: every worktree's versions appended to the
        bucket stock synapt reads from its root, those already there kept (export.py)."""

        def append(path: Path, lines: list[str], key: str) -> bool:
            return self.append_own(path, lines, worktree=key)

        return to_buckets(self._ctx, append=append, worktree=worktree)

    def export(
        self,
        target: str | os.PathLike[str] | IO[str],
        *,
        format: ExportFormat = "synapt",  # noqa: A002 - the CLI option's name
        worktree: str | None = None,
        all_worktrees: bool = False,
        force: bool = False,
    ) -> ExportReport:
        """Write the journal of the current worktree (or `worktree`, or the whole
        workspace) to a file, "-" (standard output) or a text stream: `synapt` as a bucket
        synapt 0.30.0 reads with the store's answers, `ndjson` with every field. Never
        replaces an existing file unless `force`; see legacy/export.py."""
        return export(
            self._ctx,
            target,
            format=format,
            worktree=worktree,
            all_worktrees=all_worktrees,
            force=force,
        )
