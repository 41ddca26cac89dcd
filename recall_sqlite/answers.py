"""The JSON shape of every answer, written once: a JSON Schema (draft-07) per call a
host makes of the store, named by the call (`ANSWERS["journal_read"]`), each a whole
document (its `$defs` hold the shared shapes it uses: an entry, a scope, elsewhere, a
summary, a cursor...). The library's `to_dict()` of the call's result, the CLI's `--json`
and the MCP server's structured answers (agents/mcp_server.py, `TOOL_ANSWERS`) are this
shape; tests/unit/answers/test_answers.py holds the library and the CLI to it, and to each
other, and tests/unit/agents/test_mcp_server.py the MCP server to the CLI.

Strict where strictness catches drift: every key the code always emits is required, the
objects the project owns admit no other key, integers are integers and null is allowed
only where it occurs. A read command where no store exists yet answers its empty answer
beside `"store": null` (nothing was created): each read's schema admits that too.

Every answer says its scope and what lies outside it (`scope`, `elsewhere`), as reads
always did: a write the worktree and branch it wrote to, a cursor its branch in the
workspace, a summary its scope (a summary scope: summaries have no worktree), forget,
where and doctor the whole workspace (nothing elsewhere); where no store exists, the scope
the call would have covered, without a workspace id, and nothing elsewhere.

Pure data, importing nothing (not even `typing` at run time): a `journal read` never loads
it (the start-up budget of tests/house/test_architecture.py); the CLI does not need it either."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

# Draft-07, the dialect every JSON Schema validator knows (ajv's default, as MCP clients in
# TypeScript use it). The Python SDK checks a tool's schema against its dialect's
# meta-schema on every call, server and client alike: 2020-12's dynamic meta-schema took
# ~15 ms for journal_read's schema (bench/RESULTS.md, row 'MCP: schema dialect').
DRAFT: Final = "http://json-schema.org/draft-07/schema#"


# The shared shapes stay under `$defs`, where later drafts keep them: a draft-07 validator
# reaches them by JSON pointer, as every $ref here does, and does not check them against
# its meta-schema on every call (the tests check each one: tests/unit/answers/).
_DEFINITIONS: Final = "#/$defs/"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": _DEFINITIONS + name}


def _obj(
    properties: dict[str, Any],
    *,
    optional: tuple[str, ...] = (),
    closed: bool = True,
    description: str = "",
) -> dict[str, Any]:
    """An object whose keys are all required but `optional`; `closed`: no other key (an open
    one is a base that closed shapes extend: _extends)."""
    schema: dict[str, Any] = {"type": "object"}
    if description:
        schema["description"] = description
    schema["properties"] = properties
    schema["required"] = [k for k in properties if k not in optional]
    if closed:
        schema["additionalProperties"] = False
    return schema


def _extends(base: str, properties: dict[str, Any], description: str) -> dict[str, Any]:
    """`base`'s keys and these, and no other. Draft-07 has no unevaluatedProperties to see
    through a $ref: the shape is written out whole once every base is defined
    (_written_out, below DEFS)."""
    return {"description": description, "extends": base, "properties": properties}


def _written_out(defs: dict[str, dict[str, Any]]) -> None:
    """Each extension in `defs` as one closed object: its base's keys, then its own."""
    for name, node in defs.items():
        base = node.get("extends")
        if base is None:
            continue
        inherited = defs[base]
        defs[name] = {
            "type": "object",
            "description": node["description"],
            "properties": {**inherited["properties"], **node["properties"]},
            "required": [*inherited["required"], *node["properties"]],
            "additionalProperties": False,
        }


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def _nullable(kind: str, **more: Any) -> dict[str, Any]:
    return {"type": [kind, "null"], **more}


TEXT: Final = {"type": "string"}
TEXTS: Final = _array(TEXT)
FLAG: Final = {"type": "boolean"}
COUNT: Final = {"type": "integer", "minimum": 0}
# The store's own instants (summaries' created_at, cursors' updated_at): timestamps.iso_utc.
INSTANT: Final = {
    "type": "string",
    "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$",
}
NO_STORE: Final = {
    "const": None,
    "description": "no store exists here yet: nothing was read, and nothing was created",
}
NO_ID: Final = {"const": None, "description": "no store yet: the first write mints the id"}
WORKSPACE_ID: Final = _ref("workspace_id")
ELSEWHERE: Final = ("other_worktrees", "other_branches", "other_machines")


