"""synapt on recall-sqlite: synapt 0.30.x's journal API answered from the store.

    import recall_sqlite.synapt
    recall_sqlite.synapt.activate()      # unmodified synapt now reads and writes the store

`recall-sqlite synapt ARGS...` and `recall-sqlite synapt-server` run synapt's CLI (hooks
included) and its MCP server activated. Importing this package imports nothing of synapt;
`activate()` does."""

from __future__ import annotations


def activate() -> list[str]:
    """Rebind synapt's journal functions wherever synapt 0.30.x holds them (idempotent);
    raises HostError for a synapt version it does not know. Returns what was rebound."""
    from .patch import activate as _activate

    return _activate()


__all__ = ["activate"]
