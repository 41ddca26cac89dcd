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

from _util import median_time, row  # noqa: E402
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
    stock_cmd = [str(BIN / "synapt")]
    ours_cmd = [str(BIN / "recall-sqlite"), "synapt"]
    # The first activated start imports the bucket: measured apart, not in the medians.
    start = time.perf_counter()
    first = _hook(ours_cmd, ours_root, env)
    first_use = time.perf_counter() - start
    same = _journal_line(first) == _journal_line(_hook(stock_cmd, stock_root, env))
    ours = median_time(lambda: _hook(ours_cmd, ours_root, env), repeat=repeat)
    peer = median_time(lambda: _hook(stock_cmd, stock_root, env), repeat=repeat)
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
            "first activated session-start (imports the bucket)",
            n=n,
            ours=first_use,
            target="(stated)",
        ),
    ]


async def _mcp_read(cmd: list[str], cwd: Path, env: dict[str, str], repeat: int) -> float:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=cmd[0], args=cmd[1:], cwd=str(cwd), env=env)
    samples: list[float] = []
    async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        for i in range(repeat + 1):
            start = time.perf_counter()
            await session.call_tool("recall_journal", {"action": "read"})
            if i:  # the first call warms the server
                samples.append(time.perf_counter() - start)
    samples.sort()
    return samples[len(samples) // 2]


def bench_mcp(tmp: Path, n: int, repeat: int) -> list[dict[str, Any]]:
    import anyio

    env = _env(tmp / f"home-{n}")
    stock_root, ours_root = tmp / f"stock-{n}" / "repo", tmp / f"ours-{n}" / "repo"
    ours = anyio.run(
        _mcp_read, [str(BIN / "recall-sqlite"), "synapt-server"], ours_root, env, repeat
    )
    peer = anyio.run(_mcp_read, [str(BIN / "synapt-recall-server")], stock_root, env, repeat)
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
        )
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
