"""`recall-sqlite import`: every line of the workspace's synapt journals into the store.
(The module is `import_`: `import` is a keyword.)"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any

from . import _common as cli


def cmd_import(args: argparse.Namespace) -> int:
    from ..legacy.admit import refuse_strangers
    from ..legacy.plan import make_plan, resolve_root
    from ..legacy.workers import default_jobs

    mapping = cli.mapping_of(args)
    # Nothing to import: say why, and open (or mint) no store for it.
    found = make_plan(resolve_root(args.cwd), args.paths, mapping=mapping, cwd=args.cwd)
    refuse_strangers(found, force=args.force)
    if not found.stores:
        data = {
            "ok": False,
            "lines_total": 0,
            "imported": 0,
            "duplicates": 0,
            "quarantined": 0,
            "sources": [],
            "not_imported": [],
            "problems": [p.to_dict() for p in found.problems],
        }
        cli.emit(args, data, "Nothing to import.\n" + "\n".join(cli.problem_lines(data)))
        return 1
    bar = cli.ProgressBar(args, "import")
    # The command's own script is guarded for the workers' start (scripts/recall-sqlite),
    # so the default count is the library's without its caution about unknown scripts.
    jobs = args.jobs if args.jobs is not None else default_jobs()
    try:
        with cli.open_from_args(args) as store, _stopped_as_by_ctrl_c():
            report = store.legacy.import_paths(
                args.paths,
                mapping=mapping,
                progress=bar,
                cwd=args.cwd,
                force=args.force,
                jobs=jobs,
                defer_indexes=args.defer_indexes,
            )
    finally:
        bar.close()
    data = report.to_dict()
    cli.emit(args, data, format_import(data))
    return 0 if report.ok else 1


@contextlib.contextmanager
def _stopped_as_by_ctrl_c() -> Iterator[None]:
    """SIGTERM and SIGHUP (a closed terminal) stop an import as Ctrl-C does: the chunk
    being written rolls back, the run is recorded as interrupted and the head indexes an
    import with --defer-indexes builds after its rows are built on the way out
    (journal/deferred.py),
    where the signal's default action would end the process with them unbuilt."""
    import signal

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    caught = (signal.SIGTERM, signal.SIGHUP)
    before = [signal.signal(s, stop) for s in caught]
    try:
        yield
    finally:
        for s, handler in zip(caught, before, strict=True):
            signal.signal(s, handler)


def format_import(d: dict[str, Any]) -> str:
    out = [f"Import run {d['run_id']} into workspace {d['workspace_id']} ({d['database']})"]
    for s in d["sources"]:
        head = f"  {s['bucket']:<16} -> {s['worktree']:<12} {s['action']:<9} "
        if s["action"] == "unchanged":
            # Nothing read this run: its lines, not a "0 lines" that reads as lost ones.
            lines = cli.counted(s["total_lines"], "line")
            line = head + f"{lines:>13}: all accounted for by earlier imports"
        else:
            line = head + (
                f"{cli.counted(s['lines'], 'line'):>13}: {s['imported']} new,"
                f" {s['duplicates']} duplicate,"
                f" {s['quarantined']} quarantined"
            )
        out.append(line)
        if s["note"]:
            out.append(f"      {s['note']}")
    out.append(
        f"Read {d['lines_total']} line(s): {d['imported']} new row(s), {d['duplicates']}"
        f" duplicate(s), {d['quarantined']} quarantined; {d['unchanged_files']} file(s)"
        f" unchanged since the last import. {d['accounted_lines']} line(s) accounted for"
        " in all."
    )
    if d.get("moved") or d.get("stayed"):
        out.append(
            f"Re-homed: {d['moved']} entry version(s) moved to the worktree --map names;"
            f" {d['stayed']} left where another source (or a live write) put them."
        )
    if d.get("waited"):
        out.append("(Another import of this workspace ran first; this one waited for it.)")
    if d.get("not_imported"):
        out.append(
            f"INCOMPLETE: {len(d['not_imported'])} store(s) of this workspace are not imported:"
        )
        out.extend(
            f"  {x['path']}  ({x['bucket']} -> {x['worktree']}: {x['why']})"
            for x in d["not_imported"]
        )
    out.extend(cli.problem_lines(d))
    return "\n".join(out)


def register(subparsers: Any, json_parent: argparse.ArgumentParser) -> None:
    i = subparsers.add_parser(
        "import",
        parents=[json_parent],
        help="import legacy JSONL buckets into the store",
        description="Import every line: new entries, duplicates of stored ones, or "
        "quarantined with the reason. Re-runnable, resumable after a kill; "
        "never modifies the source files.",
    )
    i.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="default: every store of the current directory's workspace",
    )
    i.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="BUCKET=WORKTREE",
        help="put a bucket's entries in this worktree (key or name); on a "
        "source already imported, moves its rows there",
    )
    i.add_argument(
        "--force",
        action="store_true",
        help="import a file outside synapt's layout even if its lines are not synapt entries",
    )
    i.add_argument(
        "--jobs",
        type=cli.positive_int,
        default=None,
        metavar="N",
        help="worker processes that read and parse the lines while this one writes"
        " (default: one per CPU, at most 4; 1: none). A small import starts none;"
        " the store ends the same whatever N",
    )
    i.add_argument(
        "--defer-indexes",
        action="store_true",
        help="build the journal's head indexes after the rows: a little faster for a large"
        " first import that no one reads meanwhile (until they are built, reading the newest"
        " entries and searching walk the whole journal)",
    )
    i.set_defaults(func=cmd_import)
