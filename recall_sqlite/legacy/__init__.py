"""Migrating synapt's JSONL journal buckets into the store, and the store's lines back out.

find.py      every data directory and checkout of a workspace, nested and linked, and the
             journal files of a path given by hand (filesystem; synapt_layout's rules)
assign.py    the one rule: which worktree a store's rows belong to, and why
plan.py      the stores the paths select, their bookkeeping keys and assignments
admit.py     what an import takes: synapt's journals, never a stranger's file
lock.py      one import of a workspace at a time
rehome.py    move an imported source's rows to another worktree; `worktree list`
lines.py     read lines with offsets and classify each: an entry row or a quarantine reason
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
"""

from __future__ import annotations

from .assign import Assignment, KnownWorktree, assign, parse_mapping
from .find import Bucket, Checkout, Discovery, Problem, Walk, discover, owning_root, walk
from .importer import ImportReport, SourceResult
from .legacy import Legacy
from .plan import Plan, PlannedStore, make_plan
from .survey import BucketSurvey, SurveyReport, survey
from .verify import SourceCheck, VerifyReport

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
