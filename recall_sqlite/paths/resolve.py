"""Path -> workspace / worktree / branch, from the filesystem alone (DESIGN's identity rules).

No SQL and no subprocess: hooks call this on every tool use, so it must be cheap and must
not depend on a `git` binary being on PATH. Every answer says how it was reached
(`resolved_by`) and what was doubtful about it (`warnings`), because a store chosen by a
wrong guess looks exactly like a store with a short history.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

from .._record import Frozen
from ..errors import RecallError, WorkspaceAccessError, WorkspaceError
from .files import read_small
from .git import common_dir, linked_admin, read_branch, read_gitdir_pointer
from .idfile import workspace_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Final

RESOLVED_BY: Final = (
    "argument",
    "SYNAPT_RECALL_ROOT",
    "GRIPSPACE_ROOT",
    "grip",
    "gitgrip",
    "git",
    "directory",
)

# Bounds the directory scan done for a linked griptree so a huge directory cannot make
# resolution slow.
_GRIPTREE_SCAN_LIMIT: Final = 1024


class Workspace(Frozen):
    __slots__ = (
        "root",
        "resolved_by",
        "weak",
        "worktree_root",
        "worktree",
        "worktree_name",
        "branch",
        "warnings",
    )
    root: Path
    resolved_by: str
    weak: bool
    worktree_root: Path
    worktree: str
    worktree_name: str
    branch: str
    warnings: tuple[str, ...]

    def __init__(
        self,
        root: Path,
        resolved_by: str,
        weak: bool,
        worktree_root: Path,
        worktree: str,
        worktree_name: str,
        branch: str,
        warnings: tuple[str, ...],
    ) -> None:
        self._set(
            root=root,
            resolved_by=resolved_by,
            weak=weak,
            worktree_root=worktree_root,
            worktree=worktree,
            worktree_name=worktree_name,
            branch=branch,
            warnings=warnings,
        )


# --------------------------------------------------------------------------- helpers


def _resolve_path(path: Path, what: str) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: symlink loop on Python < 3.13
        raise WorkspaceError(f"cannot resolve {what} {str(path)!r}: {exc}") from exc


def _stat_key(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class _Home:
    """$HOME as a path *and* an inode: comparing by inode also catches $HOME reached by a
    differently-cased or bind-mounted spelling that `resolve()` does not canonicalise."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.path = _home_path(env)
        self.key = _stat_key(self.path) if self.path is not None else None

    def is_home(self, path: Path) -> bool:
        if self.path is None:
            return False
        if path == self.path:
            return True
        return self.key is not None and _stat_key(path) == self.key


def _home_path(env: Mapping[str, str]) -> Path | None:
    value = env.get("HOME", "")
    if value and os.path.isabs(value):
        try:
            return Path(value).resolve()
        except (OSError, RuntimeError):
            return Path(value)
    # An env without HOME (a sanitised hook environment) must not switch the guard off.
    if sys.platform != "win32":
        import pwd

        try:
            return Path(pwd.getpwuid(os.getuid()).pw_dir).resolve()
        except (KeyError, OSError, RuntimeError):
            return None
    try:
        return Path.home().resolve()
    except (OSError, RuntimeError):
        return None


def _is_fs_root(path: Path) -> bool:
    return path == path.parent


def _walk_up(start: Path, home: _Home) -> Iterator[Path]:
    """`start` and its ancestors, never yielding $HOME or the filesystem root and never
    going above $HOME: anything found there is above every project."""
    current = start
    while not _is_fs_root(current) and not home.is_home(current):
        yield current
        current = current.parent


def is_checkout_root(directory: Path) -> bool:
    return (
        os.path.lexists(directory / ".git")
        or (directory / ".grip").is_dir()
        or (directory / ".gitgrip" / "griptree.json").is_file()
    )


def _is_gripspace_root(directory: Path) -> bool:
    return (directory / ".gitgrip" / "griptrees.json").is_file() or (directory / ".grip").is_dir()


# --------------------------------------------------------------------------- markers


