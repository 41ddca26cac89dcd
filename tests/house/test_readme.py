"""The examples of README.md and of every docs/*.md page run, and their links resolve.

Each page runs in a scratch workspace of its own (a gr2 root with a git checkout that has
one commit, the current directory, a private HOME, a neutral git config and the installed
`recall-sqlite` on PATH), its blocks in the order the page shows them: every ```python
block in one namespace of the page's own, every ```sh block as a bash script (`set -e`).
Blocks tagged otherwise are prose: ```text for synopses with placeholders and for
commands that need more than a scratch workspace, ```bash for the quick start, which CI
itself runs (`.ci/run`)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO, git_env, new_repo

README = REPO / "README.md"
DOCS = REPO / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
# Pages whose links are checked too, though they hold no example.
LINKED = [*PAGES, REPO / "bench" / "RESULTS.md"]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
RUNNABLE = ("python", "sh")
# Pages that show commands, none of which a test can run, and why.
PROSE_ONLY = {
    "development.md": "its commands are the test suite itself and CI's run of it",
}
# What a page's examples import beyond the package's own dependencies (test extras:
# numpy; compat: synapt).
NEEDS = {"vectors.md": "numpy", "synapt.md": "synapt.recall.journal"}


def _name(page: Path) -> str:
    return page.relative_to(REPO).as_posix()


def examples(page: Path) -> list[tuple[str, str]]:
    """(tag, body) of every runnable block of `page`, in the page's order."""
    text = page.read_text(encoding="utf-8")
    return [(tag, body) for tag, body in FENCE.findall(text) if tag in RUNNABLE]


def test_the_readme_is_read_in_five_minutes() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200
    kinds = [tag for tag, _ in examples(README)]
    assert "python" in kinds and "sh" in kinds


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_page_that_shows_code_has_examples_a_test_runs(page: Path) -> None:
    fences = FENCE.findall(page.read_text(encoding="utf-8"))
    if page.name in PROSE_ONLY:
        assert fences and not examples(page), f"{_name(page)}: drop it from PROSE_ONLY"
    elif fences:
        assert examples(page), f"{_name(page)} shows code, but no block a test runs"


def test_the_docs_pages_are_the_ones_the_readme_lists() -> None:
    readme = README.read_text(encoding="utf-8")
    assert PAGES[1:], "no docs/*.md"
    for page in PAGES[1:]:
        assert f"]({_name(page)})" in readme, f"README does not link {_name(page)}"


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / ".grip").mkdir(parents=True)
    new_repo(root)
    monkeypatch.chdir(root)
    return root


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_examples_run(page: Path, scratch: Path) -> None:
    if page.name in NEEDS:
        pytest.importorskip(NEEDS[page.name])
    namespace: dict[str, object] = {"__name__": "docs_example"}
    env = {**git_env(), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    for i, (tag, body) in enumerate(examples(page), 1):
        where = f"{_name(page)} block {i} ({tag})"
        if tag == "python":
            try:
                exec(compile(body, where, "exec"), namespace)
            except Exception as exc:  # the block's own error, with its place, is the message
                pytest.fail(f"{where} failed: {exc!r}\n{body}")
            continue
        res = subprocess.run(
            ["bash", "-e", "-c", body],
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert res.returncode == 0, (
            f"{where} failed:\n{body}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
        )


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#+ (.+)$", text, re.M):
        slug = _slug(heading)
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return found


@pytest.mark.parametrize("page", LINKED, ids=_name)
def test_relative_links_resolve(page: Path) -> None:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)  # inline code is not a link
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), f"{_name(page)}: {target} names no file"
        if anchor:
            assert anchor in _anchors(dest), f"{_name(page)}: {target} names no heading"


RESULTS = REPO / "bench" / "RESULTS.md"
# The rows of bench/RESULTS.md a comment names: "bench/RESULTS.md, row 'X'" (or "rows 'X'
# and 'Y'"; a later "row 'Z'" of the same file counts too).
CITED = re.compile(r"\brows?[\s#]+'([^']+)'(?:[\s#]+and[\s#]+'([^']+)')?")


def _rows() -> list[str]:
    """The first two cells of every table row of bench/RESULTS.md: a named row of the
    code's section, or a suite and its case."""
    cells = [line.split("|")[1:3] for line in RESULTS.read_text(encoding="utf-8").splitlines()]
    return [cell.strip() for row in cells if len(row) == 2 for cell in row]


def test_the_bench_rows_the_code_cites_exist() -> None:
    rows = _rows()
    sources = [*(REPO / "recall_sqlite").rglob("*.py"), REPO / "scripts" / "recall-sqlite"]
    cited = []
    for path in [*sources, REPO / "pyproject.toml"]:
        text = path.read_text(encoding="utf-8")
        if "bench/RESULTS.md" not in text:
            continue
        for names in CITED.findall(re.sub(r"\n\s*#\s*", " ", text)):
            for name in filter(None, names):
                cited.append(name)
                name = re.sub(r"\s+", " ", name)
                assert any(row.startswith(name) for row in rows), f"{_name(path)}: row {name!r}"
    assert len(cited) >= 25, "the comments' citations were not found"


def test_the_readme_shows_each_clients_set_up_as_print_config_prints_it() -> None:
    """README's set-up block, its path put back, says what `mcp --print-config` prints."""
    from recall_sqlite.agents.mcp_server import CLIENTS, client_config, script

    (block,) = [body for tag, body in FENCE.findall(README.read_text("utf-8")) if "Codex" in body]
    shown = block.replace("/path/to/.venv/bin/recall-sqlite", script())
    # One "# Client: ..." line heads each client's lines, in CLIENTS' order.
    parts = dict(zip(CLIENTS, re.split(r"^# .*\n", shown, flags=re.M)[1:], strict=True))
    for client in CLIENTS:
        printed = client_config(client)
        lines = [line for line in parts[client].splitlines() if line]
        if client == "claude-code":
            add, hook = lines[0], json.loads(" ".join(lines[1:]))
            assert printed.splitlines()[0] == add
            assert json.loads(printed.split("\n", 2)[2]) == hook
        elif client == "codex":
            assert printed.splitlines()[1:] == lines
        else:
            assert json.loads(printed.split("\n", 1)[1]) == json.loads(" ".join(lines))
