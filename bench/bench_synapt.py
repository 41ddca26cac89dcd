"""synapt on recall-sqlite (issue 11): unmodified synapt 0.30.0 activated against stock synapt
(JSONL) on the same history, side by side in one run.

    python bench/bench_synapt.py [--quick]      # prints JSON rows

* whole-process session-start hook: `recall-sqlite synapt recall hook session-start`
  against `synapt recall hook session-start`, run from the workspace root;
* `recall_journal read` over MCP (stdio, one server process each, per call).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import row  # noqa: E402
from bench_journal import make_entries  # noqa: E402

BIN = Path(sys.executable).parent


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["HOME"] = str(home)
    return env


def build(root: Path, n: int) -> None:
    """A plain git repository on branch main whose history is where synapt 0.30.0 keeps it
    when run from the root: one bucket named after the checkout."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    bucket = root / ".synapt" / "recall" / "worktrees" / root.name / "journal.jsonl"
    bucket.parent.mkdir(parents=True)
    with open(bucket, "w", encoding="utf-8") as f:
        for e in make_entries(n):
            f.write(json.dumps(e) + "\n")


def _hook(cmd: list[str], root: Path, env: dict[str, str]) -> str:
    res = subprocess.run(
        [*cmd, "recall", "hook", "session-start"],
        cwd=root,
        env=env,
        input="{}",
        capture_output=True,
        text=True,
        check=True,
    )
    return res.stdout


def _journal_line(text: str) -> str:
    """The hook's `Journal read: {...}` fact (mid-line in synapt 0.30's wake line); the
    whole output differs between the two only by paths and run times."""
    found = re.search(r"Journal read: \{[^}]*\}", text)
    if found is None:
        raise RuntimeError(f"no 'Journal read:' in the hook's output: {text[:200]!r}")
    return found.group(0)


