"""`recall-sqlite mcp`: the store of one directory served over stdio to any MCP client, on
the official `mcp` SDK's low-level server.

Each tool is one library call on the public face (`open_store`), and its structured answer
is that call's `to_dict()`, the CLI's `--json` for the same call, in answers.py's shape
(`TOOL_ANSWERS`, the tool's outputSchema: the SDK checks every answer against it). Read
tools open the store read-only, so they never create it nor wait on the write lock; where
no store exists they answer the CLI's empty answer (with the scope the call would have
covered from here, no workspace id), and `where` the CLI's answer (the workspace and the
database it would have). Every store error is an MCP tool error with its one-line message,
but doctor's on a store too damaged to open: that is its finding, as on the command line.
A write opens the store for its call: two servers and a CLI writer on one store are three
writers SQLite serialises, so none loses another's write. Reads share one read-only store
kept open while it answers as a fresh open would (kept.py).

The SDK is imported by `serve` only: the tools' table and `call` import nothing heavier
than the store, and nothing here is on a `journal read`'s path."""

from __future__ import annotations

import json
import os
import shutil
import sys

from recall_sqlite import ALL_BRANCHES, open_store
from recall_sqlite.agents.kept import KeptStore
from recall_sqlite.answers import DRAFT, TOOL_ANSWERS
from recall_sqlite.errors import (
    CorruptStoreError,
    NoStoreError,
    NotAStoreError,
    RecallError,
    UsageError,
)
from recall_sqlite.scope import scoped, unstored_scope
from recall_sqlite.store import unstored_workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, Final

    from recall_sqlite import Store, WorkspaceInfo
    from recall_sqlite.summaries import BranchFilter

    Handler = Callable[[Store, dict[str, Any]], Any]
    # A tool's answer where no store exists: from the workspace and database there would be
    # (store.py unstored_workspace) and the call's arguments.
    Unstored = Callable[[WorkspaceInfo, dict[str, Any]], Any]
    # A tool served beside the store's: (its spec, as tool_specs lists one, its answer from
    # the call's arguments).
    ExtraTool = tuple[dict[str, Any], Callable[[dict[str, Any]], Any]]

NAME: Final = "recall-sqlite"
CLIENTS: Final = ("claude-code", "codex", "cursor")

_TEXT: Final = {"type": "string"}
_TEXTS: Final = {"type": "array", "items": {"type": "string"}}
_FLAG: Final = {"type": "boolean"}
_BRANCH: Final = {
    "type": ["string", "null"],
    "description": "one branch ('' = none); omitted or null: every branch",
}
_ALL_WORKTREES: Final = {"type": "boolean", "description": "the whole workspace, not this worktree"}
_MEANINGFUL: Final = {"type": "boolean", "description": "only entries with content"}
_CONSUMER: Final = {"type": "string", "description": "who reads (a name of your choosing)"}
_CURSOR_BRANCH: Final = {"type": "string", "description": "default: the worktree's branch"}
_SCOPE: Final = {"branch": _BRANCH, "all_worktrees": _ALL_WORKTREES, "meaningful": _MEANINGFUL}

# The three kinds of tool, as the MCP annotations say them.
_READ: Final = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}
_WRITE: Final = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False}
_FORGET: Final = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True}
_MEND: Final = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True}


def _summary_filter(a: dict[str, Any]) -> BranchFilter:
    if a.get("all_branches") and a.get("branch") is not None:
        raise UsageError("give branch or all_branches, not both")
    branch: BranchFilter = ALL_BRANCHES if a.get("all_branches") else a.get("branch")
    return branch


def _summary_latest(store: Store, a: dict[str, Any]) -> Any:
    return store.summaries.read_latest(_summary_filter(a), a.get("kind")).wrapped_dict()


def _summary_unstored(here: WorkspaceInfo, a: dict[str, Any]) -> Any:
    from recall_sqlite.summaries import SummaryScope

    scope = SummaryScope.of(None, _summary_filter(a), a.get("kind"))
    return {"summary": None, "store": None, **scoped(scope)}


def _branch_here(here: WorkspaceInfo, a: dict[str, Any]) -> str:
    # The branch checked out where the server runs, as the CLI's cursor commands default to.
    branch = a.get("branch")
    return str(here.branch) if branch is None else str(branch)


def _read_unstored(**empty: Any) -> Unstored:
    """A journal read's answer where no store exists: `empty`, beside the scope the read
    would have covered from here (its arguments') and nothing elsewhere."""

    def answer(here: WorkspaceInfo, a: dict[str, Any]) -> Any:
        scope = unstored_scope(
            here.worktree,
            a.get("branch"),
            a.get("all_worktrees", False),
            a.get("meaningful", False),
        )
        return {**empty, "store": None, **scoped(scope)}

    return answer


