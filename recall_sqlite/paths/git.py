"""Reading git's own files, never running git: what a `.git` file points at, the common
directory of a linked worktree, the linked worktrees git records for a main checkout, and
the branch in HEAD. Hooks call this on every tool use, so it must be cheap and must not
depend on a `git` binary being on PATH. Paths are str (see files.py)."""

from __future__ import annotations

import os

from .files import first_line, pure, read_small, real

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .files import StrPath


def read_gitdir_pointer(dotgit_file: StrPath) -> str | None:
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
    target = os.path.join(os.path.dirname(pure(dotgit_file)), value)
    try:
        return real(target)
    except (OSError, RuntimeError):
        return None


def common_dir(gitdir: StrPath) -> tuple[str, bool]:
    """(common git dir, whether gitdir is a linked worktree's private dir)."""
    gitdir = pure(gitdir)
    text = read_small(os.path.join(gitdir, "commondir"))
    if text is None:
        return gitdir, False
    value = first_line(text)
    if not value:
        return gitdir, False
    common = pure(os.path.join(gitdir, value))
    try:
        return real(common), True
    except (OSError, RuntimeError):
        return common, True


def linked_admin(checkout: StrPath) -> tuple[str, str] | None:
    """(main checkout, git's administrative name) when `checkout` is a linked worktree
    (`.git` file -> `<main>/.git/worktrees/<name>`), else None. The name is what
    `git worktree move` keeps, so it, not the path, is the worktree's identity."""
    dotgit = os.path.join(pure(checkout), ".git")
    if not os.path.isfile(dotgit):
        return None
    gitdir = read_gitdir_pointer(dotgit)
    if gitdir is None:
        return None
    common, linked = common_dir(gitdir)
    base = os.path.basename
    if not linked or base(common) != ".git" or base(os.path.dirname(gitdir)) != "worktrees":
        return None
    return os.path.dirname(common), base(gitdir)


def linked_worktrees(main: StrPath) -> list[str]:
    """The linked worktrees git records for the main checkout `main` (from
    `.git/worktrees/*/gitdir`, which git keeps current); only those that exist."""
    admin = os.path.join(pure(main), ".git", "worktrees")
    out: list[str] = []
    try:
        names = sorted(e.name for e in os.scandir(admin) if e.is_dir(follow_symlinks=False))
    except OSError:
        return out
    for name in names:
        text = read_small(os.path.join(admin, name, "gitdir"))
        if text is None or not text.strip():
            continue
        dotgit = pure(os.path.join(admin, name, text.strip()))
        wt = os.path.dirname(dotgit) or "."
        if os.path.isdir(wt):
            out.append(os.path.abspath(wt))
    return out


def read_branch(worktree_root: StrPath) -> str:
    """The branch checked out at `worktree_root`, read from HEAD; "" when detached,
    not a git checkout, or unreadable."""
    dotgit = os.path.join(pure(worktree_root), ".git")
    gitdir: str | None
    if os.path.isdir(dotgit):
        gitdir = dotgit
    elif os.path.isfile(dotgit):
        gitdir = read_gitdir_pointer(dotgit)
    else:
        gitdir = None
    if gitdir is None:
        return ""
    text = read_small(os.path.join(gitdir, "HEAD"))
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
