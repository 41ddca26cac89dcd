"""Snippets: a short piece of the best matched field with the matched words' spans, read
from FTS5's snippet() with marker characters the hit's own text does not contain. Worked
out when a hit is first asked for one (`deferred`), since most hosts never look."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import Concatenate, ParamSpec, TypeVar

    from apsw import Connection

    from ..context import StoreContext
    from ..journal.entry import JournalEntry

    P = ParamSpec("P")
    T = TypeVar("T")

# Tokens of context a snippet shows.
SNIPPET_TOKENS = 12


# Marker pairs for FTS5's snippet(): the first pair absent from a hit's own text is used,
# so a marker is never confused with text.
_MARKERS = (("\x02", "\x03"), ("\ue000", "\ue001"), ("\U000ffffd", "\U0010fffd"))


@dataclass(frozen=True)
class Snippet:
    """A short piece of the matching field with the matched words' spans (character
    offsets into `text`)."""

    text: str
    highlights: tuple[tuple[int, int], ...] = ()

    def marked(
        self, open_: str = "**", close: str = "**", escape: Callable[[str], str] | None = None
    ) -> str:
        """The text with each matched span between `open_` and `close`; `escape` (e.g. the
        CLI's control-character escaping) applies to the text, never to the marks."""
        e = escape or str
        out, last = [], 0
        for a, b in self.highlights:
            out += [e(self.text[last:a]), open_, e(self.text[a:b]), close]
            last = b
        out.append(e(self.text[last:]))
        return "".join(out)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "highlights": [list(h) for h in self.highlights]}


def unmark(raw: str, open_: str, close: str) -> Snippet:
    text: list[str] = []
    spans: list[tuple[int, int]] = []
    pos, start = 0, -1
    for c in raw:
        if c == open_:
            start = pos
        elif c == close:
            if start >= 0:
                spans.append((start, pos))
            start = -1
        elif c == "\n":  # list items are lines in the index: shown on one line
            text.append(" / ")
            pos += 3
        else:
            text.append(c)
            pos += 1
    return Snippet("".join(text), tuple(spans))


def markers_for(texts: Sequence[str]) -> tuple[str, str]:
    for pair in _MARKERS:
        if not any(pair[0] in t or pair[1] in t for t in texts):
            return pair
    return _MARKERS[-1]  # all three pairs in one entry: highlights may be off, text is not


def plain_snippet(text: str, limit: int = 100) -> Snippet:
    """For a hit the text index did not match (found by its vector only)."""
    flat = " / ".join(line for line in text.splitlines() if line.strip())
    return Snippet(flat if len(flat) <= limit else flat[:limit].rstrip() + "…")


def deferred(
    ctx: StoreContext,
    fn: Callable[Concatenate[Connection, P], T],
    *args: P.args,
    **kwargs: P.kwargs,
) -> Callable[[], T]:
    """`fn(conn, *args)` in a read of its own, when a hit is first asked for it (the store
    must still be open then)."""

    def run() -> T:
        with ctx.db.read() as conn:
            return fn(conn, *args, **kwargs)

    return run


# The entry index's columns, in its order (schema.sql journal_fts).
FIELDS: tuple[str, ...] = ("focus", "done", "decisions", "next_steps", "files_modified")
# Which matched field a hit names first: the order of the bm25 weights in schema.sql.
FIELD_PREFERENCE: tuple[str, ...] = ("focus", "decisions", "done", "next_steps", "files_modified")

_ENTRY_SNIPPET_SQL = (
    "SELECT "
    + ", ".join(
        f"snippet(journal_fts, {i}, ?3, ?4, '…', {SNIPPET_TOKENS})" for i in range(len(FIELDS))
    )
    + " FROM journal_fts WHERE journal_fts MATCH ?1 AND rowid = ?2"
)
_SUMMARY_SNIPPET_SQL = (
    f"SELECT snippet(summaries_fts, 0, ?3, ?4, '…', {SNIPPET_TOKENS * 2})"
    " FROM summaries_fts WHERE summaries_fts MATCH ?1 AND rowid = ?2"
)

Matched = tuple["str | None", "tuple[str, ...]", Snippet]


def _entry_texts(e: JournalEntry) -> list[str]:
    return [
        e.focus,
        "\n".join(e.done),
        "\n".join(e.decisions),
        "\n".join(e.next_steps),
        "\n".join(e.files_modified),
    ]


def entry_snippet(conn: Connection, match: str, seq: int, e: JournalEntry) -> Matched:
    """(best matched field, every matched field, the snippet of the best) of one entry."""
    texts = _entry_texts(e)
    if match:
        open_, close = markers_for(texts)
        rows = conn.execute(_ENTRY_SNIPPET_SQL, (match, seq, open_, close)).fetchall()
        if rows:
            snippets = {
                name: raw
                for name, raw in zip(FIELDS, rows[0], strict=True)
                if isinstance(raw, str) and open_ in raw
            }
            fields = tuple(f for f in FIELD_PREFERENCE if f in snippets)
            if fields:
                return fields[0], fields, unmark(snippets[fields[0]], open_, close)
    first = next((t for t in texts if t.strip()), "")
    return None, (), plain_snippet(first)


def summary_snippet(conn: Connection, match: str, sid: int, text: str) -> Snippet:
    if match:
        open_, close = markers_for([text])
        rows = conn.execute(_SUMMARY_SNIPPET_SQL, (match, sid, open_, close)).fetchall()
        if rows and isinstance(raw := rows[0][0], str) and open_ in raw:
            return unmark(raw, open_, close)
    return plain_snippet(text)
