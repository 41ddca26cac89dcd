"""`recall-sqlite browse`: this workspace's store in Datasette, read-only, on loopback
(recall_sqlite/browse/)."""

from __future__ import annotations

import argparse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def cmd_browse(args: argparse.Namespace) -> int:
    from ..browse import serve
    from ..errors import NoStoreError, UsageError
    from ..store import open_store

    # Checked before the store is looked for: a missing extra is the first thing to fix.
    serve.require_datasette()
    try:
        store = open_store(args.cwd, db_path=args.db, read_only=True)
    except NoStoreError:
        raise UsageError(
            "no store in this workspace yet, nothing to browse (the first write makes one)"
        ) from None
    with store:
        path = store.workspace.db_path
    serve.serve(
        path,
        host=args.host,
        port=args.port,
        explicit_host=args.host is not None,
        open_browser=not args.no_open,
    )
    return 0


def _port(text: str) -> int:
    from ._show import int_at_least

    port = int_at_least(text, 1)
    if port > 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port (1-65535)")
    return port


def register(sub: Any, jp: argparse.ArgumentParser) -> None:
    from ..browse.serve import DEFAULT_HOST, DEFAULT_PORT

    b = sub.add_parser(
        "browse", help="look at the store in a web browser (Datasette, read-only, on loopback)"
    )
    b.add_argument(
        "--port",
        type=_port,
        default=DEFAULT_PORT,
        help=f"the port to serve on (default {DEFAULT_PORT})",
    )
    b.add_argument(
        "--host",
        default=None,
        help=f"the address to serve on (default {DEFAULT_HOST}); a non-loopback one opens "
        "the memory to that network",
    )
    b.add_argument(
        "--no-open", action="store_true", help="print the URL only; do not open a browser"
    )
    b.set_defaults(func=cmd_browse)
