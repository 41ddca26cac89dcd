"""`recall-sqlite mcp` through the official SDK's stdio client (issue 34): the tools listed
with their names, annotations and answers.py's schemas; each tool's structured answer is
the CLI's `--json` for the same call, from the main checkout, a subdirectory and a linked
worktree; every answer says its scope and elsewhere; a bad call is a one-line tool error;
where no store exists the reads (and where) answer as the CLI does and create nothing; two
servers and a CLI writer on one store lose nothing."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from recall_sqlite import open_store
from recall_sqlite.agents.mcp_server import TOOLS, client_config
from recall_sqlite.answers import ANSWERS, TOOL_ANSWERS
from tests.helpers import CLI, ISSUE_34_CALLS, add_worktree, new_repo, run_cli, user_env

pytest.importorskip("mcp")

NAMES = ISSUE_34_CALLS
READS = {
    "journal_read",
    "journal_latest",
    "journal_pending",
    "journal_search",
    "summary_latest",
    "cursor_unread",
    "where",
}

Session = Any
Script = Callable[[Session], Awaitable[Any]]


async def _serve(cwd: Path, script: Script, *args: str) -> Any:
    """`script(session)` against `recall-sqlite [ARGS] mcp` started in `cwd`."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=CLI[0], args=[*CLI[1:], *args, "mcp"], cwd=str(cwd), env=user_env()
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await script(session)


def serve(cwd: Path, script: Script, *args: str) -> Any:
    import anyio

    async def run() -> Any:
        return await _serve(cwd, script, *args)

    return anyio.run(run)


def answer(result: Any) -> Any:
    """A tool result's structured answer; fails the test on a tool error, or on an answer
    that does not say its scope and what lies outside it (issue 34: every answer does)."""
    assert not result.isError, result.content
    # The text content is the same answer, for clients that read only text.
    assert json.loads(result.content[0].text) == result.structuredContent
    got = result.structuredContent
    assert {"scope", "elsewhere"} <= set(got), sorted(got)
    assert set(got["elsewhere"]) == {"other_worktrees", "other_branches", "other_machines"}
    assert "workspace_id" in got["scope"], got["scope"]
    return got


def cli_json(cwd: Path, *argv: str) -> Any:
    """`recall-sqlite ARGV --json` run in `cwd` as its own process: its JSON."""
    argv_ = list(argv)
    at = argv_.index("--") if "--" in argv_ else len(argv_)
    argv_.insert(at, "--json")
    res = run_cli(*argv_, cwd=cwd)
    assert res.returncode in (0, 1), res.stderr
    return json.loads(res.stdout)


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    """A workspace with a linked worktree, a few entries in each and a summary."""
    main = new_repo(tmp_path / "repo")
    linked = add_worktree(main, tmp_path / "feature")
    sub = main / "server" / "api"
    sub.mkdir(parents=True)
    for where, focus, nxt in (
        (main, "the gateway rewrite", "wire the client"),
        (linked, "feature work on the gateway", "test the feature"),
    ):
        res = run_cli("journal", "write", "--focus", focus, "--next", nxt, cwd=where)
        assert res.returncode == 0, res.stderr
    assert run_cli("summary", "add", "the week so far", cwd=main).returncode == 0
    return {"main": main, "sub": sub, "linked": linked}


