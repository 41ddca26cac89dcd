"""`store.legacy`: legacy JSONL buckets of the store's workspace. Composition only: the
workspace's worktrees (recorded ones and checkouts found on disk) handed to survey, import
and verify, each of which lives in its own module."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from .. import identity
from ..context import StoreContext
from .assign import KnownWorktree, checkouts_on_disk
from .importer import CHUNK_LINES, Importer, ImportReport
from .lines import MAX_LINE_BYTES
from .sources import states
from .survey import SurveyReport, survey
from .verify import Verifier, VerifyReport

Progress = Callable[[int, int], None]


class Legacy:
    """Legacy buckets of the store's workspace (`store.legacy`)."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def _root(self) -> Path | None:
        roots = identity.roots(self._ctx.db, self._ctx.workspace_pk)
        for r in roots:
            if Path(r).is_dir():
                return Path(r)
        return Path(roots[0]) if roots else None

    def worktrees(self) -> tuple[list[KnownWorktree], KnownWorktree]:
        """(the workspace's worktrees: recorded ones, then checkouts found on disk; main)."""
        known = [KnownWorktree(w.key, w.name, w.root, w.pk)
                 for w in identity.worktrees(self._ctx.db, self._ctx.workspace_pk)]
        root = self._root()
        main = next((w for w in known if w.key == "."), None)
        if main is None:
            name = root.name if root else "."
            main = KnownWorktree(".", name, str(root) if root else None, None)
            known.insert(0, main)
        if root is not None:
            keys = {w.key for w in known}
            known += [w for w in checkouts_on_disk(root) if w.key not in keys]
        return known, main

    def states(self) -> dict[str, str]:
        """path -> a short import state from size and mtime (no reading)."""
        return states(self._ctx.db, self._ctx.workspace_pk)

    def survey(self, paths: Iterable[str | os.PathLike[str]], *,
               mapping: Mapping[str, str] | None = None,
               progress: Progress | None = None) -> SurveyReport:
        """`survey()` with this workspace's worktrees and import states (reads only)."""
        known, main = self.worktrees()
        return survey(paths, known=known, main=main, mapping=mapping, states=self.states(),
                      progress=progress)

    # -- import ----------------------------------------------------------------------------

    def import_paths(self, paths: Iterable[str | os.PathLike[str]], *,
                     mapping: Mapping[str, str] | None = None,
                     progress: Progress | None = None, chunk_lines: int = CHUNK_LINES,
                     max_line: int = MAX_LINE_BYTES) -> ImportReport:
        """Import every legacy journal at `paths` into this workspace. Idempotent; safe to
        kill at any point and re-run; never writes to the source files."""
        return Importer(self._ctx, self.worktrees()).run(
            paths, mapping=mapping, progress=progress, chunk_lines=chunk_lines,
            max_line=max_line)

    def verify(self, paths: Iterable[str | os.PathLike[str]], *, deep: bool = False,
               progress: Progress | None = None) -> VerifyReport:
        """Check every line of every legacy journal at `paths` against the import records
        (see verify.py); `deep` also re-reads every line."""
        return Verifier(self._ctx).run(paths, deep=deep, progress=progress)
