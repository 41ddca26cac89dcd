"""Agents on the store (issue 34), beside synapt 0.30.0 (the peer) on the same history, at 1k,
10k, 100k and 1M entries (--quick: 1k only, few calls):

* `MCP journal_read round trip against a no-op tool of the same server`: the official `mcp`
  SDK's stdio client (stdio_client + ClientSession) starts bench/mcp_noop_server.py, which is
  `recall-sqlite mcp`'s own server (mcp_server.serve) with one more tool, a no-op that
  answers {"ok": true} without opening the store. After a warm-up it calls
  journal_read {"n": 5} and the no-op in turn (A B A B), N calls each; the row is their p50
  (p95 in `ours_p95`, `limit_p95`), target <= 1.5x the no-op. In the same turns the
  installed `recall-sqlite --cwd ROOT mcp` (a second session) answers journal_read too
  (`installed_p50`, `installed_p95`: the product as a client starts it; its answers must
  equal the launcher's). `recorded_p50`/`recorded_p95`: a tool of the same server answering
  journal_read's answer as read at its start (the SDK's cost of carrying that answer, its
  checks and JSON both ways, without the store); `ours_vs_recorded` is the store's share
  over that floor. What the round trip is spent on, timed in this process:
  `library_call` (mcp_server.call, the store's answer) and `sdk_validate` /
  `sdk_validate_noop` (jsonschema.validate of the answer against the tool's outputSchema,
  which the SDK runs per call on both the server's and the client's side). The peer is
  synapt's own server (`synapt-recall-server`, run from ROOT) and its `recall_journal`
  tool with action "list" (its five newest entries, the closest to journal_read n=5),
  timed through the same client on the same entries as synapt's JSONL bucket; synapt
  parses its whole bucket per call, so at large sizes its calls are bounded by a time
  budget (`peer_calls` says how many were timed, `peer_bounded` whether that is fewer).
* `hook session-start, whole process (p50|p95)`: `recall-sqlite hook session-start
  --format claude-code`, the whole process as an agent's hook runs it, against
  `python -c "import apsw"` (the floor of any process that opens the store); targets:
  p95 <= 1.5x at 10k, <= 60 ms at 1M (the `p95, absolute` row). The peer is
  `synapt recall hook session-start` run from ROOT on the same bucket. synapt's first
  start compacts its bucket (drops the superseded versions of a session, rewriting the
  file): that run is `peer_first_run`, apart; the timed runs read the compacted file
  (`peer_journal_lines`), bounded like the MCP peer (`peer_runs`).

Each size is one workspace: our store and synapt's bucket of the same entries
(bench/_util.fill_store), HOME a temp directory. The MCP rows run first, so synapt's server
reads the bucket as written (every version, as our store holds them).

    python bench/bench_agents.py [--quick]      # prints JSON rows
    python bench/run.py --only agents [--quick] # the same rows, in the results table
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import fill_store, median_time, row  # noqa: E402
from bench_journal import _compile_package, make_entries  # noqa: E402
from mcp_noop_server import NOOP, NOOP_ANSWER, NOOP_SPEC, RECORDED  # noqa: E402

from recall_sqlite import open_store  # noqa: E402

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent

# What issue 34 asks of the hook: p95 at most 1.5x `import apsw` at 10k, at most 60 ms at 1M.
RATIO_AT = 10_000
RATIO_MOST = 1.5
P95_AT = 1_000_000
P95_MOST = 0.060
# ... and of an MCP read: at most 1.5x a no-op tool of the same server.
MCP_MOST = 1.5
# synapt reads its whole bucket per call: past this many seconds of its calls (or hook runs)
# per row it is timed fewer times, never fewer than PEER_LEAST.
PEER_BUDGET = 60.0
PEER_LEAST = 3
PEER_NAME = "synapt 0.30.0"


def _quantile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["HOME"] = str(home)
    return env


def _ours() -> list[str]:
    """The installed `recall-sqlite` beside this Python (python -m where none is)."""
    exe = BIN / "recall-sqlite"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "recall_sqlite.cli"]


def _bounded(runs: int, one: float) -> int:
    """How many of `runs` a peer's run of `one` seconds gets within PEER_BUDGET."""
    return max(1, min(runs, max(PEER_LEAST, int(PEER_BUDGET / max(one, 1e-9)))))


def _lines(bucket: Path) -> int:
    with open(bucket, "rb") as f:
        return sum(1 for _ in f)


def build(tmp: Path, n: int) -> tuple[Path, Path]:
    """The workspace of size n: our store (and a summary, which the hook shows) and synapt's
    bucket of the same entries. (its root, the bucket)"""
    root = tmp / f"agents{n}"
    _, bucket = fill_store(root, make_entries(n), jsonl=True)
    assert bucket is not None
    with open_store(root) as s:
        s.summaries.add("where the work stands: the hook reads this at every session start")
    return root, bucket


# One timed call: (its sample's name, the server that answers it, the tool, its arguments).
Call = tuple[str, str, str, dict[str, Any]]


