"""The house keeps its rules (ARCHITECTURE.md), checked against the source itself: the import
graph (every import, lazy and type-only ones included) has no cycle and runs down the
layers; ARCHITECTURE.md's diagram is that graph; path code knows no SQL and the families no
filesystem; identity SQL lives in identity.py; the adapter uses the public face; migration
steps import nothing live; numpy stays in the vector room; the limits and the public names
are each written once; and a hook's `journal read` loads few, light modules."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from tests.helpers import REPO, modules_loaded_by_cli

PACKAGE = REPO / "recall_sqlite"
ARCHITECTURE = PACKAGE.parent / "ARCHITECTURE.md"

# The rooms from the bottom up: a room imports only rooms of lower layers.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "_record", "limits", "dist", "jsontext", "memo", "synapt_fields", "answers"),
    ("checks", "timestamps"),
    ("paths",),
    ("synapt_layout",),
    ("migrations",),
    ("db",),
    ("identity",),
    ("context",),
    ("scope",),
    ("journal",),
    ("derived", "summaries", "cursors", "vectors"),
    ("search", "legacy"),
    ("doctor", "sync", "opening"),
    ("store",),
    ("demo", "(face)"),
    ("synapt", "agents", "browse"),
    ("cli",),
)
FACE = "(face)"  # recall_sqlite/__init__.py


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


@cache
def _imports(module: str) -> frozenset[str]:
    """Every module of the package `module` imports, at any depth of the file (lazy and
    TYPE_CHECKING imports too), with the package `__init__`s an import from outside runs."""
    path = MODULES[module]
    me = module.split(".")
    package = me if path.name == "__init__.py" else me[:-1]
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            named.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            for a in node.names:
                full = f"{mod}.{a.name}"
                named.add(full if full in MODULES else mod)
    found = {m for m in named if m in MODULES}
    for m in list(found):
        parts = m.split(".")
        for i in range(2, len(parts)):
            parent = ".".join(parts[:i])
            if parent in MODULES and not (module == parent or module.startswith(parent + ".")):
                found.add(parent)
    found.discard(module)
    return frozenset(found)


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """The nodes of `tree` outside `if TYPE_CHECKING:` blocks (what runs)."""
    out: list[ast.AST] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        for child in ast.iter_child_nodes(node):
            guarded = (
                isinstance(child, ast.If)
                and isinstance(child.test, ast.Name)
                and child.test.id == "TYPE_CHECKING"
            )
            if guarded:
                assert isinstance(child, ast.If)
                stack.extend(child.orelse)
            else:
                stack.append(child)
    return out


def _raw_imports(module: str, *, runtime: bool = False) -> set[str]:
    """Every module name `module` imports, inside the package or not (`runtime`: only the
    imports that run, not those for type checkers)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in _runtime_nodes(tree) if runtime else list(ast.walk(tree)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            if not node.level:
                out.add(node.module)
            else:
                me = module.split(".")
                package = me if MODULES[module].name == "__init__.py" else me[:-1]
                base = package[: len(package) - node.level + 1]
                out.add(".".join([*base, node.module]))
    return out


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else FACE


def room_graph() -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {}
    for m in MODULES:
        for d in _imports(m):
            if _room(d) != _room(m):
                rooms.setdefault(_room(m), set()).add(_room(d))
    return rooms


def test_the_import_graph_has_no_cycle() -> None:
    state: dict[str, int] = {}  # 1 on the path, 2 done
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for d in sorted(_imports(m)):
            if state.get(d) == 1:
                cycle = path[path.index(d) :] + [d]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if d not in state:
                visit(d)
        path.pop()
        state[m] = 2

    for m in sorted(MODULES):
        if m not in state:
            visit(m)


def test_every_room_has_a_layer() -> None:
    placed = [r for layer in LAYERS for r in layer]
    assert len(placed) == len(set(placed))
    assert {_room(m) for m in MODULES} == set(placed)


def test_imports_run_down_the_layers() -> None:
    layer = {r: i for i, rooms in enumerate(LAYERS) for r in rooms}
    up = [
        f"{m} -> {d}"
        for m in sorted(MODULES)
        for d in sorted(_imports(m))
        if _room(d) != _room(m) and layer[_room(d)] >= layer[_room(m)]
    ]
    assert not up, up


def test_architecture_md_draws_the_graph() -> None:
    """The ```imports block of ARCHITECTURE.md is this graph, room by room."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    block = re.search(r"```imports\n(.*?)```", text, re.S)
    assert block, "ARCHITECTURE.md has no ```imports block"
    drawn = {}
    for line in block.group(1).splitlines():
        if line.strip():
            room, _, deps = line.partition("->")
            drawn[room.strip()] = set(deps.split())
    want = {r: d for r, d in room_graph().items()}
    assert drawn == want, "\n" + "\n".join(
        f"{r:14} -> {' '.join(sorted(d))}" for r, d in sorted(want.items())
    )


def test_path_code_knows_no_sql() -> None:
    for m in MODULES:
        if _room(m) in ("paths", "synapt_layout"):
            got = _raw_imports(m) | _imports(m)
            assert not got & {"apsw", "sqlite3", "recall_sqlite.db", "recall_sqlite.identity"}, m


@pytest.mark.parametrize(
    "module",
    sorted(
        m
        for m in MODULES
        if _room(m) in ("journal", "identity", "context", "scope", "summaries", "cursors")
        or _room(m) == "search"
    ),
)
def test_table_families_know_no_filesystem(module: str) -> None:
    # (A `Path` named for type checkers only touches no file.)
    assert not _raw_imports(module, runtime=True) & {"pathlib", "shutil", "glob"}, module
    assert not any(_room(i) == "paths" for i in _imports(module)), module


_IDENTITY_TABLES = re.compile(
    r"\b(?:FROM|JOIN|INTO|UPDATE)\s+(?:workspaces|workspace_roots|worktrees)\b", re.I
)


def test_identity_sql_lives_in_identity_py() -> None:
    writers = sorted(
        m
        for m, p in MODULES.items()
        if _room(m) != "migrations" and _IDENTITY_TABLES.search(p.read_text(encoding="utf-8"))
    )
    assert writers == ["recall_sqlite.identity"]


def test_the_adapter_uses_the_public_face() -> None:
    allowed = {FACE, "errors", "dist", "paths", "synapt_layout", "synapt"}
    for m in MODULES:
        if _room(m) != "synapt":
            continue
        for d in _imports(m):
            assert _room(d) in allowed or d == "recall_sqlite.journal", f"{m} -> {d}"
        text = MODULES[m].read_text(encoding="utf-8")
        assert not re.search(r"\.db\.|\.context\b|\bSELECT\b|\bINSERT\b", text), m


def test_migration_steps_import_nothing_live() -> None:
    for m in MODULES:
        if m.startswith("recall_sqlite.migrations.v"):
            ours = {d for d in _imports(m)} | {
                i for i in _raw_imports(m) if i.startswith("recall_sqlite")
            }
            assert ours <= {"recall_sqlite.errors"}, (m, ours)


def test_numpy_stays_in_the_vector_room() -> None:
    users = sorted(
        m for m in MODULES if any(i == "numpy" or i.startswith("numpy.") for i in _raw_imports(m))
    )
    assert users == [
        "recall_sqlite.vectors.matrix",
        "recall_sqlite.vectors.validate",
        "recall_sqlite.vectors.vectors",
    ]
    # The vector room's own face loads none of them.
    for light in ("recall_sqlite.vectors", "recall_sqlite.vectors.results"):
        assert not _raw_imports(light, runtime=True) & set(users), light


def test_limits_are_defined_once() -> None:
    """A MAX_ name is a limit: it is defined in limits.py and nowhere else."""
    defined: dict[str, list[str]] = {}
    for m, p in MODULES.items():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            targets = (
                [node.target]
                if isinstance(node, ast.AnnAssign)
                else node.targets
                if isinstance(node, ast.Assign)
                else []
            )
            for t in targets:
                if isinstance(t, ast.Name) and t.id.lstrip("_").startswith("MAX_"):
                    defined.setdefault(t.id.lstrip("_"), []).append(m)
    for name, where in defined.items():
        assert where == ["recall_sqlite.limits"], (name, where)


def test_the_public_names_are_listed_once_and_typed_alike() -> None:
    """`_EXPORTS` is the list; the TYPE_CHECKING imports say the same for type checkers."""
    import recall_sqlite

    tree = ast.parse(MODULES["recall_sqlite"].read_text(encoding="utf-8"))
    typed = {
        a.asname or a.name: node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 1
        for a in node.names
    }
    assert typed == dict(recall_sqlite._EXPORTS)
    assert sorted(recall_sqlite.__all__) == sorted(recall_sqlite._EXPORTS)
    for name in recall_sqlite.__all__:
        assert getattr(recall_sqlite, name) is not None


def test_cli_modules_carry_their_commands_names() -> None:
    from recall_sqlite.cli import COMMANDS

    for command, module in COMMANDS.items():
        assert module in (command, command + "_"), command
        assert f"recall_sqlite.cli.{module}" in MODULES


def test_no_module_is_named_for_nothing() -> None:
    vague = {"family", "utils", "util", "helpers", "misc", "common"}
    assert not [m for m in MODULES if m.rsplit(".", 1)[-1] in vague]


def test_a_journal_read_loads_few_light_modules(tmp_path: Path) -> None:
    """What `recall-sqlite journal read --json` imports: none of the heavy stdlib modules
    the start-up budget excludes, none of the other families; on a store that holds an
    entry, as a hook's read finds it."""
    from recall_sqlite import open_store

    (tmp_path / "ws" / ".grip").mkdir(parents=True)
    with open_store(tmp_path / "ws") as s:
        s.journal.append({"timestamp": "2026-01-01T10:00:00Z", "focus": "one entry"})
    loaded = modules_loaded_by_cli(
        tmp_path, "--cwd", str(tmp_path / "ws"), "journal", "read", "-n", "3", "--json"
    )
    heavy = {
        "dataclasses",
        "inspect",
        "typing",
        "shutil",
        "hashlib",
        "threading",
        "numpy",
        "sqlite_utils",
        "synapt",
        "mcp",
        "unicodedata",
        "datetime",  # a read parses no timestamp (the instant is stored)
        "importlib",  # its package brings warnings; `__import__` does the same work
        # Each of these was a millisecond or more of the process (re brings enum; pathlib
        # re, fnmatch and urllib.parse; argparse gettext and locale; contextlib functools).
        "argparse",
        "gettext",
        "locale",
        "json",
        "re",
        "enum",
        "pathlib",
        "fnmatch",
        "urllib",
        "contextlib",
        "functools",
        "warnings",
    }
    assert "recall_sqlite.journal.journal" in loaded
    assert not loaded & heavy, sorted(loaded & heavy)
    ours = {m for m in loaded if m.startswith("recall_sqlite")}
    for room in ("summaries", "cursors", "vectors", "legacy", "synapt", "search", "doctor"):
        assert not any(_room(m) == room for m in ours), room