# tool, its arguments, the CLI's command line for the same call
SAME: list[tuple[str, dict[str, Any], list[str]]] = [
    ("journal_read", {}, ["journal", "read"]),
    (
        "journal_read",
        {"n": 1, "all_worktrees": True},
        ["journal", "read", "-n", "1", "--all-worktrees"],
    ),
    (
        "journal_read",
        {"branch": "main", "meaningful": True},
        ["journal", "read", "--branch", "main", "--meaningful"],
    ),
    ("journal_latest", {}, ["journal", "read", "-n", "1"]),
    ("journal_latest", {"all_worktrees": True}, ["journal", "read", "-n", "1", "--all-worktrees"]),
    ("journal_pending", {}, ["journal", "pending"]),
    ("journal_pending", {"all_worktrees": True}, ["journal", "pending", "--all-worktrees"]),
    ("journal_search", {"query": "gateway"}, ["journal", "search", "gateway"]),
    (
        "journal_search",
        {"query": "feature", "n": 1, "all_worktrees": True},
        ["journal", "search", "feature", "-n", "1", "--all-worktrees"],
    ),
    ("summary_latest", {}, ["summary", "latest"]),
    ("summary_latest", {"all_branches": True}, ["summary", "latest", "--all-branches"]),
    ("summary_latest", {"branch": "nowhere"}, ["summary", "latest", "--branch", "nowhere"]),
    ("cursor_unread", {"consumer": "indexer"}, ["cursor", "unread", "indexer"]),
    (
        "cursor_unread",
        {"consumer": "indexer", "limit": 1},
        ["cursor", "unread", "indexer", "--limit", "1"],
    ),
    ("where", {}, ["where"]),
    ("doctor", {}, ["doctor"]),
]


def as_tool(name: str, cli_answer: Any) -> Any:
    """The CLI's answer as the tool answers it: summary_latest's found summary under
    "summary", beside the same scope and elsewhere (answers.py TOOL_ANSWERS); every other
    answer the same."""
    if name == "summary_latest" and "summary" not in cli_answer:
        said = ("scope", "elsewhere")
        summary = {k: v for k, v in cli_answer.items() if k not in said}
        return {"summary": summary, **{k: cli_answer[k] for k in said}}
    return cli_answer


@pytest.mark.slow
def test_tools_are_listed_with_their_names_annotations_and_schemas(tmp_path: Path) -> None:
    async def script(session: Session) -> Any:
        return (await session.list_tools()).tools

    tools = {t.name: t for t in serve(new_repo(tmp_path / "repo"), script)}
    assert tuple(tools) == NAMES == TOOLS
    for name, tool in tools.items():
        assert re.fullmatch(r"[a-z0-9_]{1,64}", name)
        assert tool.outputSchema == TOOL_ANSWERS[name]
        if name != "summary_latest":
            assert tool.outputSchema == ANSWERS[name]
        assert tool.outputSchema["type"] == "object"  # MCP's structured content is an object
        hints = tool.annotations
        assert hints is not None
        assert hints.readOnlyHint is (name in READS), name
        assert hints.destructiveHint is (name == "journal_forget"), name
        assert hints.idempotentHint is (name in READS or name in {"journal_forget", "doctor"}), name
        assert tool.inputSchema["type"] == "object"


@pytest.mark.slow
@pytest.mark.parametrize("where", ["main", "sub", "linked"])
def test_every_read_answers_as_the_cli(world: dict[str, Path], where: str) -> None:
    cwd = world[where]

    async def script(session: Session) -> Any:
        return [answer(await session.call_tool(name, args)) for name, args, _ in SAME]

    got = serve(cwd, script)
    for (name, _, argv), tool_answer in zip(SAME, got, strict=True):
        assert tool_answer == as_tool(name, cli_json(cwd, *argv)), (name, argv)
    assert got[0]["entries"], "the read found the worktree's entries"


