"""The value-class rule (ARCHITECTURE.md, "Value classes: which to use"), held: every class
of the package is exactly one kind, and a value has a real repr and equality.

The kinds: an exception (a RecallError), a Record/Frozen value (_record.py), a frozen
dataclass, a mutable dataclass being filled in (listed below, with why), a NamedTuple, an
Enum, a Protocol, private working state (a name that starts with `_`, or listed below
with why), or a service (holds a connection, files, a process or a remote: listed below).
A class that is none of these fails the test with its name.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import pkgutil
from typing import Any

import pytest

import recall_sqlite
from recall_sqlite._record import Record
from recall_sqlite.errors import RecallError

# Families and faces: each holds a connection, files, a process or a remote.
SERVICES = {
    "context.StoreContext",  # the connection, with the identity as keys
    "db.Database",
    "store.Store",
    "journal.journal.Journal",
    "journal.host.JournalHost",
    "summaries.Summaries",
    "cursors.Cursors",
    "vectors.vectors.Vectors",
    "legacy.legacy.Legacy",
    "legacy.importer.Importer",  # one import: the store and the source files
    "legacy.chunks.Chunker",  # one source read and committed chunk by chunk
    "legacy.verify.Verifier",
    "legacy.lines.LineReader",  # an open file
    "legacy.workers.ParsePool",  # an import's worker processes
    "legacy.sources.Tombstones",  # read from the store for one import
    "sync.sync.Sync",
    "sync.state.SyncState",  # the `<db>-sync/` files
    "sync.peers.PeerBook",  # peers.json
    "sync.litestream.Replicator",  # a Litestream process
    "sync.run.Supervisor",
    "sync.owner.Claim",  # the one-writer claim on a replica
    "sync.pause.Hold",
    "sync.remote_base.Remote",
    "sync.remote_file.FileRemote",
    "sync.remote_s3.S3Remote",
    "sync.remote_sftp.SftpRemote",
    "cli._common.Parser",  # argparse's parser
    "cli._common.ProgressBar",  # a terminal
    "agents.kept.KeptStore",  # an open read-only store kept between an MCP server's reads
}

# Mutable working state under a public name, and why it is neither a value nor private.
WORKING_STATE = {
    "cli._show.Options": "argparse's Namespace for a command line read without argparse",
    "sync.run.StopFlag": "set from a signal handler while `sync run` waits",
    "sync.watch.Watch": "the peers' replica positions as last read by `sync run`",
    "sync.watch.Pace": "when `sync run` may pull next after a peer's replica moved",
    "vectors.matrix.Matrix": "the vector matrix, caught up in place with the change log",
    "vectors.matrix.Outside": "kept beside a Matrix and caught up with it",
    "synapt.lazy.Versions": "the list synapt's reader gets (a list it mutates), tagged",
    "synapt.startup.Served": "the list a served session start returns, tagged with its view",
    "synapt.startup.View": "what one served session start knows, filled in as synapt reads",
    "paths.storefile.StoreFile": "the store file through one open: moved aside, read-only",
    "db.Shared": "one shared write transaction of a Database: open or not",
    "journal.bulk.Batch": "journal rows added in parts, numbered, until written as one",
    "sync.peer_rows.Tally": "what one merge refused and applied, counted as it goes",
}

# Mutable dataclasses: a report or a plan being filled in, and what fills it.
FILLED_IN = {
    "legacy.importer.ImportReport": "an import, source by source",
    "legacy.importer.SourceResult": "one source's import, chunk by chunk",
    "legacy.chunks.RunState": "one source's run, chunk by chunk",
    "legacy.survey.SurveyReport": "the survey, bucket by bucket",
    "legacy.survey.BucketSurvey": "one bucket's survey, line by line",
    "legacy.survey.Pending": "the lines an import would take, counted as read",
    "legacy.verify.VerifyReport": "verify, source by source",
    "legacy.verify.SourceCheck": "one source's check, line by line",
    "legacy.find.Walk": "the walk of a workspace's directories",
    "legacy.find.Discovery": "the buckets and problems found under the paths given",
    "legacy.plan.Plan": "the stores a migration selects, then their keys",
    "legacy.sources.Source": "a source file's current version, as an import advances it",
    "search.fusion.Candidate": "a hit's text and vector ranks, then its fused score",
    "vectors.matrix.MatrixCache": "the per-scope matrices, built and refreshed on use",
    "sync.state.SyncConfig": "what `sync init` chose; `sync run --pull-every` adjusts it",
    "synapt.lazy.JournalEntry": "synapt's own JournalEntry (its dataclass), read lazily",
}


SKIPPED: set[str] = set()  # modules that need numpy, where it is not installed


def _modules() -> list[Any]:
    found = [recall_sqlite]
    for info in pkgutil.walk_packages(recall_sqlite.__path__, "recall_sqlite."):
        if info.name.endswith("__main__"):
            continue  # running it is the command
        try:
            found.append(importlib.import_module(info.name))
        except ModuleNotFoundError as exc:
            if exc.name != "numpy":
                raise
            SKIPPED.add(info.name.removeprefix("recall_sqlite."))
    return found


def _classes() -> dict[str, type]:
    out: dict[str, type] = {}
    for module in _modules():
        for obj in vars(module).values():
            if inspect.isclass(obj) and obj.__module__ == module.__name__:
                out[f"{module.__name__.removeprefix('recall_sqlite.')}.{obj.__qualname__}"] = obj
    return out


CLASSES = _classes()


def kind(name: str, cls: type) -> str | None:
    """The one kind of a class, or None (unclassified)."""
    short = cls.__qualname__.rsplit(".", 1)[-1]
    if issubclass(cls, BaseException):
        return "exception" if issubclass(cls, RecallError) or short.startswith("_") else None
    if issubclass(cls, Record):
        return "record"
    if dataclasses.is_dataclass(cls):
        frozen = cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
        return "dataclass" if frozen else "filled-in" if name in FILLED_IN else None
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return "namedtuple"
    if issubclass(cls, enum.Enum):
        return "enum"
    if getattr(cls, "_is_protocol", False):
        return "protocol"
    if name in SERVICES:
        return "service"
    if short.startswith("_") or name in WORKING_STATE:
        return "working-state"
    return None


def test_the_package_has_classes_to_classify() -> None:
    assert len(CLASSES) > 150
    assert "legacy.export.ExportReport" in CLASSES and "store.Store" in CLASSES


def test_every_class_is_classified() -> None:
    unclassified = sorted(name for name, cls in CLASSES.items() if kind(name, cls) is None)
    assert not unclassified, (
        "a public value is a dataclass (frozen) or a Record/Frozen (on the start path); a"
        " mutable dataclass is listed in FILLED_IN, a plain class in SERVICES or"
        " WORKING_STATE (with why): " + ", ".join(unclassified)
    )


def test_each_list_names_classes_of_its_kind_only() -> None:
    """A listed name that is gone, or that is now of another kind, is a stale entry."""
    for listed, expected in [
        (SERVICES, "service"),
        (WORKING_STATE, "working-state"),
        (FILLED_IN, "filled-in"),
    ]:
        wrong = {
            n: kind(n, CLASSES[n]) if n in CLASSES else "gone"
            for n in listed
            if n.rsplit(".", 1)[0] not in SKIPPED
        }
        assert {n: k for n, k in wrong.items() if k != expected} == {}


def test_a_service_or_working_state_is_no_value_class() -> None:
    """One kind each: a service is not also a Record or a dataclass (then it is a value)."""
    for name in [*SERVICES, *WORKING_STATE]:
        if name not in CLASSES:
            continue  # its module needs numpy (the list test says if it is gone)
        cls = CLASSES[name]
        assert not issubclass(cls, Record) and not dataclasses.is_dataclass(cls), name


def _values() -> list[str]:
    return sorted(
        name
        for name, cls in CLASSES.items()
        if kind(name, cls) in ("record", "dataclass", "filled-in", "namedtuple")
    )


@pytest.mark.parametrize("name", _values())
def test_a_value_shows_its_fields_and_compares_by_them(name: str) -> None:
    """Every value class has a repr of its own (never `<... object at 0x...>`) and an
    equality of its own (never identity)."""
    cls = CLASSES[name]
    assert cls.__repr__ is not object.__repr__, name
    assert cls.__eq__ is not object.__eq__, name


def test_reports_repr_and_compare_as_values() -> None:
    from recall_sqlite.legacy.export import BucketsReport, BucketWrite, ExportReport
    from recall_sqlite.scope import Keys
    from recall_sqlite.store import WorktreeForgotten

    fields: dict[str, Any] = {
        "path": "-",
        "format": "synapt",
        "lines": 2,
        "worktrees": ["."],
        "all_worktrees": False,
        "sessions": 1,
        "extra_dropped": 0,
        "workspace_id": "w",
    }
    report = ExportReport(**fields)
    assert report == ExportReport(**fields) and repr(report).startswith("ExportReport(path='-'")
    assert report.to_dict() == fields
    write = BucketWrite("b.jsonl", ["."], 1, 2, 0, True)
    assert BucketsReport([write], [], "w").to_dict()["appended"] == 2
    assert Keys(1, None, "main", True) == Keys(1, None, "main", True)
    assert "branch='main'" in repr(Keys(1, None, "main", True))
    assert repr(WorktreeForgotten("@x", True, None)) == (
        "WorktreeForgotten(key='@x', removed=True, forget=None)"
    )
    with pytest.raises(AttributeError):
        report.lines = 3  # type: ignore[misc]
