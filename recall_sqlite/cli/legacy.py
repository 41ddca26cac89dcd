"""`recall-sqlite survey | import | verify | demo`: migrating legacy JSONL buckets.

Thin, like the rest of the CLI: each command is one call into `legacy.py` plus formatting.
Exit status: 0 when everything given was handled, 1 when something needs attention (a path
with no journal, an unreadable file, a failed or unverifiable source), 2 for usage errors.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from ..errors import RecallError
from . import _common as cli


def register(subparsers: Any, json_parent: argparse.ArgumentParser) -> None:
    s = subparsers.add_parser(
        "survey",
        parents=[json_parent],
        help="characterise legacy JSONL buckets (writes nothing)",
        description="Per bucket: lines, valid entries, malformed lines by reason, sessions, "
        "date range, branches, auto/enriched; across buckets: duplicates, shared "
        "sessions, differing versions and the rows an import would create.",
    )
    s.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="default: every store of the current directory's workspace; or a "
        "directory of it, a .synapt/recall directory, journal.jsonl files",
    )
    s.add_argument("--map", action="append", default=[], metavar="BUCKET=WORKTREE")
    s.set_defaults(func=cmd_survey)

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
    i.set_defaults(func=cmd_import)

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


# -- helpers -----------------------------------------------------------------------------


class _Bar:
    """A one-line progress bar on stderr, drawn only on a terminal and never with --json."""

    def __init__(self, args: argparse.Namespace, label: str) -> None:
        self.on = not getattr(args, "json", False) and sys.stderr.isatty()
        self.label = label
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.on or (now - self._last < 0.1 and done < total):
            return
        self._last = now
        frac = done / total if total else 1.0
        width = 30
        filled = int(frac * width)
        sys.stderr.write(
            f"\r{self.label} [{'#' * filled}{'-' * (width - filled)}]"
            f" {frac:4.0%} {done / 2**20:8.1f}/{total / 2**20:.1f} MiB"
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self.on:
            sys.stderr.write("\r" + " " * 79 + "\r")
            sys.stderr.flush()


def _open(args: argparse.Namespace, *, read_only: bool = False) -> Any:
    """The store of the current directory's workspace (or --cwd's): never the directory
    that happens to hold a legacy store."""
    return cli.open_from_args(args, read_only=read_only)


def _mapping(args: argparse.Namespace) -> dict[str, str]:
    from ..legacy import parse_mapping

    return parse_mapping(args.map)


def _problems(data: dict[str, Any]) -> list[str]:
    return [f"  ! {p['path']}: {p['reason']}" for p in data.get("problems", [])]


# -- survey ------------------------------------------------------------------------------


def cmd_survey(args: argparse.Namespace) -> int:
    from ..legacy import survey
    from ..legacy.plan import resolve_root

    mapping = _mapping(args)
    bar = _Bar(args, "survey")
    try:
        try:
            # Read-only: a store that exists tells the worktrees and what was imported.
            store = _open(args, read_only=True)
        except RecallError:
            store = None
        if store is not None:
            with store:
                report = store.legacy.survey(
                    args.paths, mapping=mapping, progress=bar, cwd=args.cwd
                )
        else:
            report = survey(
                args.paths, mapping=mapping, progress=bar, root=resolve_root(args.cwd), cwd=args.cwd
            )
    finally:
        bar.close()
    data = report.to_dict()
    cli.emit(args, data, format_survey(data))
    return 1 if data["problems"] or data["ambiguous"] else 0


def format_survey(d: dict[str, Any]) -> str:
    if not d["buckets"]:
        return "\n".join(["No legacy journal found.", *_problems(d)])
    out = [
        f"Survey of {len(d['buckets'])} legacy bucket file(s)"
        + (f" of workspace {d['root']}" if d["root"] else "")
        + " (nothing was written)",
        "",
    ]
    head = (
        "BUCKET",
        "LINES",
        "VALID",
        "BAD",
        "DUPS",
        "SESSIONS",
        "FIRST",
        "LAST",
        "AUTO",
        "ENRICHED",
        "-> WORKTREE",
    )
    rows = [head]
    for b in d["buckets"]:
        rows.append(
            (
                b["bucket"],
                str(b["lines"]),
                str(b["valid"]),
                str(b["quarantined"]),
                str(b["duplicates"]),
                str(b["sessions"]),
                (b["first"] or "-")[:10],
                (b["last"] or "-")[:10],
                str(b["auto"]),
                str(b["enriched"]),
                str(b["worktree"]),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        out.append(
            "  ".join(
                c.ljust(w) if i in (0, 6, 7, 10) else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            ).rstrip()
        )
    out.append("")
    for b in d["buckets"]:
        notes = []
        if b["malformed"]:
            notes.append("malformed: " + ", ".join(f"{k} {v}" for k, v in b["malformed"].items()))
        if b["branches"]:
            notes.append(
                "branches: " + ", ".join(f"{k or '(none)'} {v}" for k, v in b["branches"].items())
            )
        if b["note"]:
            notes.append(f"-> {b['worktree']}: {b['note']}")
        if b["import_state"]:
            notes.append(f"store: {b['import_state']}")
        if b["error"]:
            notes.append(f"error: {b['error']}")
        out.append(f"{b['bucket']} ({b['key'] or b['path']})")
        out.extend(f"    {n}" for n in notes)
    out.append("")
    out.append(
        f"Across buckets: {d['lines_total']} lines, {d['valid']} valid, "
        f"{d['duplicates']} duplicate(s) of an earlier line, {d['quarantined']} malformed."
    )
    out.append(
        f"Sessions: {d['sessions']}; in several buckets: "
        f"{d['sessions_in_several_buckets']}; with differing versions: "
        f"{d['sessions_with_differing_versions']}."
    )
    if d["likely_slices"]:
        out.append(
            "Likely subdirectory slices (named after no worktree): "
            + ", ".join(d["likely_slices"])
            + "."
        )
    if d["ambiguous"]:
        out.append(
            "Ambiguous (the import skips them until --map settles each): "
            + ", ".join(d["ambiguous"])
            + "."
        )
    w = d.get("walk") or {}
    if w:
        out.append(
            f"Walked {w['directories']} directories of {len(w['worktrees'])} "
            f"worktree(s) ({', '.join(x['key'] for x in w['worktrees'])});"
            f" {w['symlinks_not_followed']} symlink(s) not followed"
            + (
                "; skipped: " + "; ".join(f"{x['path']} ({x['reason']})" for x in w["skipped"])
                if w["skipped"]
                else ""
            )
            + "."
        )
    out.append(
        f"An import would create {d['rows_to_create']} row(s), recognise "
        f"{d['duplicates']} duplicate(s) and quarantine {d['quarantined']} line(s)."
    )
    out.extend(_problems(d))
    return "\n".join(out)


# -- import ------------------------------------------------------------------------------


def cmd_import(args: argparse.Namespace) -> int:
    from ..legacy.plan import make_plan, resolve_root

    mapping = _mapping(args)
    # Nothing to import: say why, and open (or mint) no store for it.
    found = make_plan(resolve_root(args.cwd), args.paths, mapping=mapping, cwd=args.cwd)
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
        cli.emit(args, data, "Nothing to import.\n" + "\n".join(_problems(data)))
        return 1
    bar = _Bar(args, "import")
    try:
        with _open(args) as store:
            report = store.legacy.import_paths(
                args.paths, mapping=mapping, progress=bar, cwd=args.cwd
            )
    finally:
        bar.close()
    data = report.to_dict()
    cli.emit(args, data, format_import(data))
    return 0 if report.ok else 1


def format_import(d: dict[str, Any]) -> str:
    out = [f"Import run {d['run_id']} into workspace {d['workspace_id']} ({d['database']})"]
    for s in d["sources"]:
        line = (
            f"  {s['bucket']:<16} -> {s['worktree']:<12} {s['action']:<9} "
            f"{s['lines']:>7} lines: {s['imported']} new, {s['duplicates']} duplicate,"
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
    out.extend(_problems(d))
    return "\n".join(out)


# -- verify ------------------------------------------------------------------------------


def cmd_verify(args: argparse.Namespace) -> int:
    bar = _Bar(args, "verify")
    try:
        with _open(args, read_only=True) as store:
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
            f"  {s['status']:<12} {s['bucket']:<16} {s['file_lines']:>7} lines: "
            f"{s['imported']} imported, {s['duplicates']} duplicate, "
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
        f"{d['duplicates']} duplicates, {d['quarantined']} quarantined, "
        f"{d['unaccounted']} unaccounted, {d['changed']} file(s) changed, "
        f"{d['not_imported']} store(s) found but not imported, {d['interrupted']}"
        " interrupted)."
    )
    out.extend(_problems(d))
    return "\n".join(out)


# -- demo --------------------------------------------------------------------------------


def cmd_demo(args: argparse.Namespace) -> int:
    from ..legacy import demo as legacy_demo

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
