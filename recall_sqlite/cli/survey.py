"""`recall-sqlite survey`: characterise the workspace's synapt journals, writing nothing."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import RecallError
from . import _common as cli


def cmd_survey(args: argparse.Namespace) -> int:
    from ..legacy import survey
    from ..legacy.plan import resolve_root

    mapping = cli.mapping_of(args)
    bar = cli.ProgressBar(args, "survey")
    try:
        try:
            # Read-only: a store that exists tells the worktrees and what was imported.
            store = cli.open_from_args(args, read_only=True)
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
        return "\n".join(["No legacy journal found.", *cli.problem_lines(d)])
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
    no_sid = d.get("entries_without_session", 0)
    out.append(
        f"Sessions: {d['sessions']} with a session id; in several buckets: "
        f"{d['sessions_in_several_buckets']}; with differing versions: "
        f"{d['sessions_with_differing_versions']}."
        + (
            f" {no_sid} entr{'y has' if no_sid == 1 else 'ies have'} no session id"
            " (synapt's CLI writes them so); each reads as a session of its own."
            if no_sid
            else ""
        )
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
    out.append(_what_an_import_would_do(d))
    out.extend(cli.problem_lines(d))
    return "\n".join(out)


def _what_an_import_would_do(d: dict[str, Any]) -> str:
    pending = d.get("not_imported")
    if pending is None:  # no store yet: an import would read everything
        return (
            f"An import would create {d['rows_to_create']} row(s), recognise "
            f"{d['duplicates']} duplicate(s) and quarantine {d['quarantined']} line(s)."
        )
    if not pending["lines"]:
        return "Every line found is imported already: an import would change nothing."
    return (
        f"{pending['lines']} line(s) are not imported yet: an import would create"
        f" {pending['rows_to_create']} row(s), recognise {pending['duplicates']}"
        f" duplicate(s) and quarantine {pending['quarantined']} line(s)."
    )


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
    s.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="BUCKET=WORKTREE",
        help="survey a bucket as if imported into this worktree (key or name), as import --map",
    )
    s.set_defaults(func=cmd_survey)