def _griptree_parent(griptree: Path, home: _Home) -> Path | None:
    """The gripspace a linked griptree belongs to, or None if that cannot be established.

    Git's own worktree pointers are tried first because git keeps them current; the
    paths gitgrip records are a fallback since a moved gripspace leaves them stale.
    """
    for child in _griptree_children(griptree):
        dotgit = child / ".git"
        if not dotgit.is_file():
            continue
        gitdir = read_gitdir_pointer(dotgit)
        if gitdir is None:
            continue
        common, linked = common_dir(gitdir)
        if not linked:
            # No commondir file: fall back to the conventional `<repo>/.git/worktrees/<n>`.
            common = next((p for p in (gitdir, *gitdir.parents) if p.name == ".git"), gitdir)
        if common.name != ".git":
            continue
        for candidate in _walk_up(common.parent, home):
            if candidate == griptree:
                break
            if (candidate / ".gitgrip" / "griptrees.json").is_file():
                return candidate
    for declared in _griptree_declared_parents(griptree):
        if declared != griptree and _is_gripspace_root(declared) and not home.is_home(declared):
            return declared
    return None


def _griptree_children(griptree: Path) -> list[Path]:
    children: list[Path] = []
    try:
        with os.scandir(griptree) as entries:
            for index, entry in enumerate(entries):
                if index >= _GRIPTREE_SCAN_LIMIT:
                    break
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                        children.append(Path(entry.path))
    except OSError:
        return []
    # Sorted so two processes pick the same sub-repo when several could answer.
    return sorted(children)


def _griptree_declared_parents(griptree: Path) -> Iterator[Path]:
    """Parent paths recorded by gitgrip: `.griptree` (mainWorkspace) and, if a tool put
    one there, a parent key in `.gitgrip/griptree.json` (whose own `path` is the griptree
    itself, not its parent)."""
    keys = ("mainWorkspace", "main_workspace", "parent", "gripspace_root", "gripspaceRoot")
    for source in (griptree / ".griptree", griptree / ".gitgrip" / "griptree.json"):
        text = read_small(source)
        if text is None:
            continue
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        for key in keys:
            value = data.get(key)
            if isinstance(value, str) and value:
                path = Path(value)
                if not path.is_absolute():
                    path = griptree / path
                try:
                    resolved = path.resolve()
                except (OSError, RuntimeError):
                    continue
                if resolved.is_dir():
                    yield resolved


def _marker_at(directory: Path, home: _Home, warnings: list[str]) -> tuple[Path, str] | None:
    gitgrip = directory / ".gitgrip"
    # A linked griptree is checked before the other markers because membership beats
    # locality: its data belongs with the gripspace it is a member of, even if `gr`
    # also copied a griptrees.json or a .grip/ into it.
    if (gitgrip / "griptree.json").is_file():
        parent = _griptree_parent(directory, home)
        if parent is not None:
            return parent, "gitgrip"
        if (directory / ".grip").is_dir():
            return directory, "grip"
        warnings.append(
            f"{directory} is a linked griptree (.gitgrip/griptree.json) but its parent "
            "gripspace could not be found; using the griptree itself as the workspace root"
        )
        return directory, "gitgrip"
    if (gitgrip / "griptrees.json").is_file():
        return directory, "gitgrip"
    if (directory / ".grip").is_dir():
        return directory, "grip"
    return None


def _find_marker(start: Path, home: _Home, warnings: list[str]) -> tuple[Path, str] | None:
    for directory in _walk_up(start, home):
        found = _marker_at(directory, home, warnings)
        if found is not None:
            return found
    return None


# --------------------------------------------------------------------------- git


def _git_root(start: Path, home: _Home, warnings: list[str]) -> tuple[Path, bool] | None:
    """(workspace root from the nearest `.git`, whether it came through a linked worktree)."""
    for directory in _walk_up(start, home):
        dotgit = directory / ".git"
        if dotgit.is_dir():
            return directory, False
        if dotgit.is_file():
            return _linked_main_root(directory, dotgit, warnings), True
    return None