@pytest.mark.slow
def test_every_write_answers_what_the_cli_then_reads(world: dict[str, Path]) -> None:
    cwd = world["linked"]

    async def script(session: Session) -> Any:
        wrote = answer(
            await session.call_tool(
                "journal_write",
                {"focus": "through mcp", "done": ["test the feature"], "session_id": "m1"},
            )
        )
        summary = answer(await session.call_tool("summary_add", {"text": "from mcp"}))
        moved = answer(
            await session.call_tool("cursor_advance", {"consumer": "indexer", "to": wrote["id"]})
        )
        latest = answer(await session.call_tool("journal_latest", {}))
        there = answer(
            await session.call_tool("journal_read", {"branch": wrote["entry"]["branch"]})
        )
        return wrote, summary, moved, latest, there

    wrote, summary, moved, latest, there = serve(cwd, script)
    assert latest["entries"] == [wrote["entry"]]
    assert wrote["carry"]["retired_by_done"] == 1
    # What the write wrote to is what a read of it reports, elsewhere included.
    assert (wrote["scope"], wrote["elsewhere"]) == (there["scope"], there["elsewhere"])
    assert wrote["scope"]["worktree"] == wrote["entry"]["worktree"]
    assert summary == cli_json(cwd, "summary", "latest", "--kind", "summary")
    shown = cli_json(cwd, "cursor", "show", "indexer")
    assert {k: moved[k] for k in shown if k != "unread"} == {
        k: v for k, v in shown.items() if k != "unread"
    }
    assert moved["moved"] and shown["unread"] == 0

    async def forget(session: Session) -> Any:
        return answer(await session.call_tool("journal_forget", {"session_id": "m1"}))

    forgot = serve(cwd, forget)
    assert forgot["entries"] == [wrote["id"]] and forgot["sessions"] == ["m1"]
    assert forgot["scope"]["worktree"] is None and forgot["scope"]["branch"] is None
    # Every tool was called here or in the reads, each answer checked by answer().
    writes = {"journal_write", "summary_add", "cursor_advance", "journal_forget"}
    assert {n for n, _, _ in SAME} | writes == set(NAMES)
    assert wrote["id"] not in {e["id"] for e in cli_json(cwd, "journal", "read")["entries"]}


@pytest.mark.slow
def test_a_bad_call_is_a_one_line_tool_error(world: dict[str, Path]) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("journal_read", {"n": -1}),  # refused by the input schema
        ("journal_write", {"focus": "x", "timestamp": "not a time"}),  # by the library
        ("cursor_advance", {"consumer": "c", "to": "no such entry"}),
        ("summary_latest", {"branch": "main", "all_branches": True}),
        ("journal_forget", {}),
        ("no_such_tool", {}),
    ]

    async def script(session: Session) -> Any:
        return [await session.call_tool(name, args) for name, args in calls]

    for (name, _), result in zip(calls, serve(world["main"], script), strict=True):
        assert result.isError, name
        text = result.content[0].text
        assert text and "\n" not in text and "Traceback" not in text, (name, text)
    with open_store(world["main"]) as store:
        assert [e.focus for e in store.journal.read().entries] == ["the gateway rewrite"]


@pytest.mark.slow
def test_where_no_store_exists_reads_answer_empty_and_create_nothing(tmp_path: Path) -> None:
    """The reads' empty answers (with the scope each would have covered) and where's
    answer (no workspace id, the database there would be) are the CLI's."""
    cwd = new_repo(tmp_path / "repo")

    async def script(session: Session) -> Any:
        return [answer(await session.call_tool(n, a)) for n, a, _ in SAME]

    got = serve(cwd, script)
    for (name, _, argv), tool_answer in zip(SAME, got, strict=True):
        assert tool_answer == as_tool(name, cli_json(cwd, *argv)), name
        assert tool_answer["scope"]["workspace_id"] is None, name
    where = got[[n for n, _, _ in SAME].index("where")]
    assert where["workspace_id"] is None and where["db_path"].endswith(".db")
    assert not (cwd / ".synapt").exists()


@pytest.mark.slow
def test_doctor_on_a_store_that_does_not_open_answers_as_the_cli(tmp_path: Path) -> None:
    """Its finding, not a tool error (the CLI's report); a read there is a tool error."""
    cwd = new_repo(tmp_path / "repo")
    assert run_cli("journal", "write", "--focus", "x", cwd=cwd).returncode == 0
    db = Path(cli_json(cwd, "where")["db_path"])
    db.write_bytes(b"not a database at all" * 100)

    async def script(session: Session) -> Any:
        doctor = answer(await session.call_tool("doctor", {}))
        return doctor, await session.call_tool("journal_read", {})

    doctor, read = serve(cwd, script)
    assert doctor == cli_json(cwd, "doctor")
    assert doctor["ok"] is False and doctor["findings"][0]["kind"] == "damaged_store"
    assert read.isError and "\n" not in read.content[0].text


