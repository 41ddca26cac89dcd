"""Every check of a caller's input lives in recall_sqlite/checks.py (ARCHITECTURE.md, "One
home for every rule"): this test reads every other module and fails on a check written by
hand, so the same mistake keeps one message and one error class everywhere.

A hand check raises an error of a caller's mistake (a RecallError whose `exit_code` is 2:
InvalidInputError, WorkspaceError, SyncSetupError, ...) after a test of a value's type
(`isinstance`, `type(x) is`, `callable`) or of whether it is one of fixed choices (`x not
in (...)`, `x not in CHOICES`): from the body of the `if` that makes the test, or
right after a type dispatch (`if isinstance(x, A): return ...` then `raise`), or where
a lone `except TypeError` turns a value's type into the error. Errors of a damaged file or a
failure at run time (exit code 1) are not checks of a caller's input and are not looked at.
Besides, SQLite's integer range (INT64_MAX, INT64_MIN) is require_int's rule: an `if` that
compares with it and raises anything is a hand check too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import recall_sqlite
from recall_sqlite import errors

PACKAGE = Path(recall_sqlite.__file__).parent
HOME = PACKAGE / "checks.py"

# (module path inside the package, function) -> why its check is not checks.py's. Each is
# the one parser of a format, checking what it parses, where checks.py cannot reach.
ALLOWED: dict[tuple[str, str], str] = {
    ("timestamps.py", "parse_timestamp"): (
        "the one timestamp parser: timestamps.py sits beside checks.py in the layers (both"
        " import only errors and below), so it cannot call it"
    ),
    ("vectors/validate.py", "as_float32"): (
        "a vector as numpy sees it (dtype, shape, finiteness): validate.py is the one home"
        " of a vector's checks, and checks.py never imports numpy"
    ),
    ("sync/remote.py", "parse"): (
        "what a replica URL names (a file URL names a local path), decided while parsing"
        " the URL: the one parser of replica URLs"
    ),
}

_TYPE_TESTS = {"isinstance", "callable", "issubclass"}


def _caller_mistakes() -> set[str]:
    return {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type)
        and issubclass(value, errors.RecallError)
        and value.exit_code == 2
    }


MISTAKES = _caller_mistakes()


def _error_names(tree: ast.Module) -> dict[str, str]:
    """Local name -> errors.py's class name, for the imports of errors (aliases too)."""
    names = {name: name for name in MISTAKES}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("errors"):
            for alias in node.names:
                names[alias.asname or alias.name] = alias.name
    return names


def _raised(stmt: ast.stmt, names: dict[str, str]) -> str | None:
    if not isinstance(stmt, ast.Raise) or stmt.exc is None:
        return None
    exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
    name = (
        exc.id if isinstance(exc, ast.Name) else exc.attr if isinstance(exc, ast.Attribute) else ""
    )
    real = names.get(name)
    return real if real in MISTAKES else None


def _fixed_choices(node: ast.expr) -> bool:
    """A literal collection, a string of characters, or a constant's name (UPPER_CASE)."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return True
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    name = (
        node.id
        if isinstance(node, ast.Name)
        else node.attr
        if isinstance(node, ast.Attribute)
        else ""
    )
    return bool(name) and name.lstrip("_").isupper()


def _looks_at_input(test: ast.expr) -> bool:
    for node in ast.walk(test):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _TYPE_TESTS
        ):
            return True
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops) and any(
                isinstance(s, ast.Call) and isinstance(s.func, ast.Name) and s.func.id == "type"
                for s in sides
            ):
                return True
            for op, right in zip(node.ops, node.comparators, strict=True):
                if isinstance(op, ast.NotIn) and _fixed_choices(right):
                    return True
    return False


_RANGE = {"INT64_MAX", "INT64_MIN"}


def _tests_sqlite_range(test: ast.expr) -> bool:
    return any(
        isinstance(node, ast.Compare)
        and any(
            (isinstance(side, ast.Name) and side.id in _RANGE)
            or (isinstance(side, ast.Attribute) and side.attr in _RANGE)
            for side in (node.left, *node.comparators)
        )
        for node in ast.walk(test)
    )


def _catches_type_error(handler: ast.ExceptHandler) -> bool:
    """`except TypeError:` alone: a value's type found out by using it (list(x)). Among
    other errors it is a document or a file that could not be read, not a caller's type."""
    return isinstance(handler.type, ast.Name) and handler.type.id == "TypeError"


def _reraises(body: list[ast.stmt]) -> bool:
    return len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].exc is None


