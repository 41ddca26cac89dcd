"""The tests mirror the code: a room's unit tests live in tests/unit/<room>/, the suites that
cross rooms in tests/behaviour/, the checks of the repository itself in tests/house/; the
shared fixtures are conftest.py's and no test file defines one of them again; a test runs
git and the CLI through tests/helpers.py (a neutral git identity, the one CLI command line),
never by hand."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import TESTS
from tests.house.test_architecture import MODULES, _room

KINDS = ("unit", "behaviour", "house")
# Where a test may spell the command line or `git init` itself: the helpers that do it for
# everyone, the architecture test, which names the CLI's module as a module, and this file.
SPELLERS = {
    TESTS / "helpers.py",
    TESTS / "house" / "test_architecture_sql.py",
    Path(__file__).resolve(),
}


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if "stores" not in p.parts)


def test_every_test_file_is_in_a_room_a_behaviour_suite_or_the_house() -> None:
    rooms = {_room(m) for m in MODULES}
    misplaced = []
    for p in _test_files():
        parts = p.relative_to(TESTS).parts
        if parts[0] == "unit":
            if len(parts) != 3 or parts[1] not in rooms:
                misplaced.append(str(p.relative_to(TESTS)))
        elif parts[0] not in ("behaviour", "house") or len(parts) != 2:
            misplaced.append(str(p.relative_to(TESTS)))
    assert not misplaced, f"not under tests/unit/<room>/, behaviour/ or house/: {misplaced}"


def test_every_test_directory_is_a_package() -> None:
    """Two rooms may hold test files of one name: each directory is a package of its own."""
    missing = [
        str(d.relative_to(TESTS))
        for d in {p.parent for p in _test_files()}
        if not (d / "__init__.py").is_file()
    ]
    assert not missing


def _fixtures(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if ast.unparse(target) in ("pytest.fixture", "fixture"):
                    names.add(node.name)
    return names


def test_no_test_file_shadows_a_shared_fixture() -> None:
    shared = _fixtures(ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8")))
    assert {"store", "repo", "activated", "workspace_root"} <= shared
    shadows = {
        str(p.relative_to(TESTS)): sorted(found)
        for p in _test_files()
        if (found := _fixtures(ast.parse(p.read_text(encoding="utf-8"))) & shared)
    }
    assert not shadows, f"defined again (give it its own name): {shadows}"


def test_git_and_the_cli_are_run_through_the_helpers() -> None:
    by_hand = []
    for p in [*_test_files(), TESTS / "conftest.py"]:
        if p in SPELLERS:
            continue
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.List):
                continue
            words = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if "recall_sqlite.cli" in words or words[:2] == ["git", "init"]:
                by_hand.append(f"{p.relative_to(TESTS)}:{node.lineno}")
    assert not by_hand, f"use tests/helpers.py (CLI, run_cli, new_repo, git): {by_hand}"