def _linked_main_root(checkout: Path, dotgit: Path, warnings: list[str]) -> Path:
    gitdir = read_gitdir_pointer(dotgit)
    if gitdir is None:
        warnings.append(
            f"{dotgit} is not a readable 'gitdir: <path>' pointer; "
            f"using {checkout} as the workspace root"
        )
        return checkout
    if not gitdir.is_dir():
        warnings.append(
            f"{dotgit} points at {gitdir}, which does not exist (moved or pruned?); "
            f"using {checkout} as the workspace root"
        )
        return checkout
    common, linked = common_dir(gitdir)
    if not linked:
        # A separated git dir (submodule, --separate-git-dir) is its own repository whose
        # checkout is right here.
        return checkout
    if not common.is_dir():
        warnings.append(
            f"{gitdir}/commondir names {common}, which does not exist; "
            f"using {checkout} as the workspace root"
        )
        return checkout
    if common.name == ".git":
        return common.parent
    warnings.append(
        f"{checkout} is a linked worktree of the bare repository {common}; "
        "using the worktree itself as the workspace root"
    )
    return checkout


# --------------------------------------------------------------------------- resolve


def _explicit_root(value: str | os.PathLike[str], source: str, base: Path, home: _Home) -> Path:
    text = os.fspath(value)
    path = Path(text)
    if home.path is not None and (text == "~" or text.startswith("~/")):
        path = home.path / text[2:]
    if not path.is_absolute():
        path = base / path
    what = "the root argument" if source == "argument" else f"{source}={text!r}"
    if not path.exists():
        raise WorkspaceError(
            f"{what}: {path} does not exist; refusing to create a store under a path "
            "that may be a typo (create the directory first)"
        )
    if not path.is_dir():
        raise WorkspaceError(f"{what}: {path} is not a directory")
    return _resolve_path(path, what)


def _check_root(root: Path, home: _Home, resolved_by: str) -> None:
    if resolved_by in ("argument", "SYNAPT_RECALL_ROOT", "GRIPSPACE_ROOT"):
        hint = f"point {resolved_by} at a project directory"
    else:
        hint = "run from inside a project or set SYNAPT_RECALL_ROOT"
    if _is_fs_root(root):
        raise WorkspaceError(
            f"refusing to use the filesystem root {root} as a workspace root "
            f"(resolved by {resolved_by}); {hint}"
        )
    if home.is_home(root):
        raise WorkspaceError(
            f"refusing to use $HOME ({root}) as a workspace root (resolved by {resolved_by}): "
            f"a store there would sit above every project; {hint}"
        )


def _resolve_cwd(cwd: str | os.PathLike[str] | None) -> Path:
    if cwd is None:
        try:
            path = Path(os.getcwd())
        except OSError as exc:
            raise WorkspaceAccessError(f"the current directory is not accessible: {exc}") from exc
    else:
        path = Path(os.fspath(cwd))
    if not path.exists():
        raise WorkspaceError(f"working directory {str(path)!r} does not exist")
    if not path.is_dir():
        raise WorkspaceError(f"working directory {str(path)!r} is not a directory")
    return _resolve_path(path, "working directory")


def _find_root(
    cwd: Path,
    root: str | os.PathLike[str] | None,
    env: Mapping[str, str],
    home: _Home,
    warnings: list[str],
) -> tuple[Path, str]:
    if root is not None:
        return _explicit_root(root, "argument", cwd, home), "argument"
    recall_root = env.get("SYNAPT_RECALL_ROOT", "")
    grip_root = env.get("GRIPSPACE_ROOT", "")
    if recall_root:
        if grip_root and os.path.normpath(grip_root) != os.path.normpath(recall_root):
            warnings.append(
                f"GRIPSPACE_ROOT={grip_root!r} ignored: SYNAPT_RECALL_ROOT={recall_root!r} "
                "takes precedence"
            )
        return _explicit_root(recall_root, "SYNAPT_RECALL_ROOT", cwd, home), "SYNAPT_RECALL_ROOT"
    if grip_root:
        return _explicit_root(grip_root, "GRIPSPACE_ROOT", cwd, home), "GRIPSPACE_ROOT"

    marker = _find_marker(cwd, home, warnings)
    if marker is not None:
        return marker
    git = _git_root(cwd, home, warnings)
    if git is not None:
        git_root, linked = git
        if linked:
            # A linked worktree can live outside its gripspace (`git worktree add ../x`);
            # its main checkout still sits inside it, so look for markers from there.
            marker = _find_marker(git_root, home, warnings)
            if marker is not None:
                return marker
        return git_root, "git"
    # Without git, a subdirectory of a directory that already has a workspace id is part of
    # that workspace: its legacy stores were imported there, and a read from it must see them.
    for directory in _walk_up(cwd, home):
        if workspace_file(directory).is_file():
            warnings.append(
                f"no workspace marker (.grip/, .gitgrip/), git checkout or SYNAPT_RECALL_ROOT "
                f"found above {cwd}; using {directory}, which has a workspace id, as a weak "
                "workspace root"
            )
            return directory, "directory"
    warnings.append(
        f"no workspace marker (.grip/, .gitgrip/), git checkout or SYNAPT_RECALL_ROOT found "
        f"above {cwd}; using that directory itself as a weak workspace root"
    )
    return cwd, "directory"