def hand_checks(source: str) -> list[tuple[str, int, str]]:
    """(function, line, error raised) of every hand check in `source`."""
    tree = ast.parse(source)
    names = _error_names(tree)
    found: list[tuple[str, int, str]] = []

    def visit(node: ast.AST, where: str) -> None:
        after_dispatch = False
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = child.name
            if isinstance(child, ast.If) and _looks_at_input(child.test):
                for stmt in child.body:
                    if raised := _raised(stmt, names):
                        found.append((where, child.lineno, raised))
            if (
                isinstance(child, ast.If)
                and _tests_sqlite_range(child.test)
                and any(isinstance(stmt, ast.Raise) for stmt in child.body)
            ):
                found.append((where, child.lineno, "an error (SQLite's integer range)"))
            if isinstance(child, ast.ExceptHandler) and _catches_type_error(child):
                for stmt in child.body:
                    if raised := _raised(stmt, names):
                        found.append((where, child.lineno, raised))
            # The `else` of a dispatch on type: `if isinstance(x, A): return ...` then raise.
            if after_dispatch and isinstance(child, ast.stmt) and (raised := _raised(child, names)):
                found.append((where, child.lineno, raised))
            # (`if isinstance(exc, X): raise` lets an exception through: no dispatch.)
            after_dispatch = (
                isinstance(child, ast.If)
                and _looks_at_input(child.test)
                and not _reraises(child.body)
            )
            visit(child, inner)

    visit(tree, "<module>")
    return found


def _package_hand_checks() -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == HOME:
            continue
        rel = path.relative_to(PACKAGE).as_posix()
        for function, line, raised in hand_checks(path.read_text(encoding="utf-8")):
            out.setdefault((rel, function), []).append(f"{rel}:{line} {function}: raises {raised}")
    return out


def test_no_module_checks_a_callers_input_by_hand() -> None:
    found = _package_hand_checks()
    unexplained = [hit for key, hits in found.items() if key not in ALLOWED for hit in hits]
    assert not unexplained, (
        "check a caller's value with recall_sqlite/checks.py (require_bool, require_int,"
        " require_text, require_list, require_choice, require_type, require_path,"
        " require_pair, parse_entry_id, require_ids, parse_int, ...), not by hand:\n"
        + "\n".join(unexplained)
    )


def test_every_allowed_hand_check_still_exists() -> None:
    """A stale entry would let a new hand check in under an old name."""
    found = _package_hand_checks()
    assert not [key for key in ALLOWED if key not in found], "remove these from ALLOWED"


@pytest.mark.parametrize(
    "source",
    [
        "from .errors import InvalidInputError\n"
        "def f(flag):\n    if not isinstance(flag, bool):\n"
        "        raise InvalidInputError('flag must be true or false')\n",
        "from ..errors import WorkspaceError as W\n"
        "def f(x):\n    if x is not None and not isinstance(x, str):\n        raise W('x')\n",
        "from .errors import InvalidEntryError\n"
        "def f(v):\n    if v:\n        pass\n    elif type(v) is not list:\n"
        "        raise InvalidEntryError('v')\n",
        "from .errors import InvalidInputError\nFORMATS = ('a', 'b')\n"
        "def f(fmt):\n    if fmt not in FORMATS:\n        raise InvalidInputError('fmt')\n",
        "from .errors import SyncSetupError\n"
        "def f(kind):\n    if kind not in ('s3', 'file'):\n        raise SyncSetupError('kind')\n",
        "from . import errors\n"
        "def f(n):\n    if isinstance(n, bool):\n        raise errors.UsageError('n')\n",
        # a dispatch on type whose `else` is the refusal
        "from .errors import InvalidOwnerError\n"
        "def f(v):\n    if isinstance(v, str):\n        return [v]\n"
        "    if isinstance(v, tuple) and len(v) == 2:\n        return list(v)\n"
        "    raise InvalidOwnerError('v')\n",
        # a type found out by using the value
        "from .errors import InvalidInputError\n"
        "def f(ids):\n    try:\n        return list(ids)\n    except TypeError:\n"
        "        raise InvalidInputError('ids') from None\n",
        # SQLite's integer range, whatever is raised
        "from .limits import INT64_MAX\n"
        "def f(n):\n    if n > INT64_MAX:\n        raise ValueError('too big')\n",
    ],
)
def test_the_search_finds_a_planted_hand_check(source: str) -> None:
    assert hand_checks(source), source


@pytest.mark.parametrize(
    "source",
    [
        # a damaged file, not a caller's mistake (exit code 1)
        "from .errors import CorruptStoreError\n"
        "def f(row):\n    if not isinstance(row, bytes):\n        raise CorruptStoreError('row')\n",
        # a lookup in data, not fixed choices
        "from .errors import InvalidEntryError\n"
        "def f(data):\n    if 'timestamp' not in data:\n        raise InvalidEntryError('no')\n",
        # a dispatch on type that raises nothing
        "def f(x):\n    if isinstance(x, str):\n        return [x]\n    return list(x)\n",
        # not one of ours
        "def f(x):\n    if not isinstance(x, int):\n        raise TypeError('x')\n",
        # an exception let through by its class, then a run-time failure named
        "from .errors import WorkspaceError\n"
        "def f():\n    try:\n        g()\n    except OSError as exc:\n"
        "        if isinstance(exc, WorkspaceError):\n            raise\n"
        "        raise WorkspaceError('cannot use it') from None\n",
        # a document that could not be read (TypeError among others)
        "from .errors import SyncSetupError\n"
        "def f(d):\n    try:\n        return int(d['n'])\n"
        "    except (KeyError, TypeError, ValueError):\n        raise SyncSetupError('d')\n",
    ],
)
def test_the_search_leaves_other_code_alone(source: str) -> None:
    assert not hand_checks(source), source
