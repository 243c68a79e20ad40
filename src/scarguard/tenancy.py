"""The default tenant: which project a memory's records belong to when none is named.

Without ``project=``, a memory's project is its project root: the top level of the git
work tree the working directory is in (the directory holding ``.git``, a folder or, for
worktrees and submodules, a file), else the working directory itself. So agents working
in two repositories keep their records apart in one shared store (``$SCARGUARD_PATH``, a
PostgreSQL fleet store), and every process started anywhere inside one repository shares
its records. The project is the root's absolute, resolved path: readable in
``scarguard show`` and unique per checkout.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["derive_project", "project_root"]


def project_root(start: str | os.PathLike[str] | None = None) -> Path:
    """Return the project root of ``start`` (default: the working directory).

    The nearest directory, ``start`` included, that holds a ``.git`` entry; without one,
    ``start`` itself. Paths are resolved (symlinks followed), so two spellings of one
    directory give one root.
    """
    here = Path(start if start is not None else os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return here


def derive_project(start: str | os.PathLike[str] | None = None) -> str:
    """Return the project name derived from ``start``'s project root (see the module)."""
    return str(project_root(start))
