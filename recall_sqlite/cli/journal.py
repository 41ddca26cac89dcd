"""`recall-sqlite journal write | read | pending | search | forget`: the session journal."""

from __future__ import annotations

from ._show import (
    clean,
    counted,
    describe_elsewhere,
    emit,
    format_entry,
    int_at_least,
    no_store,
    nothing_found,
    open_for_read,
    open_from_args,
    search_marks,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any


def _count(text: str) -> int:
    return int_at_least(text, 0)


# `journal read`'s options as cli/__init__.py reads a command line without argparse: each
# exact spelling -> (its dest, how its value is read; None for a flag), and the defaults.
# register() below is argparse's side; tests/unit/cli/test_cli_quick.py holds both to one answer.
READ_OPTIONS: dict[str, tuple[str, Callable[[str], Any] | None]] = {
    "-n": ("n", _count),
    "--branch": ("branch", str),
    "--all-worktrees": ("all_worktrees", None),
    "--meaningful": ("meaningful", None),
    "--json": ("json", None),
}
READ_DEFAULTS: dict[str, Any] = {
    "n": 5,
    "branch": None,
    "all_worktrees": False,
    "meaningful": False,
    "json": False,
}


def _no_store(args: Any, branch: str | None = None, meaningful: bool = False, **empty: Any) -> int:
    """A journal read's answer where no store exists yet: `empty`, beside the scope it would
    have covered from here (no workspace id) and nothing elsewhere."""
    from ..scope import scoped, unstored_scope
    from ..store import unstored_workspace

    here = unstored_workspace(args.cwd, db_path=args.db)
    scope = unstored_scope(here.worktree, branch, args.all_worktrees, meaningful)
    return no_store(args, **empty, **scoped(scope))


def cmd_journal_write(args: argparse.Namespace) -> int:
    with open_from_args(args) as store:
        result = store.journal.write(
            focus=args.focus or "",
            done=args.done,
            decisions=args.decision,
            next_steps=args.next,
            session_id=args.session_id or "",
            branch=args.branch,
            timestamp=args.timestamp,
            files_modified=args.file,
        )
    data = result.to_dict()
    carry = result.carry
    text = [
        ("Journal entry written." if result.created else "Identical entry already stored.")
        + f" id {result.id}",
        format_entry(data["entry"]),
    ]
    text.append(
        f"Carry-forward: {carry.carried} carried, {carry.retired_by_done} retired by done,"
        f" {carry.retired_earlier} retired earlier, {carry.withheld} withheld."
    )
    emit(args, data, "\n".join(text))
    return 0


def cmd_journal_read(args: argparse.Namespace) -> int:
    store = open_for_read(args)
    if store is None:
        return _no_store(args, args.branch, args.meaningful, entries=[], total=0)
    with store:
        result = store.journal.read(
            args.n, branch=args.branch, all_worktrees=args.all_worktrees, meaningful=args.meaningful
        )
    data = result.to_dict()
    body = [format_entry(e) for e in data["entries"]] or ["No journal entries in scope."]
    body.append(
        describe_elsewhere(data["scope"], data["total"], len(data["entries"]), data["elsewhere"])
    )
    emit(args, data, "\n\n".join(body))
    return 0


def cmd_journal_pending(args: argparse.Namespace) -> int:
    store = open_for_read(args)
    if store is None:
        return _no_store(args, pending=[])
    with store:
        result = store.journal.pending_next_steps(all_worktrees=args.all_worktrees)
    data = result.to_dict()
    lines = (
        ["Pending next steps:"] + [f"  - {clean(p)}" for p in result.pending]
        if result.pending
        else ["No pending next steps."]
    )
    if result.elsewhere.other_worktrees:
        lines.append(
            f"({result.elsewhere.other_worktrees} entries in other worktrees not "
            "considered; --all-worktrees)"
        )
    emit(args, data, "\n".join(lines))
    return 0


def cmd_journal_forget(args: argparse.Namespace) -> int:
    if not args.ids and args.session is None:
        from ..errors import UsageError

        raise UsageError("give entry ids or --session S")
    with open_from_args(args) as store:
        report = store.journal.forget(
            args.ids, session_id=args.session, scrub_sources=args.scrub_sources
        )
    data = report.to_dict()
    n = len(report.entries)
    noun = "session" if len(report.sessions) == 1 else "sessions"
    named = ", ".join(clean(s) for s in report.sessions)
    sessions = f" ({noun} {named})" if report.sessions else ""
    lines = [
        f"Forgot {counted(n, 'entry version')}{sessions}:"
        if n
        else f"No stored entry version to forget{sessions}"
    ]
    lines += [f"  {i}" for i in report.entries]
    if report.already:
        lines.append(
            f"already forgotten on this machine (an earlier forget, or another machine's"
            f" that a pull applied): {', '.join(report.already)}; their copies in files were"
            " looked for again"
        )
    lines.append(
        f"removed {counted(report.vectors, 'vector')}, "
        f"{counted(report.summary_links, 'summary link')}; "
        f"{counted(report.provenance, 'imported line')} now accounted as forgotten; "
        f"{counted(report.quarantine_blanked, 'quarantined line')} emptied"
    )
    if report.summaries:
        lines.append(
            "summaries that named them (their text may repeat it; "
            "`recall-sqlite summary remove ID`): " + ", ".join(map(str, report.summaries))
        )
    lines += copies_lines(report)
    lines.append(
        "the WAL was emptied: no byte of the text is left in the database files"
        if report.wal_emptied
        else "another process was reading, so the WAL still holds the text: it is emptied"
        " when that process is done (the last to close the store checkpoints it) or by the"
        " next forget"
    )
    lines += [f"sync: {clean(n)}" for n in report.replicas]
    emit(args, data, "\n".join(lines))
    return 1 if report.file_errors else 0


def copies_lines(report: Any) -> list[str]:
    """What became of the copies in files: never "no byte left" while one holds it, and
    each kind of file named for what it is (a journal's line, a cache, another file)."""
    copies = report.copies
    lines = [c for c in copies if c.removed and c.kind == "bucket"]
    caches = [c for c in copies if c.removed and c.kind == "cache"]
    left = [c for c in copies if not c.removed and c.kind == "bucket"]
    others = [c for c in copies if not c.removed and c.kind != "bucket"]
    out = []
    if lines:
        files = len({c.path for c in lines})
        out.append(
            f"removed {counted(len(lines), 'line')} holding them"
            f" from {counted(files, 'synapt bucket')}"
        )
    if caches:
        paths = sorted({c.path for c in caches})
        out.append(
            f"removed {counted(len(paths), 'synapt cache file')} quoting them"
            " (synapt writes it anew): " + ", ".join(clean(p) for p in paths)
        )
    out += _listed(
        left,
        f"{counted(len(left), 'line')} of synapt buckets the store did not write still"
        f" {_agreed(len(left), 'hold')} them (`journal forget --scrub-sources` removes them"
        " too):",
    )
    out += _listed(
        others,
        f"{counted(len(others), 'line')} of synapt's other files still"
        f" {_agreed(len(others), 'quote')} them (no journal: edit or remove them by hand):",
    )
    for e in report.file_errors:
        out.append(f"could not check or rewrite: {clean(e)}")
    if not left and not others and not report.file_errors:
        out.append(f"no synapt bucket of the workspace holds them{' now' if lines else ''}")
    return out


def _listed(copies: list[Any], heading: str) -> list[str]:
    if not copies:
        return []
    out = [heading] + [f"  {clean(c.path)}:{c.line}" for c in copies[:20]]
    if len(copies) > 20:
        out.append(f"  ... and {len(copies) - 20} more (--json lists all)")
    return out


def _agreed(n: int, verb: str) -> str:
    """A present-tense verb agreeing with a count of `n` things ("1 line holds")."""
    return f"{verb}s" if n == 1 else verb


def cmd_journal_search(args: argparse.Namespace) -> int:
    store = open_for_read(args)
    if store is None:
        return _no_store(args, args.branch, args.meaningful, entries=[], total=0)
    with store:
        result = store.journal.search(
            " ".join(args.query),
            args.n,
            branch=args.branch,
            all_worktrees=args.all_worktrees,
            meaningful=args.meaningful,
        )
        data = result.to_dict()  # inside: snippets are read on first use
    open_, close = search_marks()
    body: list[str] = []
    c = clean  # stored text may carry terminal escapes: shown escaped, the marks are ours
    for hit, e in zip(result.hits, data["entries"], strict=True):
        head = f"## {c(e['timestamp'])}  [{c(e['worktree'])}"
        head += f" @ {c(e['branch'])}]" if e["branch"] else "]"
        lines = [
            head,
            f"id {e['id']}"
            + (f"  session {c(e['session_id'])}" if e["session_id"] else "")
            + f"  score {hit.score:.3g}",
        ]
        if e["focus"] and hit.field != "focus":
            lines.append(f"Focus: {c(e['focus'])}")
        label = (hit.field or "text").replace("_", " ")
        lines.append(f"{label}: {hit.snippet.marked(open_, close, escape=c)}")
        body.append("\n".join(lines))
    if not body:
        body.append(nothing_found(result.query.terms, "journal entries"))
    body.append(
        describe_elsewhere(data["scope"], data["total"], len(data["entries"]), data["elsewhere"])
    )
    emit(args, data, "\n\n".join(body))
    return 0


def _scope_options(p: Any) -> None:
    p.add_argument("--branch", help="only this branch ('' for entries with none)")
    p.add_argument(
        "--all-worktrees", action="store_true", help="every worktree, not only the current one"
    )
    p.add_argument(
        "--meaningful",
        action="store_true",
        help="skip entries with nothing but an auto-extracted focus",
    )


def add_journal_search(journal_subparsers: Any, json_parent: argparse.ArgumentParser) -> None:
    from ._common import nonneg_int

    s = journal_subparsers.add_parser(
        "search",
        parents=[json_parent],
        help="full-text search, best first, one version per session",
        description='Every word must match; "a phrase" in double quotes and a prefix* keep '
        "their meaning, anything else typed is searched as words.",
    )
    s.add_argument(
        "query",
        nargs="+",
        help="the words to look for (put -- before a query that starts with '-')",
    )
    s.add_argument("-n", type=nonneg_int, default=10, help="at most N hits (default: 10)")
    _scope_options(s)
    s.set_defaults(func=cmd_journal_search)


def register(sub: Any, jp: argparse.ArgumentParser) -> None:
    from ._common import nonneg_int

    journal = sub.add_parser("journal", help="the session journal")
    jsub = journal.add_subparsers(dest="journal_command", metavar="ACTION")
    jsub.required = True
    w = jsub.add_parser("write", parents=[jp], help="write an entry (carries next steps forward)")
    w.add_argument("--focus", help="what the session was about")
    w.add_argument(
        "--done", action="append", default=[], metavar="ITEM", help="a thing done (repeatable)"
    )
    w.add_argument(
        "--decision", action="append", default=[], metavar="ITEM", help="a decision (repeatable)"
    )
    w.add_argument(
        "--next", action="append", default=[], metavar="ITEM", help="a next step (repeatable)"
    )
    w.add_argument(
        "--file", action="append", default=[], metavar="PATH", help="a file this session modified"
    )
    w.add_argument("--session-id", help="the session this entry belongs to")
    w.add_argument("--branch", help="default: the worktree's current branch")
    w.add_argument("--timestamp", help="ISO-8601 (default: now, UTC)")
    w.set_defaults(func=cmd_journal_write)
    r = jsub.add_parser("read", parents=[jp], help="newest entries, one per session")
    r.add_argument(
        "-n",
        type=nonneg_int,
        default=READ_DEFAULTS["n"],
        help=f"at most N sessions (default: {READ_DEFAULTS['n']})",
    )
    _scope_options(r)
    r.set_defaults(func=cmd_journal_read)
    p = jsub.add_parser("pending", parents=[jp], help="unresolved next steps")
    p.add_argument(
        "--all-worktrees", action="store_true", help="every worktree, not only the current one"
    )
    p.set_defaults(func=cmd_journal_pending)
    add_journal_search(jsub, jp)
    f = jsub.add_parser(
        "forget", parents=[jp], help="remove entry versions for good (every byte of them)"
    )
    f.add_argument("ids", nargs="*", metavar="ID", help="entry ids (32 hex digits)")
    # --session-id as `journal write` names it; --session as the docs have always shown.
    f.add_argument(
        "--session", "--session-id", dest="session", metavar="S", help="every version of session S"
    )
    f.add_argument(
        "--scrub-sources",
        action="store_true",
        help="also remove the copies in synapt buckets the store did not write"
        " (the history it imported)",
    )
    f.set_defaults(func=cmd_journal_forget)