def bench_hook(tmp: Path, n: int, repeat: int) -> list[dict[str, Any]]:
    home = tmp / f"home-{n}"
    home.mkdir()
    env = _env(home)
    stock_root, ours_root = tmp / f"stock-{n}" / "repo", tmp / f"ours-{n}" / "repo"
    build(stock_root, n)
    shutil.copytree(stock_root.parent, ours_root.parent, dirs_exist_ok=True)
    empty_root = tmp / f"empty-{n}" / "repo"
    empty_root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(empty_root)], check=True)
    stock_cmd = [str(BIN / "synapt")]
    ours_cmd = [str(BIN / "recall-sqlite"), "synapt"]
    # The first activated start imports the bucket: measured apart, not in the medians.
    start = time.perf_counter()
    first = _hook(ours_cmd, ours_root, env)
    first_use = time.perf_counter() - start
    same = _journal_line(first) == _journal_line(_hook(stock_cmd, stock_root, env))
    _hook(ours_cmd, empty_root, env)  # its first start makes its (empty) store
    samples: dict[str, list[float]] = {"ours": [], "peer": [], "empty": []}
    roots = {"ours": (ours_cmd, ours_root), "peer": (stock_cmd, stock_root)}
    roots["empty"] = (ours_cmd, empty_root)
    # Interleaved, so a drift in the machine's speed hits the three alike.
    for _ in range(repeat):
        for k, (cmd, where) in roots.items():
            t = time.perf_counter()
            _hook(cmd, where, env)
            samples[k].append(time.perf_counter() - t)
    ours, peer, empty = (sorted(samples[k])[repeat // 2] for k in ("ours", "peer", "empty"))
    if n <= 1_000:
        target, ok = "<= stock", ours <= peer
    elif n >= 100_000:
        target, ok = ">= 10x faster than stock", peer >= 10 * ours
    else:
        target, ok = "", None
    return [
        row(
            "synapt",
            "whole-process session-start hook",
            n=n,
            ours=ours,
            peer=peer,
            peer_name="stock synapt 0.30.0 hook",
            target=target,
            ok=ok,
            same_journal_line=same,
        ),
        row(
            "synapt",
            "session-start hook against the same hook on an empty journal",
            n=n,
            ours=ours,
            limit=empty,
            limit_name="activated hook, empty journal",
            target="<= 1.2x",
            ok=ours <= 1.2 * empty,
        ),
        row(
            "synapt",
            "first activated session-start (imports the bucket)",
            n=n,
            ours=first_use,
            target="(stated)",
        ),
    ]


# The activated server with one more tool, a no-op, registered the way synapt registers its
# own (the limit of a call's round trip: transport, framework, synapt's wrapper).
_SERVER_WITH_NOOP = """
import synapt.recall.server as srv
_register = srv.register_tools
def register_tools(mcp):
    _register(mcp)
    @mcp.tool()
    def noop() -> str:
        \"\"\"Does nothing (the benchmark's limit).\"\"\"
        return "ok"
    def noop_directive() -> str:
        \"\"\"Does nothing, inside synapt's own per-tool wrapper.\"\"\"
        return "ok"
    mcp.tool(name="noop_directive")(srv._with_directive_check(noop_directive))
srv.register_tools = register_tools
from recall_sqlite.synapt.cli import main_server
raise SystemExit(main_server([]))
"""


async def _mcp_calls(
    cmd: list[str], cwd: Path, env: dict[str, str], repeat: int, tools: list[str]
) -> dict[str, float]:
    """Median round trip of each tool, called in turn in one session."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    args = {"recall_journal": {"action": "read"}, "noop": {}, "noop_directive": {}}
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], cwd=str(cwd), env=env)
    samples: dict[str, list[float]] = {t: [] for t in tools}
    async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        for i in range(repeat + 1):
            for tool in tools:
                start = time.perf_counter()
                await session.call_tool(tool, args[tool])
                if i:  # the first round warms the server
                    samples[tool].append(time.perf_counter() - start)
    return {t: sorted(v)[len(v) // 2] for t, v in samples.items()}


def bench_mcp(tmp: Path, n: int, repeat: int) -> list[dict[str, Any]]:
    import anyio

    env = _env(tmp / f"home-{n}")
    stock_root, ours_root = tmp / f"stock-{n}" / "repo", tmp / f"ours-{n}" / "repo"
    served = anyio.run(
        _mcp_calls,
        [sys.executable, "-c", _SERVER_WITH_NOOP],
        ours_root,
        env,
        repeat,
        ["recall_journal", "noop", "noop_directive"],
    )
    peer = anyio.run(
        _mcp_calls,
        [str(BIN / "synapt-recall-server")],
        stock_root,
        env,
        repeat,
        ["recall_journal"],
    )["recall_journal"]
    ours, noop, wrapped = served["recall_journal"], served["noop"], served["noop_directive"]
    return [
        row(
            "synapt",
            "recall_journal read over MCP (per call)",
            n=n,
            ours=ours,
            peer=peer,
            peer_name="stock synapt-recall-server",
            target="<= stock",
            ok=ours <= peer,
        ),
        row(
            "synapt",
            "recall_journal read over MCP against a no-op tool",
            n=n,
            ours=ours,
            limit=noop,
            limit_name="a no-op tool in the same server",
            target="<= 2x",
            ok=ours <= 2 * noop,
        ),
        row(
            "synapt",
            "recall_journal read over MCP against a no-op in synapt's per-tool wrapper",
            n=n,
            ours=ours,
            limit=wrapped,
            limit_name="a no-op tool inside synapt's _with_directive_check",
            target="(what is ours)",
        ),
    ]


def run(quick: bool) -> list[dict[str, Any]]:
    sizes = [200, 1_000] if quick else [1_000, 10_000, 100_000]
    repeat = 3 if quick else 7
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="recall-bench-synapt-") as d:
        tmp = Path(d)
        for n in sizes:
            rows += bench_hook(tmp, n, repeat)
            rows += bench_mcp(tmp, n, 5 if quick else 21)
    return rows


if __name__ == "__main__":
    print(json.dumps(run("--quick" in sys.argv), indent=2))