async def _time_calls(
    servers: dict[str, list[str]],
    calls: list[Call],
    rounds: int,
    *,
    cwd: Path,
    env: dict[str, str],
    warmup: int = 2,
    bounded: bool = False,
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """Each call's round trip through the SDK's stdio client, `rounds` times in turn (A B A
    B ...) after `warmup` rounds, each server started once. With `bounded`, the rounds are
    cut to what PEER_BUDGET allows at the last warm-up round's pace. (the samples, each
    call's last result)"""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    samples: dict[str, list[float]] = {key: [] for key, _, _, _ in calls}
    last: dict[str, Any] = {}
    clock = time.perf_counter
    # A client keeps a server's stderr apart (synapt's logs a line per request).
    with open(os.devnull, "w") as errlog:
        async with AsyncExitStack() as stack:
            sessions: dict[str, Any] = {}
            for label, cmd in servers.items():
                params = StdioServerParameters(command=cmd[0], args=cmd[1:], cwd=str(cwd), env=env)
                read, write = await stack.enter_async_context(stdio_client(params, errlog))
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                sessions[label] = session
            pace = 0.0
            for _ in range(warmup):
                start = clock()
                for key, label, tool, arguments in calls:
                    last[key] = await sessions[label].call_tool(tool, arguments)
                    assert not last[key].isError, last[key].content
                pace = clock() - start
            if bounded:
                rounds = _bounded(rounds, pace)
            for _ in range(rounds):
                for key, label, tool, arguments in calls:
                    start = clock()
                    last[key] = await sessions[label].call_tool(tool, arguments)
                    samples[key].append(clock() - start)
                    assert not last[key].isError, last[key].content
    return samples, last


def _spent(root: Path, read: dict[str, Any], answer: Any) -> dict[str, float]:
    """What a journal_read round trip spends outside the transport, timed in this process:
    the store's answer (on the kept store, and opening one per call), and the SDK's
    per-call check of an answer against its tool's outputSchema (jsonschema.validate,
    which checks the schema itself too), ours and the no-op's."""
    import jsonschema

    from recall_sqlite.agents import mcp_server
    from recall_sqlite.agents.kept import KeptStore

    schema = next(s for s in mcp_server.tool_specs() if s["name"] == "journal_read")
    kept = KeptStore()
    try:
        # The server's own call: on the read-only store it keeps between reads.
        library_call = median_time(
            lambda: mcp_server.call(str(root), "journal_read", read, None, kept), repeat=21
        )
    finally:
        kept.close()
    return {
        "library_call": library_call,
        # The same call opening the store for itself, as the server did before kept.py.
        "library_call_opened": median_time(
            lambda: mcp_server.call(str(root), "journal_read", read), repeat=21
        ),
        "sdk_validate": median_time(
            lambda: jsonschema.validate(answer, schema["outputSchema"]), repeat=21
        ),
        "sdk_validate_noop": median_time(
            lambda: jsonschema.validate(NOOP_ANSWER, NOOP_SPEC["outputSchema"]), repeat=21
        ),
    }


def bench_mcp(tmp: Path, root: Path, bucket: Path, n: int, calls: int) -> list[dict[str, Any]]:
    import anyio

    env = _env(tmp)
    read = {"n": 5}
    ours_samples, ours_last = anyio.run(
        lambda: _time_calls(
            {
                "bench": [sys.executable, str(HERE / "mcp_noop_server.py"), "--cwd", str(root)],
                "installed": [*_ours(), "--cwd", str(root), "mcp"],
            },
            [
                ("ours", "bench", "journal_read", read),
                ("noop", "bench", NOOP, {}),
                ("recorded", "bench", RECORDED, read),
                ("installed", "installed", "journal_read", read),
            ],
            calls,
            cwd=root,
            env=env,
        )
    )
    answer = ours_last["ours"].structuredContent
    assert answer == ours_last["installed"].structuredContent
    assert len(answer["entries"]) == 5 and answer["total"] > 0, answer
    assert ours_last["noop"].structuredContent == NOOP_ANSWER
    assert ours_last["recorded"].structuredContent == answer
    spent = _spent(root, read, answer)
    peer_lines = _lines(bucket)
    peer_samples, peer_last = anyio.run(
        lambda: _time_calls(
            {"synapt": [str(BIN / "synapt-recall-server")]},
            [("peer", "synapt", "recall_journal", {"action": "list"})],
            calls,
            cwd=root,
            env=env,
            bounded=True,
        )
    )
    peer_text = "\n".join(getattr(c, "text", "") for c in peer_last["peer"].content)
    # Its five newest, "---" between them: an empty or failed read would time nothing.
    assert peer_text.count("\n---\n") == 4, peer_text[:300]
    p50 = {k: _quantile(v, 0.5) for k, v in {**ours_samples, **peer_samples}.items()}
    p95 = {k: _quantile(v, 0.95) for k, v in {**ours_samples, **peer_samples}.items()}
    peer_calls = len(peer_samples["peer"])
    return [
        row(
            "agents",
            "MCP journal_read round trip against a no-op tool of the same server (p50)",
            n=n,
            ours=p50["ours"],
            limit=p50["noop"],
            limit_name="a no-op tool of the same server",
            peer=p50["peer"],
            peer_name=f"{PEER_NAME} synapt-recall-server, recall_journal list",
            target=f"<= {MCP_MOST:g}x no-op tool",
            ok=p50["ours"] <= MCP_MOST * p50["noop"],
            calls=calls,
            ours_p95=p95["ours"],
            limit_p95=p95["noop"],
            recorded_p50=p50["recorded"],
            recorded_p95=p95["recorded"],
            ours_vs_recorded=p50["ours"] / p50["recorded"],
            installed_p50=p50["installed"],
            installed_p95=p95["installed"],
            **spent,
            peer_p95=p95["peer"],
            peer_calls=peer_calls,
            peer_bounded=peer_calls < calls,
            peer_journal_lines=peer_lines,
            peer_same_newest=answer["entries"][0]["focus"] in peer_text,
        )
    ]


def bench_hook(tmp: Path, root: Path, bucket: Path, n: int, repeat: int) -> list[dict[str, Any]]:
    env = _env(tmp)
    hook = [*_ours(), "--cwd", str(root), "hook", "session-start", "--format", "claude-code"]
    peer_hook = [str(BIN / "synapt"), "recall", "hook", "session-start"]
    # name -> (command, where it runs): synapt's hook finds its bucket from the directory.
    cmds: dict[str, tuple[list[str], Path | None]] = {
        "ours": (hook, None),
        "apsw": ([sys.executable, "-c", "import apsw"], None),
        "peer": (peer_hook, root),
    }
    hook_input = json.dumps({"hook_event_name": "SessionStart", "source": "startup"})

    def run(k: str) -> subprocess.CompletedProcess[str]:
        cmd, cwd = cmds[k]
        return subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, env=env, input=hook_input, check=True
        )

    for k in ("ours", "apsw"):  # warm-up; the hook must answer (it exits 0 on failure too)
        assert not run(k).stderr
    assert "hookSpecificOutput" in run("ours").stdout
    start = time.perf_counter()
    first = run("peer")  # its first start compacts the bucket: timed apart
    peer_first_run = time.perf_counter() - start
    assert "Journal read:" in first.stdout, first.stdout[:300]
    start = time.perf_counter()
    run("peer")
    peer_runs = _bounded(repeat, time.perf_counter() - start)
    # Interleaved, so a drift in the machine's speed hits every command alike.
    samples: dict[str, list[float]] = {k: [] for k in cmds}
    for i in range(repeat):
        for k in cmds:
            if k == "peer" and i >= peer_runs:
                continue
            t = time.perf_counter()
            run(k)
            samples[k].append(time.perf_counter() - t)
    p50 = {k: _quantile(v, 0.5) for k, v in samples.items()}
    p95 = {k: _quantile(v, 0.95) for k, v in samples.items()}
    extra = {
        "runs": repeat,
        "ours_p95": p95["ours"],
        "apsw_p95": p95["apsw"],
        "peer_p95": p95["peer"],
        "peer_runs": peer_runs,
        "peer_first_run": peer_first_run,
        "peer_journal_lines": _lines(bucket),
    }
    peer_name = f"{PEER_NAME} synapt recall hook session-start"
    rows = [
        row(
            "agents",
            "hook session-start, whole process (p50)",
            n=n,
            ours=p50["ours"],
            limit=p50["apsw"],
            limit_name="python -c 'import apsw'",
            peer=p50["peer"],
            peer_name=peer_name,
            **extra,
        ),
        row(
            "agents",
            "hook session-start, whole process (p95)",
            n=n,
            ours=p95["ours"],
            limit=p95["apsw"],
            limit_name="python -c 'import apsw' (p95)",
            peer=p95["peer"],
            peer_name=f"{peer_name} (p95)",
            target=f"<= {RATIO_MOST:g}x import apsw" if n == RATIO_AT else "",
            ok=p95["ours"] <= RATIO_MOST * p95["apsw"] if n == RATIO_AT else None,
            **extra,
        ),
    ]
    if n == P95_AT:
        rows.append(
            row(
                "agents",
                "hook session-start, whole process (p95, absolute)",
                n=n,
                ours=p95["ours"],
                peer=p95["peer"],
                peer_name=f"{peer_name} (p95)",
                target=f"<= {P95_MOST * 1e3:g} ms",
                ok=p95["ours"] <= P95_MOST,
                **extra,
            )
        )
    return rows


def run(quick: bool) -> list[dict[str, Any]]:
    _compile_package()
    sizes = [1_000] if quick else [1_000, RATIO_AT, 100_000, P95_AT]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="recall-bench-agents-") as d:
        tmp = Path(d)
        for n in sizes:
            root, bucket = build(tmp, n)
            # MCP first: synapt's hook rewrites (compacts) its bucket on its first start.
            rows += bench_mcp(tmp, root, bucket, n, 20 if quick else 200)
            rows += bench_hook(tmp, root, bucket, n, 3 if quick else 40)
    return rows


if __name__ == "__main__":
    print(json.dumps(run("--quick" in sys.argv), indent=2))
