"""The path code works on text without pathlib (paths/files.py); these are pathlib's own
answers: the spelling, resolve, the checks, is_relative_to/relative_to. And the workspace
id's canonical form, checked without `re`, is the pattern it replaced."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from recall_sqlite.paths import files
from recall_sqlite.paths.idfile import is_canonical_uuid

_parts = st.sampled_from(["a", "b", ".", "..", "", "c d", "x.y", ".git"])
texts = st.lists(_parts, max_size=6).flatmap(
    lambda parts: st.sampled_from(["", "/", "//", "///"]).map(lambda lead: lead + "/".join(parts))
) | st.text(alphabet="ab/.", max_size=12)


@given(texts)
def test_pure_spells_a_path_as_pathlib_does(text: str) -> None:
    assert files.pure(text) == str(PurePosixPath(text))


@given(texts, texts)
@example("ab", "a")
@example("a/b", "a")
@example("a", "")
def test_within_and_relative_answer_as_pathlib(a: str, b: str) -> None:
    # Absolute as the engine holds them (resolved: one leading slash, which realpath gives).
    path, root = files.pure("/" + a.lstrip("/")), files.pure("/" + b.lstrip("/"))
    inside = PurePosixPath(path).is_relative_to(root)
    assert files.within(path, root) == inside
    if inside:
        assert files.relative(path, root) == PurePosixPath(path).relative_to(root).as_posix()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "f").write_text("x")
    (tmp_path / "to_d").symlink_to(tmp_path / "d")
    (tmp_path / "to_f").symlink_to("f")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    (tmp_path / "up").symlink_to("..")
    return tmp_path


_NAMES = ["d", "d/e", "f", "f/x", "to_d", "to_d/e", "to_f", "dangling", "loop1", "loop1/x", "up"]
_NAMES += ["up/up", "nowhere", "d/../f", "to_d/../f", "d/./e/", "", "."]


@pytest.mark.parametrize("name", _NAMES)
def test_real_and_the_checks_answer_as_pathlib(tree: Path, name: str) -> None:
    text = f"{tree}/{name}"
    path = Path(text)
    for ours, theirs in (
        (files.exists, path.exists),
        (files.is_dir, path.is_dir),
        (files.is_file, path.is_file),
    ):
        assert ours(text) == theirs(), (ours.__name__, name)
    try:
        want = str(path.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        with pytest.raises(OSError):
            files.real(text)
    else:
        assert files.real(text) == want


def test_the_checks_raise_where_pathlib_raises(tmp_path: Path) -> None:
    """An error other than "not there" (a name too long for the filesystem) is raised, as
    pathlib raises it, so it becomes the caller's typed error, not "does not exist"."""
    text = str(tmp_path / ("x" * 300))
    with pytest.raises(OSError):
        Path(text).exists()
    for check in (files.exists, files.is_dir, files.is_file):
        with pytest.raises(OSError):
            check(text)
    assert not files.exists(f"{tmp_path}/a\0b") and not Path(f"{tmp_path}/a\0b").exists()


_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
_NIL = {"00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"}


@given(
    st.uuids()
    .map(str)
    .flatmap(
        lambda u: st.lists(
            st.tuples(st.integers(0, 36), st.sampled_from("0aAf-g\n \u0660")), max_size=2
        ).map(lambda edits: _edited(u, edits))
    )
    | st.sampled_from(sorted(_NIL))
    | st.text(max_size=40)
)
def test_the_canonical_uuid_is_the_pattern_it_replaced(text: str) -> None:
    assert is_canonical_uuid(text) == (bool(_UUID.match(text)) and text not in _NIL)


def _edited(text: str, edits: list[tuple[int, str]]) -> str:
    chars = list(text)
    for at, c in edits:
        if at == len(chars):
            chars.append(c)
        else:
            chars[at] = c
    return "".join(chars)


def test_a_relative_path_is_spelled_not_resolved() -> None:
    assert files.pure("a/../b/") == "a/../b" == os.fspath(PurePosixPath("a/../b/"))
