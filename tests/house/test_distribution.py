"""The project installs as itself: a distribution name not taken on the package index,
install hints (README, docs/, errors) that install this project and name extras it has, a
`--version`, and a `--help` that lists every command (the host commands included) with
help for every option."""

from __future__ import annotations

import argparse
import re
import shlex
from importlib import metadata

import pytest

import recall_sqlite
from recall_sqlite import dist
from recall_sqlite.cli import COMMANDS, build_parser
from tests.helpers import REPO, run_cli

README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
# Names on the package index that are other projects (checked when the name was chosen).
TAKEN = {"recall-sqlite", "recall", "recall-cli", "recall-core", "agent-recall"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_distribution_has_a_name_of_its_own() -> None:
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    name = re.search(r'^name = "([^"]+)"', pyproject, re.M)
    version = re.search(r'^version = "([^"]+)"', pyproject, re.M)
    assert name and version
    assert name.group(1) == dist.NAME == metadata.metadata(dist.NAME)["Name"]
    assert _norm(dist.NAME) not in TAKEN
    assert metadata.version(dist.NAME) == recall_sqlite.__version__ == version.group(1)


def _pip_installs(text: str) -> list[list[str]]:
    """The arguments of every `pip install` in `text` (code blocks and inline code)."""
    found = []
    for m in re.finditer(r"pip install ([^`\n]*)", text):
        words = shlex.split(m.group(1).split("#")[0].split("&&")[0])
        found.append([w for w in words if not w.startswith("-")])
    return found


def test_readme_and_docs_install_hints_install_this_project() -> None:
    extras = set(metadata.metadata(dist.NAME).get_all("Provides-Extra") or [])
    assert {"vectors", "compat", "test"} <= extras
    texts = [page.read_text(encoding="utf-8") for page in (README, *DOCS)]
    assert len(_pip_installs(texts[0])) >= 4 and _pip_installs("\n".join(texts[1:]))
    installs = _pip_installs("\n".join(texts))
    for args in installs:
        assert args, installs
        for req in args:
            name, _, rest = req.partition("[")
            wanted = set(rest.rstrip("]").split(",")) if rest else set()
            # From a checkout (a path), or this distribution by its own name: never the
            # index's recall-sqlite.
            assert name.startswith((".", "/")) or _norm(name) == _norm(dist.NAME), req
            assert wanted <= extras, req
    assert not any("recall-sqlite[" in text for text in texts)


def test_error_hints_install_this_project_from_where_it_came(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hint = dist.install_hint("vectors")
    # pip recorded the checkout this copy was installed from (the test venv: editable).
    assert hint == f"pip install -e '{REPO}[vectors]'"
    monkeypatch.setattr(dist, "_origin", lambda: None)
    hint = dist.install_hint("compat")
    assert "'.[compat]'" in hint and "not on the package index" in hint
    assert "recall-sqlite[" not in hint


def test_version() -> None:
    res = run_cli("--version")
    assert res.returncode == 0 and res.stderr == ""
    assert res.stdout == f"recall-sqlite {recall_sqlite.__version__} (distribution {dist.NAME})\n"


def test_help_lists_every_command_with_the_host_commands() -> None:
    res = run_cli("--help")
    assert res.returncode == 0
    listed = set(re.findall(r"^    ([a-z][a-z-]*)", res.stdout, re.M))
    assert listed >= {*COMMANDS, "synapt", "synapt-server"}, listed


def _options_without_help(p: argparse.ArgumentParser, path: list[str]) -> list[str]:
    out = []
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                out += _options_without_help(sub, [*path, name])
        elif a.option_strings and not a.help:
            out.append(f"{' '.join(path)} {'/'.join(a.option_strings)}")
    return out


def test_every_option_has_help() -> None:
    parser = build_parser(list(COMMANDS.values()))
    assert _options_without_help(parser, ["recall-sqlite"]) == []
    # The ones a user found bare.
    for argv, option in (
        (["survey", "--help"], "--map"),
        (["doctor", "--help"], "--repair"),
        (["journal", "read", "--help"], "-n N"),
    ):
        res = run_cli(*argv)
        line = next(x for x in res.stdout.splitlines() if x.strip().startswith(option))
        assert len(line.strip()) > len(option) + 10, line