def _unread_unstored(here: WorkspaceInfo, a: dict[str, Any]) -> Any:
    # A cursor covers its branch in every worktree.
    scope = unstored_scope(here.worktree, _branch_here(here, a), all_worktrees=True)
    return {"entries": [], "store": None, **scoped(scope)}


def _doctor_unstored(here: WorkspaceInfo, a: dict[str, Any]) -> Any:
    from recall_sqlite.doctor.report import DoctorReport

    return DoctorReport((), (), None).to_dict()


# name -> (what it does, its arguments (name -> JSON Schema), the required ones, its
# annotations, whether it reads only, the call, its answer where no store exists).
_TOOLS: Final[
    dict[
        str,
        tuple[
            str, dict[str, Any], tuple[str, ...], dict[str, bool], bool, Handler, Unstored | None
        ],
    ]
] = {
    "journal_read": (
        "The newest journal entries of this worktree, one per session, newest first.",
        {"n": {"type": "integer", "minimum": 0, "default": 5}, **_SCOPE},
        (),
        _READ,
        True,
        lambda s, a: s.journal.read(
            a.get("n", 5),
            branch=a.get("branch"),
            all_worktrees=a.get("all_worktrees", False),
            meaningful=a.get("meaningful", False),
        ).to_dict(),
        _read_unstored(entries=[], total=0),
    ),
    "journal_latest": (
        "The newest journal entry of this worktree (a read of one).",
        dict(_SCOPE),
        (),
        _READ,
        True,
        lambda s, a: s.journal.latest(
            a.get("meaningful", False),
            branch=a.get("branch"),
            all_worktrees=a.get("all_worktrees", False),
        ).to_dict(),
        _read_unstored(entries=[], total=0),
    ),
    "journal_pending": (
        "The next steps still open: carried forward, not yet done.",
        {"all_worktrees": _ALL_WORKTREES},
        (),
        _READ,
        True,
        lambda s, a: s.journal.pending_next_steps(
            all_worktrees=a.get("all_worktrees", False)
        ).to_dict(),
        _read_unstored(pending=[]),
    ),
    "journal_search": (
        "Full-text search of the journal, best first.",
        {"query": _TEXT, "n": {"type": "integer", "minimum": 0, "default": 10}, **_SCOPE},
        ("query",),
        _READ,
        True,
        lambda s, a: s.journal.search(
            a["query"],
            a.get("n", 10),
            branch=a.get("branch"),
            all_worktrees=a.get("all_worktrees", False),
            meaningful=a.get("meaningful", False),
        ).to_dict(),
        _read_unstored(entries=[], total=0),
    ),
    "journal_write": (
        "Write a journal entry; the previous entry's open next steps are carried forward.",
        {
            "focus": _TEXT,
            "done": _TEXTS,
            "decisions": _TEXTS,
            "next_steps": _TEXTS,
            "session_id": _TEXT,
            "branch": {"type": "string", "description": "default: the worktree's branch"},
            "timestamp": _TEXT,
            "files_modified": _TEXTS,
        },
        (),
        _WRITE,
        False,
        lambda s, a: s.journal.write(
            focus=a.get("focus", ""),
            done=a.get("done", ()),
            decisions=a.get("decisions", ()),
            next_steps=a.get("next_steps", ()),
            session_id=a.get("session_id", ""),
            branch=a.get("branch"),
            timestamp=a.get("timestamp"),
            files_modified=a.get("files_modified", ()),
        ).to_dict(),
        None,
    ),
    "journal_forget": (
        "Remove entry versions (by id) or every version of a session, for good.",
        {"ids": _TEXTS, "session_id": _TEXT, "scrub_sources": _FLAG},
        (),
        _FORGET,
        False,
        lambda s, a: s.journal.forget(
            a.get("ids", ()),
            session_id=a.get("session_id"),
            scrub_sources=a.get("scrub_sources", False),
        ).to_dict(),
        None,
    ),
    "summary_latest": (
        "The newest summary: workspace-wide, of one branch, or of any scope.",
        {"branch": _BRANCH, "all_branches": _FLAG, "kind": _TEXT},
        (),
        _READ,
        True,
        _summary_latest,
        _summary_unstored,
    ),
    "summary_add": (
        "Store a summary (workspace-wide unless a branch is given).",
        {"text": _TEXT, "branch": _TEXT, "kind": _TEXT, "covers": _TEXTS, "author": _TEXT},
        ("text",),
        _WRITE,
        False,
        lambda s, a: s.summaries.write(
            a["text"],
            branch=a.get("branch"),
            covers=a.get("covers") or None,
            author=a.get("author"),
            **({"kind": a["kind"]} if "kind" in a else {}),
        ).to_dict(),
        None,
    ),
    "cursor_unread": (
        "The entries of a branch a consumer has not read yet, oldest first.",
        {"consumer": _CONSUMER, "branch": _CURSOR_BRANCH, "limit": {"type": "integer"}},
        ("consumer",),
        _READ,
        True,
        lambda s, a: s.cursors.unread(
            a["consumer"], _branch_here(s.workspace, a), limit=a.get("limit")
        ).to_dict(),
        _unread_unstored,
    ),
    "cursor_advance": (
        "Mark a consumer's entries read up to a position or an entry id (never backwards).",
        {
            "consumer": _CONSUMER,
            "branch": _CURSOR_BRANCH,
            "to": {"type": ["integer", "string"], "description": "a position or an entry id"},
        },
        ("consumer", "to"),
        _WRITE,
        False,
        lambda s, a: s.cursors.advance(
            a["consumer"], _branch_here(s.workspace, a), to=a["to"]
        ).to_dict(),
        None,
    ),
    "where": (
        "The workspace, worktree, branch and database this server serves.",
        {},
        (),
        _READ,
        True,
        lambda s, a: s.workspace.to_dict(),
        lambda here, a: here.to_dict(),
    ),
    "doctor": (
        "Check the store; repair mends what it finds (never deletes an entry).",
        {"repair": _FLAG, "deep": _FLAG},
        (),
        _MEND,
        True,
        lambda s, a: s.doctor(repair=a.get("repair", False), deep=a.get("deep", False)).to_dict(),
        _doctor_unstored,
    ),
}
TOOLS: Final = tuple(_TOOLS)