def _worktree_root(cwd: Path, root: Path, home: _Home, warnings: list[str]) -> Path:
    if cwd == root or cwd.is_relative_to(root):
        current = cwd
        while current != root:
            if not home.is_home(current) and is_checkout_root(current):
                return current
            current = current.parent
        return root
    for directory in _walk_up(cwd, home):
        if is_checkout_root(directory):
            return directory
    warnings.append(
        f"{cwd} is outside the workspace root {root} and not inside any checkout; "
        "using it as its own worktree"
    )
    return cwd


def _worktree_label(value: str) -> str:
    if "/" in value or "\\" in value or value in (".", "..") or value != value.strip():
        raise WorkspaceError(
            f"SYNAPT_RECALL_WORKTREE={value!r} is not a bare label (no '/', '\\', "
            "surrounding spaces, '.' or '..')"
        )
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise WorkspaceError(f"SYNAPT_RECALL_WORKTREE={value!r} contains control characters")
    return value


def resolve(
    cwd: str | os.PathLike[str] | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Workspace:
    """Resolve the workspace, worktree and branch for `cwd` (default: the process cwd).

    `root` and the root variables in `env` (default: os.environ) may be relative, meaning
    relative to `cwd`, or start with `~/` (the HOME in `env`). Raises WorkspaceError.
    """
    try:
        return _resolve(cwd, root, env)
    except (OSError, ValueError) as exc:
        if isinstance(exc, RecallError):
            raise
        # A path too long for the filesystem, with a NUL, or otherwise unusable (Python
        # 3.11's Path.exists raises for some): one typed error, never a traceback.
        shown = "the current directory" if cwd is None else repr(os.fspath(cwd))[:200]
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise WorkspaceError(f"cannot use {shown} as a working directory: {why}") from None


def _resolve(
    cwd: str | os.PathLike[str] | None,
    root: str | os.PathLike[str] | None,
    env: Mapping[str, str] | None,
) -> Workspace:
    environ: Mapping[str, str] = os.environ if env is None else env
    start = _resolve_cwd(cwd)
    home = _Home(environ)
    warnings: list[str] = []

    label = environ.get("SYNAPT_RECALL_WORKTREE", "")
    if label:
        _worktree_label(label)  # reject before any filesystem work

    ws_root, resolved_by = _find_root(start, root, environ, home, warnings)
    _check_root(ws_root, home, resolved_by)

    wt_root = _worktree_root(start, ws_root, home, warnings)
    if label:
        worktree = worktree_name = label
    else:
        worktree = worktree_key(wt_root, ws_root)
        worktree_name = wt_root.name

    return Workspace(
        root=ws_root,
        resolved_by=resolved_by,
        weak=resolved_by == "directory",
        worktree_root=wt_root,
        worktree=worktree,
        worktree_name=worktree_name,
        branch=read_branch(wt_root),
        warnings=tuple(warnings),
    )


def worktree_key(wt_root: Path, ws_root: Path) -> str:
    """The key a checkout is recorded under: '.' for the workspace root, `<main>@<name>`
    for a linked git worktree (`@<name>` when its main checkout is the root; <name> is
    git's administrative name, which survives `git worktree move`), else the checkout's
    path relative to the root (absolute when it lies outside)."""
    if wt_root == ws_root:
        return "."
    admin = linked_admin(wt_root)
    if admin is not None:
        main, name = admin
        if main == ws_root:
            return f"@{name}"
        if main.is_relative_to(ws_root):
            return f"{main.relative_to(ws_root).as_posix()}@{name}"
    if wt_root.is_relative_to(ws_root):
        return wt_root.relative_to(ws_root).as_posix()
    return wt_root.as_posix()
