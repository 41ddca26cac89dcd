"""The Datasette plugin of `recall-sqlite browse`: what metadata alone cannot say.

* SQL functions for the canned queries, so that they apply the journal's own rules instead
  of a copy: `recall_step_key(step)` (journal/carry.py's normalisation of a next step, by
  which a done item retires it) and `recall_is_collapsed(text)` (tool-call markup a
  collapsed field swallowed, never served as a step).
* List columns (JSON arrays of strings: done, decisions, next_steps, ...) rendered as lists,
  and the 16-byte entry ids of the raw tables as the hex the views show."""

from __future__ import annotations

import json

from datasette import hookimpl
from markupsafe import Markup, escape

from ..journal.carry import is_collapsed, step_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

# The journal's list columns (schema.sql: JSON arrays of strings).
LIST_COLUMNS = frozenset({"done", "decisions", "next_steps", "files_modified", "git_log"})
# Columns that hold a content id as 16 bytes (journal_entries, the tombstones, vectors).
ID_COLUMNS = frozenset({"id", "uid", "owner"})


def _step_key(step: object) -> str | None:
    return step_key(step) if isinstance(step, str) else None


def _is_collapsed(text: object) -> int:
    return int(is_collapsed(text))


def prepare_connection(conn: sqlite3.Connection) -> None:
    conn.create_function("recall_step_key", 1, _step_key, deterministic=True)
    conn.create_function("recall_is_collapsed", 1, _is_collapsed, deterministic=True)


def as_list(value: object) -> list[str] | None:
    """The items of a list column's text, or None when it is not a JSON array of strings."""
    if not isinstance(value, str) or not value.startswith("["):
        return None
    try:
        items = json.loads(value)
    except ValueError:
        return None
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        return None
    return items


def render_cell(value: object, column: str) -> Markup | None:
    if column in LIST_COLUMNS:
        items = as_list(value)
        if items is None:
            return None
        if not items:
            return Markup('<span class="recall-empty">–</span>')
        return Markup("<ul>{}</ul>").format(
            Markup("").join(Markup("<li>{}</li>").format(escape(i)) for i in items)
        )
    if column in ID_COLUMNS and isinstance(value, bytes) and len(value) == 16:
        return Markup("<code>{}</code>").format(value.hex())
    return None


# Marked as hook implementations by a call, not as decorators: the marker is untyped, and a
# decorator would make the functions untyped too.
for _hook in (prepare_connection, render_cell):
    hookimpl(_hook)
