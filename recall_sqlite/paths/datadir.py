"""The store's data directory inside a workspace (`<root>/.synapt/recall/`): where the
database lives by default, keeping it private, refusing one that a symlink leads out of
the workspace, and the `.gitignore` that keeps `git add -A` from publishing it.

(synapt keeps its own journals in the same directory; where synapt puts what is
synapt_layout.py's business, not this module's.)"""

from __future__ import annotations

import os

from ..errors import WorkspaceError
from .files import pure, write_private

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

    from .files import StrPath

# `<root>/.synapt/recall`: the one definition of the data directory's place, shared with
# synapt (synapt_layout.py builds its layouts from these names).
HOLDER: Final = ".synapt"
RECALL: Final = "recall"
DATA_DIR: Final = f"{HOLDER}/{RECALL}"
DB_FILE: Final = "recall-sqlite.db"
_GITIGNORE = "# recall-sqlite: session memory can hold secrets; never commit it\n*\n"


def holder(root: StrPath) -> str:
    """`<root>/.synapt`: the directory that holds the data directory (and its .gitignore)."""
    return os.path.join(pure(root), HOLDER)


def data_dir(root: StrPath) -> str:
    """`<root>/.synapt/recall`: the data directory at a root."""
    return os.path.join(holder(root), RECALL)


def default_db_path(root: StrPath) -> str:
    return os.path.join(data_dir(root), DB_FILE)


def check_data_dir(root: StrPath, *, trusted: bool = False) -> None:
    """Refuse a `.synapt`, `.synapt/recall` or store file that is a symlink leading out of
    the workspace: a repository can carry one (into another user's world-writable
    directory, or into /etc for a root process), and entries would be written and read
    there. `trusted`: the root was set explicitly (SYNAPT_RECALL_ROOT), like `--db`."""
    if trusted:
        return
    try:
        real_root = os.path.realpath(root)
    except (OSError, ValueError):
        return
    for path in (holder(root), data_dir(root), default_db_path(root)):
        if not os.path.islink(path):
            continue
        target = os.path.realpath(path)
        if target != real_root and not target.startswith(real_root + os.sep):
            raise WorkspaceError(
                f"{path} is a symlink to {target}, outside the workspace; refusing to keep "
                "memory there (set SYNAPT_RECALL_ROOT or --db to choose a place explicitly)"
            )


def ensure_gitignore(root: StrPath) -> None:
    """`.synapt/.gitignore` ignoring everything, so `git add -A` does not publish the store."""
    holds = holder(root)
    target = os.path.join(holds, ".gitignore")
    if os.path.lexists(target) or not os.path.isdir(holds):
        return
    try:
        write_private(target, _GITIGNORE.encode(), exclusive=True)
    except OSError:
        pass
