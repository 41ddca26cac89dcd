"""The maps stay current: every package's docstring lists its modules, ARCHITECTURE.md's room
list names every module of the package, and neither names a module that is not there. Each
map line starts with the module names (`name.py`, several separated by single spaces),
then at least two spaces and what they hold; a migration's frozen steps are one pattern,
`vNNN_*.py`. And no file of the repository cites a file outside it (a design note
elsewhere, a sibling checkout): what a rule says is written where it is kept."""

from __future__ import annotations

import ast
import re
import subprocess
from fnmatch import fnmatch
from pathlib import Path

import pytest

from tests.helpers import REPO

PACKAGE = REPO / "recall_sqlite"
ARCHITECTURE = REPO / "ARCHITECTURE.md"
# A migration step's name, as the maps write the steps (`vNNN_*.py`, `vNNN_<what>.py`).
STEPS = re.compile(r"vNNN_\S*?\.py")
_NAMES = re.compile(r"^\s*((?:[\w./*-]+\.py|[\w-]+/)(?: (?:[\w./*-]+\.py))*)(?:\s{2,}|$)")

PACKAGES = sorted(p.parent for p in PACKAGE.rglob("__init__.py") if "__pycache__" not in p.parts)


def modules_of(package: Path) -> set[str]:
    """The modules and subpackages of `package`, as maps name them (`x.py`, `sub/`); its
    `__init__.py` and a `__main__.py` (`python -m`) go without saying."""
    names = {p.name for p in package.glob("*.py")} - {"__init__.py", "__main__.py"}
    return names | {p.name + "/" for p in package.iterdir() if (p / "__init__.py").is_file()}


def named_in(lines: list[str]) -> set[str]:
    """The module names map lines start with (`__init__.py`, `__main__.py` may be some)."""
    found: set[str] = set()
    for line in lines:
        m = _NAMES.match(line)
        if m:
            found.update(m.group(1).split(" "))
    return found - {"__init__.py", "__main__.py"}


def covered(names: set[str], text: str, modules: set[str]) -> set[str]:
    """The modules a map covers: the ones its lines start with or its text names, and the
    steps its pattern names."""
    mentioned = names | set(re.findall(r"[\w]+\.py\b", text))
    patterns = {n for n in names if "*" in n} | set(STEPS.findall(text))
    globs = [p.replace("NNN", "[0-9][0-9][0-9]").replace("<what>", "*") for p in patterns]
    return {m for m in modules if m in mentioned or any(fnmatch(m, g) for g in globs)}


def docstring(package: Path) -> str:
    return ast.get_docstring(ast.parse((package / "__init__.py").read_text("utf-8"))) or ""


def _rel(package: Path) -> str:
    return package.relative_to(REPO).as_posix()


@pytest.mark.parametrize("package", [p for p in PACKAGES if p != PACKAGE], ids=_rel)
def test_a_package_docstring_lists_exactly_its_modules(package: Path) -> None:
    text = docstring(package)
    modules = modules_of(package)
    names = {n for n in named_in(text.splitlines()) if "*" not in n}
    assert names <= modules, f"{_rel(package)}/__init__.py names modules that are not there"
    missing = modules - covered(names, text, modules)
    assert not missing, f"{_rel(package)}/__init__.py does not list {sorted(missing)}"


def rooms() -> dict[Path, list[str]]:
    """ARCHITECTURE.md's room list, by package: the lines of each package's section (a
    package's line is `  name/`; its section is the lines indented deeper below it)."""
    text = ARCHITECTURE.read_text("utf-8")
    block = text.split("## The rooms", 1)[1].split("```", 2)[1]
    sections: dict[Path, list[str]] = {PACKAGE: []}
    stack: list[tuple[int, Path]] = []
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        while stack and indent <= stack[-1][0]:
            stack.pop()
        head = line.split()[0]
        if head == "recall_sqlite/":
            stack = [(indent, PACKAGE)]
            continue
        if not stack:
            continue  # the repository's files above the package (schema.sql, scripts/)
        here = stack[-1][1]
        sections[here].append(line)
        if head.endswith("/"):
            sub = here / head.rstrip("/")
            sections[sub] = [line.replace(head, " " * len(head), 1)]  # what it says of itself
            stack.append((indent, sub))
    return sections


def test_architecture_md_lists_exactly_the_modules_of_every_room() -> None:
    sections = rooms()
    assert set(sections) == set(PACKAGES), "ARCHITECTURE.md's rooms are not the packages"
    stale = []
    for package, lines in sections.items():
        modules = modules_of(package)
        names = {n for n in named_in(lines) if "*" not in n}
        where = f"ARCHITECTURE.md's {_rel(package)}/"
        if names - modules:
            stale.append(f"{where} names {sorted(names - modules)}: not there")
        missing = modules - covered(names, "\n".join(lines), modules)
        if missing:
            stale.append(f"{where} does not list {sorted(missing)}")
    assert not stale, "\n".join(stale)


def test_a_stale_map_fails() -> None:
    """The parsing above sees what a map says (so a map that goes stale fails)."""
    lines = ["find.py      every data directory", "  a.py b.py  two at once", "prose.py is"]
    assert named_in(lines) == {"find.py", "a.py", "b.py"}
    assert covered({"x.py"}, "steps: `vNNN_<what>.py`", {"x.py", "v001_a.py", "y.py"}) == {
        "x.py",
        "v001_a.py",
    }
    assert covered(set(), "a.py  and its base, a_base.py", {"a_base.py", "b.py"}) == {"a_base.py"}
    legacy = PACKAGE / "legacy"
    assert "copies.py" in modules_of(legacy) and "scrub.py" not in modules_of(legacy)


# A file outside the repository, as a citation names it: a design note kept elsewhere
# (the word in capitals), a sibling checkout's or the shared directory's path.
_OUTSIDE = re.compile(rb"\bDESIGN\b|\.\./shared\b|/work/shared\b")


def repository_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    return [REPO / name for name in listed.decode().split("\0") if name]


def test_no_file_cites_a_file_outside_the_repository() -> None:
    cited = []
    for path in repository_files():
        if not path.is_file():
            continue  # listed by git, removed in the tree
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue  # a binary file (the frozen stores)
        for number, line in enumerate(data.splitlines(), 1):
            if _OUTSIDE.search(line) and path != Path(__file__).resolve():
                cited.append(f"{path.relative_to(REPO)}:{number}: {line.decode()[:80]}")
    assert not cited, "\n".join(cited)


def test_the_outside_pattern_sees_a_citation() -> None:
    for line in (b"(DESIGN.md, section 3)", b"see ../shared/notes", b"DESIGN's rules"):
        assert _OUTSIDE.search(line), line
    assert not _OUTSIDE.search(b"a websocket gateway design")
