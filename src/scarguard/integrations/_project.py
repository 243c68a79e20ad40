"""Open the memory of the project a tool call belongs to.

The MCP proxy and the agent CLI hooks run where the agent works, not in code the user wrote,
so they cannot be handed a :class:`~scarguard.FailureMemory`. They open one the same way:
``--path`` (or ``$SCARGUARD_PATH``), else ``.scarguard/memory.db`` at the project root (the
git top level of the working directory, else the directory itself; see
:mod:`scarguard.tenancy`), with that root as the tenant project unless one is named. Every
agent working in one repository, whatever subdirectory it starts in, shares one memory.
"""

from __future__ import annotations

import os
from pathlib import Path

from scarguard.memory import FailureMemory
from scarguard.stores.factory import DEFAULT_PATH, PATH_ENV
from scarguard.tenancy import project_root

__all__ = ["memory_path", "open_project_memory"]


def memory_path(path: str | None, root: Path) -> str:
    """Return the store a proxy or hook uses: ``path``, ``$SCARGUARD_PATH`` or the root's."""
    if path:
        return path
    from_env = os.environ.get(PATH_ENV)
    if from_env:
        return os.path.expanduser(from_env)
    return str(root / DEFAULT_PATH)


def open_project_memory(
    path: str | None = None,
    *,
    workspace: str = "default",
    project: str | None = None,
    cwd: str | os.PathLike[str] | None = None,
    enforce: bool = True,
) -> FailureMemory:
    """Open the memory of the project that ``cwd`` lies in.

    Args:
        path: An explicit store (a file, ``:memory:`` or a ``postgresql://`` URL).
        workspace: Tenant workspace.
        project: Tenant project (default: the project root's path).
        cwd: The agent's working directory (default: this process's).
        enforce: ``False`` for shadow mode: decide and count, refuse nothing.

    Raises:
        StoreError: The store cannot be opened.
    """
    root = project_root(cwd)
    location = memory_path(path, root)
    if "://" not in location and location != ":memory:":
        Path(location).expanduser().parent.mkdir(parents=True, exist_ok=True)
    return FailureMemory(
        location, workspace=workspace, project=project or str(root), enforce=enforce
    )
