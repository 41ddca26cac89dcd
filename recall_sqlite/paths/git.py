"""Reading git's own files, never running git: what a `.git` file points at, the common
directory of a linked worktree, the linked worktrees git records for a main checkout, and
the branch in HEAD. Hooks call this on every tool use, so it must be cheap and must not
depend on a `git` binary being on PATH."""

from __future__ import annotations

import os
from pathlib import Path

from .files import first_line, read_small


def read_gitdir_pointer(dotgit_file: Path) -> Path | None:
    """The directory a `.git` *file* points at (`gitdir: <path>`), relative paths being
    relative to the file's own directory, as git reads them."""
    text = read_small(dotgit_file)
    if text is None:
        return None
    line = first_line(text)
    if not line.startswith("gitdir:"):
        return None
    value = line[len("gitdir:") :].strip()
    if not value:
        return None
    target = Path(value)
    if not target.is_absolute():
        target = dotgit_file.parent / target
    try:
        return target.resolve()
    except (OSError, RuntimeError):
        return None


def common_dir(gitdir: Path) -> tuple[Path, bool]:
    """(common git dir, whether gitdir is a linked worktree's private dir)."""
    text = read_small(gitdir / "commondir")
    if text is None:
        return gitdir, False
    value = first_line(text)
    if not value:
        return gitdir, False
    common = Path(value)
    if not common.is_absolute():
        common = gitdir / common
    try:
        return common.resolve(), True
    except (OSError, RuntimeError):
        return common, True


def linked_admin(checkout: Path) -> tuple[Path, str] | None:
    """(main checkout, git's administrative name) when `checkout` is a linked worktree
    (`.git` file -> `<main>/.git/worktrees/<name>`), else None. The name is what
    `git worktree move` keeps, so it, not the path, is the worktree's identity."""
    dotgit = checkout / ".git"
    if not dotgit.is_file():
        return None
    gitdir = read_gitdir_pointer(dotgit)
    if gitdir is None:
        return None
    common, linked = common_dir(gitdir)
    if not linked or common.name != ".git" or gitdir.parent.name != "worktrees":
        return None
    return common.parent, gitdir.name


def linked_worktrees(main: Path) -> list[Path]:
    """The linked worktrees git records for the main checkout `main` (from
    `.git/worktrees/*/gitdir`, which git keeps current); only those that exist."""
    admin = main / ".git" / "worktrees"
    out: list[Path] = []
    try:
        names = sorted(e.name for e in os.scandir(admin) if e.is_dir(follow_symlinks=False))
    except OSError:
        return out
    for name in names:
        text = read_small(admin / name / "gitdir")
        if text is None or not text.strip():
            continue
        dotgit = Path(text.strip())
        if not dotgit.is_absolute():
            dotgit = admin / name / dotgit
        wt = dotgit.parent
        if wt.is_dir():
            out.append(Path(os.path.abspath(wt)))
    return out


def read_branch(worktree_root: Path) -> str:
    """The branch checked out at `worktree_root`, read from HEAD; "" when detached,
    not a git checkout, or unreadable."""
    dotgit = Path(worktree_root) / ".git"
    gitdir: Path | None
    if dotgit.is_dir():
        gitdir = dotgit
    elif dotgit.is_file():
        gitdir = read_gitdir_pointer(dotgit)
    else:
        gitdir = None
    if gitdir is None:
        return ""
    text = read_small(gitdir / "HEAD")
    if text is None:
        return ""
    line = first_line(text)
    if not line.startswith("ref:"):
        return ""
    ref = line[len("ref:") :].strip()
    prefix = "refs/heads/"
    if not ref.startswith(prefix):
        return ""
    name = ref[len(prefix) :]
    # Reftable repositories leave this placeholder in HEAD; the real ref is in the table.
    if name == ".invalid":
        return ""
    return name
