"""A real MCP client (the `mcp` package's stdio client) against `recall-sqlite synapt-server`:
write with `recall_journal` from a subdirectory, read it from the root in a second server
process; the entry is in the SQLite store and no nested JSONL exists."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from recall_sqlite import open_store
from tests.helpers import new_repo

mcp = pytest.importorskip("mcp")

BIN = Path(sys.executable).parent


Calls = list[tuple[str, dict[str, str]]]


async def _session(cwd: Path, calls: Calls) -> tuple[set[str], list[str]]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=str(BIN / "recall-sqlite"),
        args=["synapt-server"],
        cwd=str(cwd),
        env=dict(os.environ),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name for t in (await session.list_tools()).tools}
        answers = []
        for name, arguments in calls:
            result = await session.call_tool(name, arguments)
            answers.append("".join(getattr(c, "text", "") for c in result.content))
    return tools, answers


@pytest.mark.slow
def test_write_from_a_subdirectory_read_from_the_root(tmp_path: Path) -> None:
    import anyio

    root = tmp_path / "repo"
    sub = root / "server" / "api"
    sub.mkdir(parents=True)
    new_repo(root, commit=False)
    tools, wrote = anyio.run(
        _session,
        sub,
        [
            (
                "recall_journal",
                {"action": "write", "focus": "mcp api work", "next_steps": "wire the client"},
            )
        ],
    )
    assert {"recall_journal", "recall_resume"} <= tools
    assert wrote[0].startswith("Journal entry written."), wrote
    _, read = anyio.run(
        _session,
        root,
        [("recall_journal", {"action": "read"}), ("recall_journal", {"action": "pending"})],
    )
    assert "mcp api work" in read[0]
    assert "wire the client" in read[1]
    with open_store(root) as store:
        assert [e.focus for e in store.journal.read(5).entries] == ["mcp api work"]
    nested = [p for p in root.rglob("*.jsonl") if (root / ".synapt") not in p.parents]
    assert nested == []
    assert not (sub / ".synapt").exists()
