"""`recall-sqlite mcp` with one more tool, `noop`, for the agents suite (issue 34): the limit
a `journal_read` round trip is timed against. The same server (recall_sqlite.agents.
mcp_server.serve) and dispatch as the product's; the no-op answers a trivial structured
result without opening the store, so the gap between the two is what the store's call costs.
A second extra tool, `recorded_read`, answers journal_read {"n": 5}'s answer as it was read
once when the server started, under journal_read's own outputSchema: the SDK's cost of
carrying that answer (its checks, its JSON both ways), without the store.

    python bench/mcp_noop_server.py --cwd ROOT      # serves over stdio, as `recall-sqlite mcp`
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from recall_sqlite.agents.mcp_server import call, serve, tool_specs  # noqa: E402
from recall_sqlite.answers import DRAFT  # noqa: E402

NOOP = "noop"
NOOP_ANSWER = {"ok": True}
NOOP_SPEC: dict[str, Any] = {
    "name": NOOP,
    "description": "Does nothing (the bench's limit of a tool's round trip).",
    # The dialect of the store's tools (answers.py), so the SDK's checks cost both alike.
    "inputSchema": {
        "$schema": DRAFT,
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    },
    "outputSchema": {
        "$schema": DRAFT,
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
    },
    "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
}


def _noop(arguments: dict[str, Any]) -> dict[str, Any]:
    return dict(NOOP_ANSWER)


RECORDED = "recorded_read"
RECORDED_ARGUMENTS = {"n": 5}


def _recorded_spec() -> dict[str, Any]:
    read = next(s for s in tool_specs() if s["name"] == "journal_read")
    described = "journal_read's answer as read at the server's start (the bench's limit)."
    return {**read, "name": RECORDED, "description": described}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cwd", required=True, help="serve this directory's store")
    args = parser.parse_args(argv)
    recorded = call(args.cwd, "journal_read", dict(RECORDED_ARGUMENTS))
    serve(
        args.cwd,
        extra_tools={
            NOOP: (NOOP_SPEC, _noop),
            RECORDED: (_recorded_spec(), lambda arguments: recorded),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