def tool_specs() -> list[dict[str, Any]]:
    """Every tool as MCP lists it: name, description, inputSchema, outputSchema, annotations."""
    return [
        {
            "name": name,
            "description": what,
            "inputSchema": {
                "$schema": DRAFT,  # answers.py's dialect: cheap to check on every call
                "type": "object",
                "properties": properties,
                "required": list(required),
                "additionalProperties": False,
            },
            "outputSchema": TOOL_ANSWERS[name],
            "annotations": annotations,
        }
        for name, (what, properties, required, annotations, _, _, _) in _TOOLS.items()
    ]


def call(
    cwd: str,
    name: str,
    arguments: dict[str, Any],
    db: str | None = None,
    kept: KeptStore | None = None,
) -> Any:
    """The tool `name`'s answer for the store of `cwd` (or the database file `db`): one
    library call's to_dict(). Raises RecallError (the tool error's message) for what the
    store refuses. `kept`: a read is answered on that kept read-only store (agents/kept.py)
    while it answers as a fresh open would; a write always opens its own."""
    _, _, _, _, reads, handler, unstored = _TOOLS[name]
    # doctor reads unless asked to repair.
    read_only = reads and not (name == "doctor" and arguments.get("repair"))
    try:
        if read_only and kept is not None:
            return kept.read(cwd, db, lambda store: handler(store, arguments))
        store = open_store(cwd, db_path=db, read_only=read_only)
    except NoStoreError:
        if unstored is None:
            raise
        return unstored(unstored_workspace(cwd, db_path=db), arguments)
    except (CorruptStoreError, NotAStoreError) as exc:
        if name != "doctor":
            raise
        # As the CLI's doctor: a store too damaged to open is its finding.
        from recall_sqlite.doctor.report import DoctorReport

        return DoctorReport.unopened(exc).to_dict()
    with store:
        return handler(store, arguments)


def resource_text(cwd: str, name: str, db: str | None = None, kept: KeptStore | None = None) -> str:
    """A resource's JSON: the newest entries, or the pending next steps, of this worktree."""
    return json.dumps(call(cwd, name, {}, db, kept), indent=2)


# uri -> (the tool whose answer it is, its name, what it holds)
RESOURCES: Final = {
    "recall://journal/latest": ("journal_read", "latest", "the newest entries of this worktree"),
    "recall://journal/pending": ("journal_pending", "pending", "the next steps still open here"),
}


