"""`recall-sqlite demo`: synapt's store split reproduced in a scratch git repository,
then migrated (survey, import, re-import, verify) and read from a subdirectory."""

from __future__ import annotations

import argparse
import os
from typing import Any

from . import _common as cli
from .import_ import format_import
from .survey import format_survey
from .verify import format_verify


def cmd_demo(args: argparse.Namespace) -> int:
    from .. import demo as legacy_demo

    with legacy_demo.demo_dir(args.dir, args.keep or bool(args.json)) as base:
        data = legacy_demo.run(base)
        kept = args.dir is not None or args.keep or bool(args.json)
        data["kept"] = kept
        cli.emit(args, data, format_demo(data))
    before = data["before"]
    ok = (
        data["verify"]["ok"]
        and data["import"]["ok"]
        and data["read_from_subdir"]["total"] == before["sessions_in_worktree"]
        and data["read_from_linked_subdir"]["total"]
        == before["sessions_in_workspace"] - before["sessions_in_worktree"]
    )
    return 0 if ok else 1


def format_demo(d: dict[str, Any]) -> str:
    before = d["before"]
    sub = os.path.relpath(d["subdir"], d["dir"])
    out = [
        "== The defect ==",
        "synapt 0.30.0 keeps its data in the directory a session ran from (in a plain git"
        " repository), so this workspace's history"
        f" ({'built with git' if d['git'] else 'git not found: a minimal .git written by hand'})"
        f" lies in {len(d['stores'])} stores:",
        *(f"  {s}" for s in d["stores"]),
        f"Run from {sub}/, synapt reads {before['store']} only:"
        f" {before['synapt_read_from_subdir_sessions']} of the worktree's"
        f" {before['sessions_in_worktree']} sessions"
        f" ({', '.join(before['session_ids']) or 'none'}); missing:"
        f" {', '.join(before['missing_session_ids']) or 'none'}"
        + (" (the newest among them)." if before["newest_missing"] else ".")
        + f" [{before['computed_by']}]",
        "",
        "== recall-sqlite survey   (writes nothing) ==",
        format_survey(d["survey"]),
        "",
        "== recall-sqlite import ==",
        format_import(d["import"]),
        "",
        "== recall-sqlite import   (again: nothing new) ==",
        format_import(d["reimport"]),
        "",
        "== recall-sqlite verify --deep ==",
        format_verify(d["verify"]),
    ]
    for key in ("read_from_subdir", "read_from_linked_subdir"):
        r = d[key]
        out += [
            "",
            f"== recall-sqlite journal read -n 20   (run from"
            f" {os.path.relpath(r['cwd'], d['dir'])}/) ==",
        ]
        out += [f"  {e['timestamp'][:16]}  {e['session_id']}  {e['focus']}" for e in r["entries"]]
        out.append(
            f"{len(r['entries'])} of {r['total']} sessions in worktree {r['worktree']!r}"
            f" (the whole history of this worktree); {r['elsewhere']['other_worktrees']}"
            " more in other worktrees (--all-worktrees)."
        )
    out.append("")
    out.append(
        f"Files kept in {d['dir']}"
        if d.get("kept")
        else "(temporary files removed; pass DIR or --keep to look at them with sqlite3)"
    )
    return "\n".join(out)


def register(subparsers: Any, json_parent: argparse.ArgumentParser) -> None:
    d = subparsers.add_parser(
        "demo",
        parents=[json_parent],
        help="reproduce synapt's store split in a scratch git repository and migrate it",
        description="Builds a git repository with a linked worktree and the stores synapt "
        "0.30.0 leaves when run from the root, subdirectories and the linked "
        "worktree (an auto stub and its enriched version, a cut-off line), then "
        "runs survey, import, re-import and verify, and reads from a "
        "subdirectory.",
    )
    d.add_argument(
        "dir",
        nargs="?",
        metavar="DIR",
        help="build here (an empty or new directory; kept) instead of a temp dir",
    )
    d.add_argument("--keep", action="store_true", help="keep the temporary directory")
    d.set_defaults(func=cmd_demo)
