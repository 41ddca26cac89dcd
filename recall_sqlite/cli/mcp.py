"""`recall-sqlite mcp`: serve the store over stdio to an MCP client (recall_sqlite/agents/);
`--print-config CLIENT` prints the lines a client's config needs for this install."""

from __future__ import annotations

import argparse
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def cmd_mcp(args: argparse.Namespace) -> int:
    from ..agents import mcp_server

    if args.print_config is not None:
        cwd = os.path.abspath(args.cwd) if args.cwd else None
        db = os.path.abspath(args.db) if args.db else None
        sys.stdout.write(mcp_server.client_config(args.print_config, cwd, db) + "\n")
        return 0
    try:
        import mcp  # noqa: F401 - the SDK is an extra: say how to install it, not a traceback
    except ModuleNotFoundError:
        from ..dist import install_hint
        from ..errors import UsageError

        raise UsageError(f"this command needs the mcp SDK: {install_hint('mcp')}") from None
    mcp_server.serve(args.cwd or os.getcwd(), args.db)
    return 0


def register(sub: Any, jp: argparse.ArgumentParser) -> None:
    from ..agents.mcp_server import CLIENTS

    m = sub.add_parser("mcp", help="serve the store to an MCP client over stdio")
    m.add_argument(
        "--print-config",
        metavar="CLIENT",
        choices=CLIENTS,
        help=f"print the config lines a client needs ({', '.join(CLIENTS)}) and exit",
    )
    m.set_defaults(func=cmd_mcp)
