"""Issue 16's "done when": a new user's session, scripted. History written by stock synapt in
a git repository with subdirectories and a linked worktree -> import -> synapt activated
(its CLI, its session-start hook, its MCP server) from subdirectories and the worktree ->
doctor and verify exit 0 after every step -> a secret forgotten: no file under the
workspace holds it and no read shows it -> switched back (export --to-buckets): stock synapt
started in each worktree's root reads every entry of that worktree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recall_sqlite import open_store
from tests.helpers import run_cli, stock_reads, store_reads, synapt_user, ties_unordered, user_env

mcp = pytest.importorskip("mcp")

BIN = Path(sys.executable).parent
SECRET = "ghp_NEWUSERsecretTOKEN0123456789abcdef"


def _run(argv: list[str], cwd: Path, home: Path, stdin: str | None = None) -> str:
    res = subprocess.run(
        argv, cwd=cwd, env=user_env(home), input=stdin, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, (argv, cwd, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    return res.stdout


def _activated(cwd: Path, home: Path, *args: str, stdin: str | None = None) -> str:
    return _run([str(BIN / "recall-sqlite"), "synapt", *args], cwd, home, stdin)


def _healthy(repo: Path, home: Path, step: str) -> None:
    for cmd in ("doctor", "verify"):
        res = run_cli(cmd, cwd=repo, env=user_env(home))
        assert res.returncode == 0, (step, cmd, res.stdout, res.stderr)


async def _mcp(cwd: Path, home: Path, calls: list[tuple[str, dict[str, str]]]) -> list[str]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=str(BIN / "recall-sqlite"), args=["synapt-server"], cwd=str(cwd), env=user_env(home)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        answers = []
        for name, arguments in calls:
            result = await session.call_tool(name, arguments)
            answers.append("".join(getattr(c, "text", "") for c in result.content))
    return answers


def _holding(top: Path, text: str) -> list[str]:
    """Every file under `top` that holds `text`: the buckets, synapt's other files and the
    store's database files alike (forget runs with secure_delete and empties the WAL)."""
    return sorted(str(p) for p in top.rglob("*") if p.is_file() and text.encode() in p.read_bytes())


@pytest.mark.slow
def test_a_new_users_session(tmp_path: Path) -> None:
    import anyio

    # Months of stock synapt, from wherever the user stood (a secret pasted on the way).
    foci = (
        "root: the plan",
        "server: the gateway",
        f"api: pasted the token {SECRET}",
        "feat: the branch",
        "feat docs: the guide",
    )
    home, repo, feat = synapt_user(tmp_path, "myproj", foci)

    assert run_cli("import", cwd=repo / "server", env=user_env(home)).returncode == 0
    _healthy(repo, home, "import")

    # Activated: the CLI from a subdirectory and from the worktree, the session-start hook,
    # the MCP server (which writes the secret again, from the worktree's subdirectory).
    listed = _activated(repo / "server" / "api", home, "recall", "journal", "--list", "--show", "9")
    assert "root: the plan" in listed and "server: the gateway" in listed
    _activated(repo / "server" / "api", home, "recall", "journal", "--write", "--focus", "api: v2")
    _healthy(repo, home, "CLI write from a subdirectory")
    _activated(feat / "docs", home, "recall", "journal", "--write", "--focus", "feat: more docs")
    _healthy(repo, home, "CLI write from the worktree")
    hook = _activated(repo / "server", home, "recall", "hook", "session-start", stdin="{}")
    assert "api: v2" in hook or '"shown"' in hook
    _healthy(repo, home, "session-start hook")
    wrote = anyio.run(
        _mcp,
        feat / "docs",
        home,
        [("recall_journal", {"action": "write", "focus": f"feat: secret {SECRET} again"})],
    )
    assert wrote[0].startswith("Journal entry written."), wrote
    read = anyio.run(_mcp, repo, home, [("recall_journal", {"action": "read"})])
    assert "api: v2" in read[0]
    _healthy(repo, home, "MCP write and read")

    # Forget the secret: every version that holds it, and every copy in a file.
    found = json.loads(
        run_cli(
            "journal", "search", SECRET, "--all-worktrees", "--json",
            cwd=repo, env=user_env(home),
        ).stdout
    )  # fmt: skip
    ids = [e["id"] for e in found["entries"]]
    assert len(ids) == 2
    forgot = run_cli(
        "journal", "forget", "--scrub-sources", *ids, "--json", cwd=repo, env=user_env(home)
    )
    assert forgot.returncode == 0, forgot.stderr
    assert json.loads(forgot.stdout)["copies_left"] == []
    assert _holding(tmp_path, SECRET) == []
    for where in (repo, feat):
        assert SECRET not in json.dumps(store_reads(where))
    with open_store(repo, read_only=True) as s:
        assert s.journal.search(SECRET, all_worktrees=True).total == 0
    _healthy(repo, home, "forget")

    # Switch back: stock synapt in each worktree's root reads what the store holds there.
    assert run_cli("export", "--to-buckets", cwd=repo, env=user_env(home)).returncode == 0
    _healthy(repo, home, "export --to-buckets")
    for root, count in ((repo, 3), (feat, 3)):
        ours = store_reads(root)
        theirs = stock_reads(root, home)
        assert len(ours) == count, [e["focus"] for e in ours]
        assert ties_unordered(theirs) == ties_unordered(ours), root
    assert _holding(tmp_path, SECRET) == []
    assert os.environ.get("SYNAPT_RECALL_ROOT") is None
