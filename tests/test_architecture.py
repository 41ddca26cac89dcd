"""The rooms keep their rules (ARCHITECTURE.md): imports go one way, the path code knows no
SQL, the table families know no filesystem, numpy lives in one module, and the modules a
hook's `journal read` loads stay few and light."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "recall_sqlite"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, absolute, at any depth of the file (lazy ones too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = _module_name(path).split(".")
    package = me if path.name == "__init__.py" else me[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)
    return found


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _inside(imported: str, room: str) -> bool:
    return imported == f"recall_sqlite.{room}" or imported.startswith(f"recall_sqlite.{room}.")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_nothing_below_the_cli_imports_it(module: str) -> None:
    if _room(module) == "cli":
        return
    assert not any(_inside(i, "cli") for i in _imports(MODULES[module])), module


@pytest.mark.parametrize("module", sorted(MODULES))
def test_table_families_do_not_import_the_store_or_the_hosts(module: str) -> None:
    # store.py composes the families; doctor.py checks a whole store across them.
    if _room(module) in ("cli", "synapt", "store", "doctor", "") or module.endswith(".demo"):
        return
    got = _imports(MODULES[module])
    assert not any(_inside(i, "store") or _inside(i, "synapt") for i in got), module


def test_workspace_resolution_knows_no_sql() -> None:
    got = _imports(MODULES["recall_sqlite.workspace"])
    assert not got & {"apsw", "sqlite3", "recall_sqlite.db", "recall_sqlite.identity"}


# db.py is the engine: it owns the database file (private mode, the file being replaced);
# the families above it see keys and rows only.
@pytest.mark.parametrize(
    "module",
    sorted(
        m for m in MODULES if _room(m) in ("journal", "identity", "context", "summaries", "cursors")
    ),
)
def test_table_families_know_no_filesystem(module: str) -> None:
    got = _imports(MODULES[module])
    assert not got & {"pathlib", "shutil", "glob", "recall_sqlite.workspace"}, module


def test_numpy_is_imported_by_one_module() -> None:
    users = sorted(
        m
        for m, p in MODULES.items()
        if any(i == "numpy" or i.startswith("numpy.") for i in _imports(p))
    )
    assert users == ["recall_sqlite.vectors.family"]


def test_a_journal_read_loads_few_light_modules(tmp_path: Path) -> None:
    """What `recall-sqlite journal read --json` imports: none of the heavy stdlib modules
    the start-up budget excludes, none of the other families."""
    (tmp_path / "ws" / ".grip").mkdir(parents=True)
    code = (
        "import sys; from recall_sqlite.cli import main; import io, contextlib\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['--cwd', {str(tmp_path / 'ws')!r}, 'journal', 'read', '--json'])\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    loaded = set(res.stdout.split())
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
    }
    assert not loaded & heavy, sorted(loaded & heavy)
    ours = {m for m in loaded if m.startswith("recall_sqlite")}
    for family in ("summaries", "cursors", "vectors", "legacy", "synapt"):
        assert not any(_inside(m, family) for m in ours), family