@pytest.mark.slow
def test_the_resources_are_the_newest_entries_and_pending_steps(world: dict[str, Path]) -> None:
    async def script(session: Session) -> Any:
        listed = [str(r.uri) for r in (await session.list_resources()).resources]
        return listed, [(await session.read_resource(uri)).contents[0].text for uri in listed]

    listed, texts = serve(world["linked"], script)
    assert listed == ["recall://journal/latest", "recall://journal/pending"]
    assert json.loads(texts[0]) == cli_json(world["linked"], "journal", "read")
    assert json.loads(texts[1]) == cli_json(world["linked"], "journal", "pending")


@pytest.mark.slow
def test_two_servers_and_a_cli_writer_lose_nothing(tmp_path: Path) -> None:
    import anyio

    main = new_repo(tmp_path / "repo")
    linked = add_worktree(main, tmp_path / "feature")
    n = 12

    def writer(tag: str) -> Script:
        async def script(session: Session) -> None:
            for i in range(n):
                answer(
                    await session.call_tool(
                        "journal_write", {"focus": f"{tag} {i}", "session_id": f"{tag}-{i}"}
                    )
                )

        return script

    def cli_writes() -> None:
        for i in range(n):
            res = run_cli(
                "journal", "write", "--focus", f"cli {i}", "--session-id", f"cli-{i}", cwd=main
            )
            assert res.returncode == 0, res.stderr

    async def all_at_once() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_serve, main, writer("a"))
            tg.start_soon(_serve, linked, writer("b"))
            tg.start_soon(anyio.to_thread.run_sync, cli_writes)

    anyio.run(all_at_once)
    with open_store(main, read_only=True) as store:
        sessions = {e.session_id for e in store.journal.read(10 * n, all_worktrees=True).entries}
    assert sessions == {f"{tag}-{i}" for tag in ("a", "b", "cli") for i in range(n)}


@pytest.mark.slow
def test_a_server_given_db_serves_that_file(tmp_path: Path) -> None:
    cwd = new_repo(tmp_path / "repo")
    db = tmp_path / "elsewhere.db"

    async def script(session: Session) -> Any:
        answer(await session.call_tool("journal_write", {"focus": "in the named file"}))
        return answer(await session.call_tool("where", {}))

    where = serve(cwd, script, "--db", str(db))
    assert Path(where["db_path"]) == db
    assert cli_json(cwd, "--db", str(db), "journal", "read")["entries"][0]["focus"] == (
        "in the named file"
    )
    assert not list(cwd.rglob("*.db")), "nothing was written in the workspace"


def test_print_config_names_this_install_for_each_client(tmp_path: Path) -> None:
    res = run_cli("mcp", "--print-config", "codex")
    assert res.returncode == 0, res.stderr
    assert 'args = ["mcp"]' in res.stdout and "[mcp_servers.recall-sqlite]" in res.stdout
    res = run_cli("--cwd", str(tmp_path), "mcp", "--print-config", "cursor")
    body = json.loads(res.stdout.split("\n", 1)[1])
    server = body["mcpServers"]["recall-sqlite"]
    assert Path(server["command"]).is_absolute() and Path(server["command"]).name == "recall-sqlite"
    assert server["args"] == ["--cwd", str(tmp_path), "mcp"]
    add, note, settings = client_config("claude-code", str(tmp_path)).split("\n", 2)
    assert add.startswith("claude mcp add --scope user recall-sqlite -- /") and add.endswith(" mcp")
    assert note.startswith("# ") and "settings.json" in note
    (hook,) = json.loads(settings)["hooks"]["SessionStart"][0]["hooks"]
    assert hook["type"] == "command"
    # The hook's command line is one Claude Code runs through a shell: it must answer.
    words = shlex.split(hook["command"])
    assert words[1:] == ["--cwd", str(tmp_path), "hook", "session-start", "--format", "claude-code"]
    res = subprocess.run(words, capture_output=True, text=True, input="{}", check=True)
    assert res.stdout == "" and res.stderr == ""  # no store there yet: nothing to say
    assert run_cli("mcp", "--print-config", "vim").returncode == 2
