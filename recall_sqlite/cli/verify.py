"""`recall-sqlite verify`: check an import against the files as they are now."""

from __future__ import annotations

import argparse
from typing import Any

from . import _common as cli


def cmd_verify(args: argparse.Namespace) -> int:
    bar = cli.ProgressBar(args, "verify")
    try:
        with cli.open_from_args(args, read_only=True) as store:
            report = store.legacy.verify(args.paths, deep=args.deep, progress=bar, cwd=args.cwd)
    finally:
        bar.close()
    data = report.to_dict()
    cli.emit(args, data, format_verify(data))
    return 0 if report.ok else 1


def format_verify(d: dict[str, Any]) -> str:
    out = []
    for s in d["sources"]:
        out.append(
            f"  {s['status']:<12} {s['bucket']:<16} {cli.counted(s['file_lines'], 'line'):>13}: "
            f"{s['imported']} imported, {s['duplicates']} duplicate{_before(s)}, "
            f"{s['quarantined']} quarantined, {s['unaccounted']} unaccounted"
        )
        out.append(
            f"      {s['key'] or s['path']}" + (f" -> {s['worktree']}" if s["worktree"] else "")
        )
        if s["detail"]:
            out.append(f"      {s['detail']}")
    verdict = "OK: every line of every store is accounted for" if d["ok"] else "NOT OK"
    out.append(
        f"{verdict} ({d['lines_total']} lines: {d['imported']} imported, "
        f"{d['duplicates']} duplicate(s), {d['quarantined']} quarantined, "
        f"{d['unaccounted']} unaccounted, {d['changed']} file(s) changed, "
        f"{d['not_imported']} store(s) found but not imported, {d['interrupted']}"
        " interrupted)."
    )
    if d.get("imported_before"):
        n = d["imported_before"]
        out.append(
            f"{n} of the duplicates {'was' if n == 1 else 'were'} imported from the same file"
            " by an earlier import (the file changed and was read again)."
        )
    out.extend(cli.problem_lines(d))
    return "\n".join(out)


def _before(counts: dict[str, Any]) -> str:
    """A file read again after it changed: its lines stored by the earlier import of it are
    duplicates now, and said to be that rather than something lost."""
    n = counts.get("imported_before", 0)
    return f" ({n} imported from this file by an earlier import)" if n else ""


def register(subparsers: Any, json_parent: argparse.ArgumentParser) -> None:
    v = subparsers.add_parser(
        "verify",
        parents=[json_parent],
        help="check an import against the files as they are",
        description="Exit 1 when any line is unaccounted for or a file changed since import.",
    )
    v.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="default: the whole workspace (a store found but not imported fails)",
    )
    v.add_argument(
        "--deep",
        action="store_true",
        help="also re-read every line and match it to its recorded row",
    )
    v.set_defaults(func=cmd_verify)
