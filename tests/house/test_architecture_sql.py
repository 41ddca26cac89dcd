"""The SQL layer's contracts are types, and no import hides from the graph: no function of
the SQL layer has `Any` in a parameter or return annotation (connections are apsw's
`Connection`, statements' arguments apsw's `Bindings`, row values `SQLiteValue`); and the
imports made at run time by name (`__import__`, `importlib.import_module`) join
tests/house/test_architecture.py's graph, which must stay free of cycles and run down the layers
with them."""

from __future__ import annotations

import ast

import pytest

from tests.helpers import REPO
from tests.house.test_architecture import LAYERS, MODULES, PACKAGE, _imports, _room

# The SQL layer: the engine, the tables' families and every room that runs their SQL.
SQL_ROOMS = (
    "db",
    "identity",
    "context",
    "journal",
    "derived",
    "summaries",
    "cursors",
    "search",
    "doctor",
    "legacy",
    "vectors",
    "migrations",
)
SQL_MODULES = sorted(
    m for m in MODULES if _room(m) in SQL_ROOMS or m.startswith("recall_sqlite.sync.merge")
)


def _names_any(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return _names_any(ast.parse(annotation.value, mode="eval").body)
    return any(
        (isinstance(n, ast.Name) and n.id == "Any")
        or (isinstance(n, ast.Attribute) and n.attr == "Any")
        for n in ast.walk(annotation)
    )


def _json_document(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A value's JSON form (`to_dict`, `synapt_dict`, ...) returns `dict[str, Any]`: a JSON
    document its readers (the CLI, hosts, tests) index into freely. The one Any allowed."""
    returns = node.returns
    return (
        node.name.endswith("_dict")
        and returns is not None
        and ast.unparse(returns).strip("'\"") == "dict[str, Any]"
    )


def any_in_signatures(source: str) -> list[str]:
    """`name:line parameter` for every parameter or return annotation of a function in
    `source` that mentions Any (a JSON document's `dict[str, Any]` aside)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        a = node.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
        params += [p for p in (a.vararg, a.kwarg) if p is not None]
        found += [f"{node.name}:{node.lineno} {p.arg}" for p in params if _names_any(p.annotation)]
        if _names_any(node.returns) and not _json_document(node):
            found.append(f"{node.name}:{node.lineno} return")
    # An alias spelled with Any would bring it back under another name.
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, (ast.Subscript, ast.BinOp))
            and _names_any(node.value)
        ):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            found += [f"{n}:{node.lineno} alias" for n in names]
    return found


def test_the_checker_sees_any_in_signatures() -> None:
    """What the next test relies on: Any anywhere in an annotation, quoted or not."""
    source = (
        "def a(conn: Any) -> None: ...\n"
        "def b(rows: list[tuple[typing.Any, ...]]) -> int: ...\n"
        "def c(x: int) -> 'dict[str, Any]': ...\n"
        "def d(*args: Any, **kw: int) -> None: ...\n"
        "def e(x: int) -> int:\n    y: Any = x\n    return y\n"
        "Searcher = Callable[..., Any]\n"
    )
    assert any_in_signatures(source) == [
        "a:1 conn",
        "b:2 rows",
        "c:3 return",
        "d:4 args",
        "Searcher:8 alias",
    ]
    # A JSON document's form is the exception, and only that form under that name.
    documents = (
        "def to_dict(self) -> dict[str, Any]: ...\n"
        "def synapt_dict(self) -> dict[str, Any]: ...\n"
        "def to_dict(self, x: Any) -> dict[str, Any]: ...\n"
        "def to_dict(self) -> list[Any]: ...\n"
        "def rows(self) -> dict[str, Any]: ...\n"
    )
    assert any_in_signatures(documents) == ["to_dict:3 x", "to_dict:4 return", "rows:5 return"]


# Modules still to type (issue 31); none left.
PENDING: set[str] = set()


@pytest.mark.parametrize("module", SQL_MODULES)
def test_the_sql_layer_has_no_any_in_its_signatures(module: str) -> None:
    found = any_in_signatures(MODULES[module].read_text(encoding="utf-8"))
    if module in PENDING:
        assert found, f"{module} has no Any left in its signatures: take it off PENDING"
        return
    assert not found, f"{module}: Any in the signature of {found}"


def test_pending_modules_are_of_the_sql_layer() -> None:
    assert set(SQL_MODULES) >= PENDING


# -- imports by name at run time ---------------------------------------------------------

IMPORTERS = {"__import__", "import_module"}


def _package_of(module: str) -> str:
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def _computed_tables() -> dict[str, set[str]]:
    """The packages whose modules are imported by a computed name, with the table the name
    is drawn from: the public face's lazy names, the CLI's commands, the schema steps."""
    import recall_sqlite
    from recall_sqlite import cli, migrations

    return {
        "recall_sqlite": {f"recall_sqlite.{m}" for m in recall_sqlite._EXPORTS.values()},
        "recall_sqlite.cli": {f"recall_sqlite.cli.{m}" for m in cli.COMMANDS.values()},
        "recall_sqlite.migrations": {f"recall_sqlite.migrations.{s}" for s in migrations.STEPS},
    }


def runtime_imports(module: str, source: str) -> tuple[set[str], list[str]]:
    """The package's modules `source` (the text of `module`) imports by name at run time,
    and the calls whose name it cannot tell. A literal name (absolute, or relative to
    `__name__`/`__package__`) is that module; `f"{__name__}.{x}"` or
    `f"{__package__}.{x}"` is every module of the table of its package
    (`_computed_tables`)."""
    tables = _computed_tables()
    package = _package_of(module) if module in MODULES else module.rpartition(".")[0]
    here = module if module in MODULES and MODULES[module].name == "__init__.py" else package
    found: set[str] = set()
    unknown: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name not in IMPORTERS or not node.args:
            continue
        target = node.args[0]
        if isinstance(target, ast.Constant) and isinstance(target.value, str):
            text = target.value
            if text.startswith("."):
                base = node.args[1] if len(node.args) > 1 else None
                anchor = here if isinstance(base, ast.Name) and base.id == "__name__" else package
                text = anchor + text
            found.add(text)
        elif (
            isinstance(target, ast.JoinedStr)
            and len(target.values) >= 2
            and isinstance(target.values[0], ast.FormattedValue)
            and isinstance(target.values[0].value, ast.Name)
            and target.values[0].value.id in ("__name__", "__package__")
            and isinstance(target.values[1], ast.Constant)
            and target.values[1].value == "."
        ):
            base_of = here if target.values[0].value.id == "__name__" else package
            if base_of in tables:
                found |= tables[base_of]
            else:
                unknown.append(f"{module}:{node.lineno}")
        else:
            unknown.append(f"{module}:{node.lineno}")
    return {m for m in found if m in MODULES and m != module}, unknown


def _runtime_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for m, path in MODULES.items():
        named, _ = runtime_imports(m, path.read_text(encoding="utf-8"))
        graph[m] = set(_imports(m)) | named
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                return path[path.index(d) :] + [d]
            if d not in state and (found := visit(d)) is not None:
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)) is not None:
            return found
    return None


