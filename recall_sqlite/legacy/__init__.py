"""Migrating synapt's JSONL journal buckets into the store, and the store's lines back out.

find.py      every data directory and checkout of a workspace, nested and linked, and the
             journal files of a path given by hand (filesystem; synapt_layout's rules)
assign.py    the one rule: which worktree a store's rows belong to, and why
plan.py      the stores the paths select, their bookkeeping keys and assignments
admit.py     what an import takes: synapt's journals, never a stranger's file
lock.py      one import of a workspace at a time
rehome.py    move an imported source's rows to another worktree; `worktree list`
lines.py     read lines with offsets and classify each: an entry row or a quarantine reason
workers.py   the lines' parse, canonical form and ids in worker processes, taken in order
survey.py    characterise buckets, writing nothing
sources.py   the per-file import bookkeeping import and verify share
chunks.py    one source read from a position and committed chunk by chunk
importer.py  import every line, chunk by chunk, resumable after a kill
verify.py    check an import against the files as they are now
mirror.py    the store's own lines in synapt's buckets, accounted for as they are written
copies.py    forget in files: the store's copies removed, the others listed (or removed)
leftovers.py lines of synapt's journals still holding a forgotten version (doctor)
export.py    write the store back out: a synapt bucket, or ndjson for other tools
legacy.py    `store.legacy`: the above for the store's workspace

The names of the modules that need the store (import, verify, `store.legacy`) are loaded on
first use (PEP 562), as the package's own face does: an import's worker processes load
lines.py and what it needs (workers.py), not the store around them.
"""

from __future__ import annotations

from .assign import Assignment, KnownWorktree, assign, parse_mapping
from .find import Bucket, Checkout, Discovery, Problem, Walk, discover, owning_root, walk
from .plan import Plan, PlannedStore, make_plan
from .survey import BucketSurvey, SurveyReport, survey

TYPE_CHECKING = False


def __getattr__(name: str) -> object:
    # (Literal imports, one per module: the architecture test reads them.)
    value: object
    if name in ("ImportReport", "SourceResult"):
        from . import importer

        value = getattr(importer, name)
    elif name == "Legacy":
        from .legacy import Legacy

        value = Legacy
    elif name in ("SourceCheck", "VerifyReport"):
        from . import verify

        value = getattr(verify, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from .importer import ImportReport as ImportReport
    from .importer import SourceResult as SourceResult
    from .legacy import Legacy as Legacy
    from .verify import SourceCheck as SourceCheck
    from .verify import VerifyReport as VerifyReport

__all__ = [
    "Assignment",
    "Bucket",
    "BucketSurvey",
    "Checkout",
    "Discovery",
    "ImportReport",
    "KnownWorktree",
    "Legacy",
    "Plan",
    "PlannedStore",
    "Problem",
    "SourceCheck",
    "SourceResult",
    "SurveyReport",
    "VerifyReport",
    "Walk",
    "assign",
    "discover",
    "make_plan",
    "owning_root",
    "parse_mapping",
    "survey",
    "walk",
]
