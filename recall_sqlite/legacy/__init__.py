"""Migrating synapt's legacy JSONL journal buckets into the store.

discover.py  find journal files: data directories, buckets, single files (filesystem only)
assign.py    which worktree a bucket belongs to; checkouts found on disk
lines.py     read lines with offsets and classify each: an entry row or a quarantine reason
survey.py    characterise buckets, writing nothing
sources.py   the per-file import bookkeeping import and verify share
importer.py  import every line, chunk by chunk, resumable after a kill
verify.py    check an import against the files as they are now
family.py    `store.legacy`: the above for the store's workspace
demo.py      `recall-sqlite demo`: the bucket split reproduced and migrated
"""

from __future__ import annotations

from .assign import Assignment, KnownWorktree, assign, parse_mapping
from .discover import Bucket, Discovery, Problem, discover, owning_root
from .family import Legacy
from .importer import ImportReport, SourceResult
from .survey import BucketSurvey, SurveyReport, survey
from .verify import SourceCheck, VerifyReport

__all__ = [
    "Assignment", "Bucket", "BucketSurvey", "Discovery", "ImportReport", "KnownWorktree",
    "Legacy", "Problem", "SourceCheck", "SourceResult", "SurveyReport", "VerifyReport",
    "assign", "discover", "owning_root", "parse_mapping", "survey",
]
