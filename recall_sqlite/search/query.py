"""Any text a person types is a query: cut into words, each quoted for FTS5, so no input is
FTS syntax. Double-quoted phrases and a trailing `*` (prefix) keep their meaning;
AND/OR/NOT/NEAR, `-`, `:`, `^`, parentheses and quotes that do not pair are words or
separators. Every word must match (implicit AND)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..checks import require_type
from ..limits import MAX_QUERY_TERMS


@dataclass(frozen=True)
class Term:
    text: str  # the words as typed (a phrase may hold several)
    phrase: bool = False  # typed in double quotes: the words must be adjacent, in order
    prefix: bool = False  # a trailing `*`: the last word is a prefix

    def fts(self) -> str:
        return '"' + self.text.replace('"', '""') + '"' + ("*" if self.prefix else "")

    def __str__(self) -> str:
        body = f'"{self.text}"' if self.phrase else self.text
        return body + ("*" if self.prefix else "")


@dataclass(frozen=True)
class ParsedQuery:
    """What a typed query was read as: `terms`, every one of which must match, and the
    FTS5 expression built from them ('' when nothing searchable was typed)."""

    text: str  # as typed, controls and lone surrogates made spaces
    terms: tuple[Term, ...]
    truncated: bool = False  # more than MAX_QUERY_TERMS words were typed; the rest were dropped

    @cached_property
    def match(self) -> str:
        # Cached: every hit's deferred snippet asks for it again.
        return " ".join(t.fts() for t in self.terms)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "terms": [str(t) for t in self.terms],
            "match": self.match,
            "truncated": self.truncated,
        }


def _searchable(text: str) -> bool:
    """Could the FTS5 tokenizer find a word in `text`? Letters and digits, or anything
    outside ASCII (the tokenizer decides those; an empty phrase is harmless in an AND)."""
    return any(c.isalnum() or ord(c) > 127 for c in text)


def _clean(text: str) -> str:
    # Controls (NUL ends an FTS5 string early: "unterminated string") and lone surrogates
    # (not encodable as UTF-8) become spaces; they are separators to the tokenizer anyway.
    # Printable text (the usual query) holds neither: str.isprintable is false for both.
    if text.isprintable():
        return text
    return "".join(" " if unicodedata.category(c) in ("Cc", "Cs") else c for c in text)


def parse_query(text: object) -> ParsedQuery:
    """Read any text as words to search for. Never raises for the text's content; only a
    non-string is an error."""
    s = _clean(require_type("a search query", text, str, what="a string"))
    terms: list[Term] = []
    seen: set[tuple[str, bool, bool]] = set()
    truncated = False

    def add(body: str, phrase: bool, prefix: bool) -> None:
        nonlocal truncated
        body = body.strip()
        if not _searchable(body):
            return
        key = (body.casefold(), phrase, prefix)
        if key in seen:
            return
        if len(terms) >= MAX_QUERY_TERMS:
            truncated = True
            return
        seen.add(key)
        terms.append(Term(body, phrase, prefix))

    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == '"':
            close = s.find('"', i + 1)
            if close > i:
                prefix = close + 1 < n and s[close + 1] == "*"
                add(s[i + 1 : close], " " in s[i + 1 : close].strip(), prefix)
                i = close + (2 if prefix else 1)
                continue
            i += 1  # a quote that does not pair is punctuation
            continue
        if c.isspace() or c in "()":
            i += 1
            continue
        j = i
        while j < n and not (s[j].isspace() or s[j] in '()"'):
            j += 1
        chunk = s[i:j]
        stripped = chunk.rstrip("*")
        add(stripped, False, len(stripped) < len(chunk))
        i = j
    # The cleaned text: a lone surrogate kept here would make JSON output invalid UTF-8.
    return ParsedQuery(s, tuple(terms), truncated)