def _scope(workspace_id: dict[str, Any], description: str) -> dict[str, Any]:
    return _obj(
        {
            "workspace_id": workspace_id,
            "worktree": _nullable("string", description="a worktree's key; null: every one"),
            "branch": _nullable("string", description="null: every branch"),
            "meaningful": FLAG,
        },
        description=description,
    )


def _summary_scope(workspace_id: dict[str, Any], description: str) -> dict[str, Any]:
    return _obj(
        {
            "workspace_id": workspace_id,
            "branch": _nullable(
                "string", description="with all_branches false, null: the workspace-wide ones"
            ),
            "all_branches": FLAG,
            "kind": _nullable("string", description="null: every kind"),
            "include_superseded": FLAG,
        },
        description=description,
    )


def _scoped(scope: str, elsewhere: str = "elsewhere") -> dict[str, Any]:
    """An answer's `scope` and `elsewhere` properties."""
    return {"scope": _ref(scope), "elsewhere": _ref(elsewhere)}


def _either(*names: str) -> dict[str, Any]:
    return {"anyOf": [_ref(n) for n in names]}


# -- the shared shapes ---------------------------------------------------------------------

DEFS: Final[dict[str, dict[str, Any]]] = {
    "workspace_id": {
        "description": "the workspace's id (a UUID minted once: paths/idfile.py)",
        "type": "string",
        "pattern": "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
    },
    "entry_id": {
        "description": "an entry version's content-addressed id (journal/codec.py)",
        "type": "string",
        "pattern": "^[0-9a-f]{32}$",
    },
    "position": {
        "description": "a journal position: an insertion seq (journal/positions.py)",
        "type": "integer",
        "minimum": 0,
    },
    "scope": _scope(WORKSPACE_ID, "what the answer covers (scope.py Scope)"),
    "unstored_scope": _scope(
        NO_ID, "what the call would have covered, where no store exists yet (scope.py Scope)"
    ),
    "summary_scope": _summary_scope(
        WORKSPACE_ID, "the summaries the answer covers (summaries.py SummaryScope)"
    ),
    "unstored_summary_scope": _summary_scope(
        NO_ID, "the summaries the call would have covered, where no store exists yet"
    ),
    "elsewhere": _obj(
        {name: COUNT for name in ELSEWHERE},
        description="what matches outside the scope: never a silent partial answer",
    ),
    "nothing_elsewhere": _obj(
        {name: {"const": 0} for name in ELSEWHERE},
        description="nothing outside the scope: the whole workspace, or no store yet",
    ),
    # synapt 0.30.0's fields (synapt_fields.py; the tests hold the two to one list), the
    # store's id and worktree, and `extra` only when a legacy line carried unknown keys.
    "entry_fields": _obj(
        {
            "timestamp": {"type": "string", "minLength": 1},
            "session_id": TEXT,
            "branch": TEXT,
            "focus": TEXT,
            "done": TEXTS,
            "decisions": TEXTS,
            "next_steps": TEXTS,
            "files_modified": TEXTS,
            "git_log": TEXTS,
            "auto": FLAG,
            "enriched": FLAG,
            "griptree": TEXT,
            "agent_id": TEXT,
            "repair": FLAG,
            "id": _ref("entry_id"),
            "worktree": TEXT,
            "extra": {"type": "object", "minProperties": 1},
        },
        optional=("extra",),
        closed=False,
        description="an entry version's fields (the base of entry, hit and unread entry)",
    ),
    "entry": _extends("entry_fields", {}, "one entry version (journal/entry.py JournalEntry)"),
    "query": _obj(
        {"text": TEXT, "terms": TEXTS, "match": TEXT, "truncated": FLAG},
        description="the typed query as the search read it (search/query.py)",
    ),
    "entry_hit": _extends(
        "entry_fields",
        {
            "score": {"type": "number"},
            "field": _nullable("string", description="the best matched field; null: a vector"),
            "fields": TEXTS,
            "snippet": TEXT,
            "highlights": _array(
                {
                    "type": "array",
                    "items": [COUNT, COUNT],
                    "additionalItems": False,
                    "minItems": 2,
                    "maxItems": 2,
                }
            ),
            "snippet_text": TEXT,
            "text_rank": _nullable("integer", minimum=1),
            "vector_rank": _nullable("integer", minimum=1),
        },
        "an entry found, with why and where it matched (search/results.py EntryHit)",
    ),
    "carry": _obj(
        {
            "carried": COUNT,
            "retired_by_done": COUNT,
            "retired_earlier": COUNT,
            "withheld": COUNT,
            "oldest_since": _nullable("string"),
        },
        description="what a write carried forward of the previous next steps (journal/carry.py)",
    ),
    "file_copy": _obj(
        {
            "path": TEXT,
            "line": {"type": "integer", "minimum": 0, "description": "0: the whole file"},
            "entry": _ref("entry_id"),
            "removed": FLAG,
            "kind": {"enum": ["bucket", "cache", "other"]},
        },
        description="a line of a file that held a forgotten version (journal/forget.py)",
    ),
    "summary_fields": _obj(
        {
            "id": {"type": "integer", "minimum": 1},
            "workspace_id": _ref("workspace_id"),
            "branch": _nullable("string", description="null: a workspace-wide summary"),
            "kind": {"type": "string", "minLength": 1},
            "text": {"type": "string", "minLength": 1},
            "created_at": INSTANT,
            "created_us": {"type": "integer"},
            "author": _nullable("string", minLength=1),
            "entry_ids": _array(_ref("entry_id")),
            "covers_range": {
                "description": "[first, last] positions, when it covers a range; else null",
                "type": ["array", "null"],
                "items": [_ref("position"), _ref("position")],
                "additionalItems": False,
                "minItems": 2,
                "maxItems": 2,
            },
            "covered_through": _ref("position"),
            "current": FLAG,
            "superseded_by": _nullable("integer", minimum=1),
            "stale": FLAG,
            "newer_entries": COUNT,
        },
        closed=False,
        description="a summary's fields (the base of summary and summary answer)",
    ),
    "summary": _extends("summary_fields", {}, "a summary (summaries.py Summary)"),
    "cursor_fields": _obj(
        {
            "workspace_id": _ref("workspace_id"),
            "branch": TEXT,
            "consumer": {"type": "string", "minLength": 1},
            "position": _ref("position"),
            "updated_at": {"anyOf": [INSTANT, {"type": "null"}]},
            "end": _ref("position"),
            "caught_up": FLAG,
        },
        closed=False,
        description="where a consumer stands on a branch (cursors.py Cursor)",
    ),
    "unread_entry": _extends(
        "entry_fields",
        {"position": _ref("position"), "revision": FLAG},
        "an entry a consumer has not read, at its position (cursors.py UnreadEntry)",
    ),
    "finding": _obj(
        {
            "kind": {"type": "string", "minLength": 1},
            "severity": {"enum": ["error", "warning"]},
            "message": TEXT,
            "repairable": FLAG,
            "data": {"type": "object", "minProperties": 1},
        },
        optional=("data",),
        description="one thing doctor found (doctor/report.py Finding)",
    ),
    # -- the answers' bodies (where two calls answer alike, one body) -------------------
    "read": _obj(
        {
            "entries": _array(_ref("entry")),
            "scope": _ref("scope"),
            "total": COUNT,
            "elsewhere": _ref("elsewhere"),
        },
        description="the newest entries, one per session (journal/results.py ReadResult)",
    ),
    "pending": _obj(
        {
            "pending": TEXTS,
            "scope": _ref("scope"),
            "sessions_considered": COUNT,
            "elsewhere": _ref("elsewhere"),
        },
        description="unresolved next steps (journal/results.py PendingResult)",
    ),
    "search": _obj(
        {
            "entries": _array(_ref("entry_hit")),
            "scope": _ref("scope"),
            "total": COUNT,
            "elsewhere": _ref("elsewhere"),
            "query": _ref("query"),
            "mode": {"enum": ["text", "hybrid"]},
            "fusion": _nullable("string", description="the fusion of a hybrid search"),
        },
        description="entries found, best first (search/results.py EntrySearchResult)",
    ),
    "write": _obj(
        {
            "id": _ref("entry_id"),
            "created": {"type": "boolean", "description": "false: identical content was stored"},
            "entry": _ref("entry"),
            "carry": _ref("carry"),
            "explicit_next_steps": TEXTS,
            **_scoped("scope"),
        },
        description="an entry written (journal/results.py WriteResult): scope, the worktree"
        " and branch written; elsewhere, what a read of that scope counts outside it",
    ),
    "forget": _obj(
        {
            "entries": _array(_ref("entry_id")),
            "sessions": TEXTS,
            "vectors": COUNT,
            "provenance": COUNT,
            "summary_links": COUNT,
            "quarantine_blanked": COUNT,
            "summaries": _array({"type": "integer", "minimum": 1}),
            "wal_emptied": FLAG,
            "copies_removed": _array(_ref("file_copy")),
            "copies_left": _array(_ref("file_copy")),
            "file_errors": TEXTS,
            "replicas": TEXTS,
            "already_forgotten": _array(_ref("entry_id")),
            **_scoped("scope", "nothing_elsewhere"),
        },
        description="entry versions forgotten (journal/forget.py ForgetReport), in the"
        " whole workspace",
    ),
    "summary_answer": _extends(
        "summary_fields",
        _scoped("summary_scope"),
        "a summary with the scope of its answer (summaries.py SummaryAnswer)",
    ),
    "no_summary": _obj(
        {"summary": {"type": "null"}, **_scoped("summary_scope")},
        description="no summary in the scope asked for (summaries.py SummaryAnswer)",
    ),
    "latest_summary": {
        "description": "the newest summary of a scope (summaries.py SummaryAnswer)",
        **_either("summary_answer", "no_summary"),
    },
    "unread": _obj(
        {
            "workspace_id": _ref("workspace_id"),
            "branch": TEXT,
            "consumer": {"type": "string", "minLength": 1},
            "position": _ref("position"),
            "next_position": _ref("position"),
            "more": FLAG,
            "entries": _array(_ref("unread_entry")),
            **_scoped("scope"),
        },
        description="what a consumer has not read, oldest first (cursors.py UnreadResult);"
        " scope: the branch in every worktree",
    ),
    "cursor_move": _extends(
        "cursor_fields",
        {
            "previous": _ref("position"),
            "requested": _ref("position"),
            "moved": FLAG,
            **_scoped("scope"),
        },
        "what an advance did: where the cursor is now (cursors.py CursorMove)",
    ),
    "where": _obj(
        {
            "workspace_id": {
                "description": "null: no store yet (the first write mints the id)",
                "anyOf": [_ref("workspace_id"), {"type": "null"}],
            },
            "workspace_root": TEXT,
            "resolved_by": {"type": "string", "minLength": 1},
            "weak": FLAG,
            "worktree": TEXT,
            "worktree_name": TEXT,
            "worktree_root": TEXT,
            "branch": TEXT,
            "db_path": TEXT,
            "warnings": TEXTS,
            "scope": _either("scope", "unstored_scope"),
            "elsewhere": _ref("nothing_elsewhere"),
        },
        description="the resolved workspace and database (context.py WorkspaceInfo);"
        " scope: the whole workspace",
    ),
    "doctor": _obj(
        {
            "ok": FLAG,
            "database": _nullable("string", description="null: no store, or none that opens"),
            "findings": _array(_ref("finding")),
            "repaired": TEXTS,
            "scope": _either("scope", "unstored_scope"),
            "elsewhere": _ref("nothing_elsewhere"),
        },
        description="every check of the store (doctor/report.py DoctorReport); scope: the"
        " whole workspace (no id: no store, or none that opens)",
    ),
    # -- where no store exists yet ---------------------------------------------------------
    "no_store_entries": _obj(
        {
            "entries": {"type": "array", "maxItems": 0},
            "total": {"const": 0},
            "store": NO_STORE,
            **_scoped("unstored_scope", "nothing_elsewhere"),
        }
    ),
    "no_store_pending": _obj(
        {
            "pending": {"type": "array", "maxItems": 0},
            "store": NO_STORE,
            **_scoped("unstored_scope", "nothing_elsewhere"),
        }
    ),
    "no_store_unread": _obj(
        {
            "entries": {"type": "array", "maxItems": 0},
            "store": NO_STORE,
            **_scoped("unstored_scope", "nothing_elsewhere"),
        }
    ),
    "no_store_summary": _obj(
        {
            "summary": {"type": "null"},
            "store": NO_STORE,
            **_scoped("unstored_summary_scope", "nothing_elsewhere"),
        }
    ),
}
_written_out(DEFS)