def one_line(exc: BaseException) -> str:
    """An error as a tool error says it: its message on one line, never a traceback."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def serve(
    cwd: str, db: str | None = None, *, extra_tools: Mapping[str, ExtraTool] | None = None
) -> None:
    """Serve the store of `cwd` (or the database file `db`) on stdin/stdout until the
    client closes them.

    `extra_tools` (name -> (spec, answer of the arguments)) are served beside the store's
    through the same dispatch (the SDK's schema checks, the worker thread, the tool errors)
    but without opening the store. The product serves none: they exist so a bench can time
    a tool's round trip against a no-op in this very server and code path
    (bench/mcp_noop_server.py, issue 34); a copy of the server would time another."""
    import anyio
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from pydantic import AnyUrl

    server: Any = Server(NAME)
    kept = KeptStore()
    extras = dict(extra_tools or {})
    tools = [types.Tool(**spec) for spec in [*tool_specs(), *(s for s, _ in extras.values())]]

    @server.list_tools()  # type: ignore[untyped-decorator]
    async def _list_tools() -> list[types.Tool]:
        return tools

    @server.call_tool()  # type: ignore[untyped-decorator]
    async def _call_tool(name: str, arguments: dict[str, Any]) -> Any:
        extra = extras.get(name)
        if extra is None and name not in _TOOLS:
            return _error(f"no tool {name!r}: the tools are {', '.join([*TOOLS, *extras])}")
        try:
            if extra is None:
                answer = await anyio.to_thread.run_sync(call, cwd, name, arguments, db, kept)
            else:
                answer = await anyio.to_thread.run_sync(extra[1], arguments)
        except RecallError as exc:
            return _error(one_line(exc))
        except Exception as exc:  # noqa: BLE001 - a tool error, never a traceback to a client
            return _error(f"{type(exc).__name__}: {one_line(exc)}")
        return answer

    def _error(message: str) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=message)], isError=True
        )

    @server.list_resources()  # type: ignore[untyped-decorator]
    async def _list_resources() -> list[types.Resource]:
        return [
            types.Resource(
                uri=AnyUrl(uri), name=label, description=what, mimeType="application/json"
            )
            for uri, (_, label, what) in RESOURCES.items()
        ]

    @server.read_resource()  # type: ignore[untyped-decorator]
    async def _read_resource(uri: Any) -> Any:
        from mcp.server.lowlevel.helper_types import ReadResourceContents

        found = RESOURCES.get(str(uri))
        if found is None:
            raise UsageError(f"no resource {uri}: the resources are {', '.join(RESOURCES)}")
        text = await anyio.to_thread.run_sync(resource_text, cwd, found[0], db, kept)
        return [ReadResourceContents(content=text, mime_type="application/json")]

    async def _run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(_run)
    finally:
        kept.close()


def script() -> str:
    """The absolute path of the installed `recall-sqlite` command (beside this Python's)."""
    beside = os.path.join(os.path.dirname(sys.executable), NAME)
    if os.path.isfile(beside):
        return os.path.abspath(beside)
    found = shutil.which(NAME)
    return os.path.abspath(found) if found else beside


def client_config(client: str, cwd: str | None = None, db: str | None = None) -> str:
    """The config lines `client` needs to start this install's server (`cwd`: serve that
    directory's store rather than the one the client starts the server in; `db`: that
    database file)."""
    command = script()
    args = [*(["--cwd", cwd] if cwd else []), *(["--db", db] if db else []), "mcp"]
    if client == "claude-code":
        quoted = " ".join(_sh(a) for a in [command, *args])
        # Claude Code also runs a hook at each session's start: the store's summary of
        # where the work stands, before the agent asks a tool anything.
        hook = [command, *args[:-1], "hook", "session-start", "--format", "claude-code"]
        run = {"type": "command", "command": " ".join(_sh(a) for a in hook)}
        settings = {"hooks": {"SessionStart": [{"hooks": [run]}]}}
        return (
            f"claude mcp add --scope user {NAME} -- {quoted}\n"
            "# and the session-start hook: merge into ~/.claude/settings.json"
            " (or a project's .claude/settings.json)\n" + json.dumps(settings, indent=2)
        )
    if client == "codex":
        listed = ", ".join(json.dumps(a) for a in args)
        return (
            "# ~/.codex/config.toml\n"
            f"[mcp_servers.{NAME}]\ncommand = {json.dumps(command)}\nargs = [{listed}]"
        )
    if client == "cursor":
        body = {"mcpServers": {NAME: {"command": command, "args": args}}}
        return "// .cursor/mcp.json (or ~/.cursor/mcp.json)\n" + json.dumps(body, indent=2)
    raise UsageError(f"unknown client {client!r}: one of {', '.join(CLIENTS)}")


def _sh(arg: str) -> str:
    import shlex

    return shlex.quote(arg)
