"""Migrating synapt's legacy JSONL journal buckets into the store.

walk.py      every data directory and checkout of a workspace, nested and linked (filesystem)
discover.py  the journal files of a data directory, a bucket dir or given by path
assign.py    the one rule: which worktree a store's rows belong to, and why
plan.py      the stores the paths select, their bookkeeping keys and assignments
lock.py      one import of a workspace at a time
rehome.py    move an imported source's rows to another worktree; `worktree list`
lines.py     read lines with offsets and classify each: an entry row or a quarantine reason
survey.py    characterise buckets, writing nothing
sources.py   the per-file import bookkeeping import and verify share
importer.py  import every line, chunk by chunk, resumable after a kill
verify.py    check an import against the files as they are now
family.py    `store.legacy`: the above for the store's workspace
export.py    write the store back out: a synapt bucket, or ndjson for other tools
demo.py      `recall-sqlite demo`: the layout synapt 0.30.0 writes, migrated
"""

from __future__ import annotations

from .assign import Assignment, KnownWorktree, assign, parse_mapping
from .discover import Bucket, Discovery, Problem, discover, owning_root
from .family import Legacy
from .importer import ImportReport, SourceResult
from .plan import Plan, PlannedStore, make_plan
from .survey import BucketSurvey, SurveyReport, survey
from .verify import SourceCheck, VerifyReport
from .walk import Checkout, Walk, walk

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