def test_every_import_by_name_is_known() -> None:
    unknown = [
        u for m, p in MODULES.items() for u in runtime_imports(m, p.read_text(encoding="utf-8"))[1]
    ]
    assert not unknown, f"imports by a name the architecture test cannot tell: {unknown}"


def test_imports_by_name_make_no_cycle() -> None:
    cycle = _cycle(_runtime_graph())
    assert cycle is None, "import cycle (imports by name included): " + " -> ".join(cycle or ())


def test_imports_by_name_run_down_the_layers() -> None:
    layer = {r: i for i, rooms in enumerate(LAYERS) for r in rooms}
    up = [
        f"{m} -> {d}"
        for m, deps in sorted(_runtime_graph().items())
        for d in sorted(deps)
        if _room(d) != _room(m) and layer[_room(d)] >= layer[_room(m)]
    ]
    assert not up, up


def test_a_command_loader_in_the_module_its_commands_import_is_a_cycle() -> None:
    """The shape cli/_common.py once had: it loaded the command modules by a computed name
    and they import it back. The graph with imports by name sees the cycle."""
    loader = (
        "def build(names):\n"
        "    for name in names:\n"
        "        __import__(f'{__package__}.{name}', fromlist=('register',)).register()\n"
    )
    named, unknown = runtime_imports("recall_sqlite.cli._common", loader)
    assert not unknown
    assert "recall_sqlite.cli.journal" in named
    graph = _runtime_graph()
    graph["recall_sqlite.cli._common"] = set(graph["recall_sqlite.cli._common"]) | named
    cycle = _cycle(graph)
    assert cycle is not None and "recall_sqlite.cli._common" in cycle


def test_literal_names_are_resolved() -> None:
    source = (
        "import importlib\n"
        "def f():\n"
        "    importlib.import_module('.vectors', __name__)\n"
        "    __import__('recall_sqlite.errors')\n"
    )
    named, unknown = runtime_imports("recall_sqlite.vectors", source)
    assert named == {"recall_sqlite.vectors.vectors", "recall_sqlite.errors"} and not unknown
    assert runtime_imports("recall_sqlite.db", "__import__(name)\n")[1] == ["recall_sqlite.db:1"]


def test_the_package_is_where_the_test_looks() -> None:
    assert REPO / "recall_sqlite" == PACKAGE
