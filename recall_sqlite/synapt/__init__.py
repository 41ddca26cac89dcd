"""synapt on recall-sqlite: synapt 0.30.x's journal API answered from the store.

    import recall_sqlite.synapt
    recall_sqlite.synapt.activate()      # unmodified synapt now reads and writes the store

`recall-sqlite synapt ARGS...` and `recall-sqlite synapt-server` run synapt's CLI (hooks
included) and its MCP server activated. Importing this package imports nothing of synapt;
`activate()` does.

patch.py     synapt's journal functions rebound in an unmodified synapt 0.30.x
api.py       synapt's journal API (`synapt.recall.journal`) answered from the store
paths.py     synapt's journal paths <-> the store's scopes, from the filesystem alone
stores.py    one open store per (workspace, worktree); the first-use import and the mirror
lazy.py      whole-worktree reads and their dedup, answered from the store's heads
startup.py   synapt's session start served a few versions, not the history
cli.py       `recall-sqlite synapt ...` and `synapt-server`: synapt's CLI and MCP server"""

from __future__ import annotations


def activate() -> list[str]:
    """Rebind synapt's journal functions wherever synapt 0.30.x holds them (idempotent);
    raises HostError for a synapt version it does not know. Returns what was rebound."""
    from .patch import activate as _activate

    return _activate()


__all__ = ["activate"]