def _refs(node: object, found: set[str]) -> None:
    """The definitions' names `node` refers to, directly."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFINITIONS):
            found.add(ref[len(_DEFINITIONS) :])
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def _copied(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _copied(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_copied(v) for v in node]
    return node


def _document(title: str, description: str, root: dict[str, Any]) -> dict[str, Any]:
    """A whole schema: `root` and the definitions it reaches, each document its own copy
    (a host may change one without changing the others)."""
    names: set[str] = set()
    todo = [root]
    while todo:
        found: set[str] = set()
        _refs(todo.pop(), found)
        for name in sorted(found - names):
            names.add(name)
            todo.append(DEFS[name])
    document: dict[str, Any] = _copied(
        {
            "$schema": DRAFT,
            "title": title,
            "description": description,
            **root,
            "$defs": {name: DEFS[name] for name in sorted(names)},
        }
    )
    return document


def _found_or(body: str, empty: str | None) -> dict[str, Any]:
    """An object answer: `body`, or (a read where no store exists) `empty`."""
    if empty is None:
        return {"type": "object", "allOf": [_ref(body)]}  # no siblings beside a $ref
    return {"type": "object", "anyOf": [_ref(body), _ref(empty)]}


# call -> (its answer's body in DEFS, its answer where no store exists, what it is). The
# names are the MCP tools' (issue 34) and say the library call: journal_read is
# store.journal.read, journal_latest store.journal.latest (`journal read -n 1` on the
# command line), journal_pending store.journal.pending_next_steps, where store.workspace,
# doctor store.doctor.
_CALLS: Final = {
    "journal_read": ("read", "no_store_entries", "the newest entries, one per session"),
    "journal_latest": ("read", "no_store_entries", "the newest entry (a read of one)"),
    "journal_pending": ("pending", "no_store_pending", "unresolved next steps"),
    "journal_search": ("search", "no_store_entries", "a full-text search, best first"),
    "journal_write": ("write", None, "an entry written, next steps carried forward"),
    "journal_forget": ("forget", None, "entry versions removed for good"),
    "summary_latest": ("latest_summary", "no_store_summary", "the newest summary of a scope"),
    "summary_add": ("summary_answer", None, "the summary stored"),
    "cursor_unread": ("unread", "no_store_unread", "what a consumer has not read"),
    "cursor_advance": ("cursor_move", None, "a cursor moved forward"),
    "where": ("where", None, "the resolved workspace, worktree, branch and database"),
    "doctor": ("doctor", None, "every check of the store"),
}

ANSWERS: Final[dict[str, dict[str, Any]]] = {
    call: _document(call, what, _found_or(body, empty))
    for call, (body, empty, what) in _CALLS.items()
}

# The MCP tools' answers (recall_sqlite/agents/mcp_server.py): each tool answers exactly its
# call's answer but summary_latest, whose tool has answered the summary under "summary"
# (null when there is none) since it was first served, and the CLI the summary itself
# (summaries.py SummaryAnswer.to_dict and .wrapped_dict): both beside the same scope and
# elsewhere, and alike where there is none or no store.
TOOL_ANSWERS: Final[dict[str, dict[str, Any]]] = {
    **ANSWERS,
    "summary_latest": _document(
        "summary_latest",
        "the newest summary of a scope, under summary: null when there is none",
        {
            "type": "object",
            "anyOf": [
                _obj(
                    {
                        "summary": {"anyOf": [_ref("summary"), {"type": "null"}]},
                        **_scoped("summary_scope"),
                    }
                ),
                _ref("no_store_summary"),
            ],
        },
    ),
}
