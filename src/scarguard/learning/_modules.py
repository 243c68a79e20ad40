"""Modules a failure names as missing, and the files whose creation would supply them.

``ModuleNotFoundError: No module named 'helper'`` (or ``python -m app``'s ``No module named
app``) is ended by creating ``helper.py`` or a ``helper`` package under the root, as much as
by an install (into the workspace's ``.venv``: its ``site-packages`` folder is watched);
``Error: Cannot find module './util'`` by creating ``util.js``, and ``Cannot find module
'left-pad'`` by an install into ``node_modules``. Watching those paths (missing
when the failure was recorded) lets a module created by hand, or by a tool the memory does
not guard, lift the failure; a guarded install already does.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["module_paths"]

_PYTHON: Final = re.compile(r"\bNo module named '?([A-Za-z_][\w.]{0,200})'?")
_NODE: Final = re.compile(r"\bCannot find (?:module|package) '([^'\n]{1,200})'")
_NODE_FILES: Final = (".js", ".mjs", ".cjs", ".ts", ".json", "/index.js", "/index.ts")
_SITE_PACKAGES: Final = tuple(
    f"{venv}/lib/python3.{minor}/site-packages"
    for venv in (".venv", "venv")
    for minor in range(8, 15)
)
"""Where an install into the workspace's virtual environment goes: an install adds an entry,
which moves the folder's ``mtime`` (a folder missing stays a missing path, as cheap)."""


def module_paths(error: str | None) -> tuple[str, ...]:
    """Return the paths, relative to the root, whose creation may supply a missing module.

    Args:
        error: The failure's error text.

    Returns:
        For a Python module ``a.b``: ``a/b.py``, ``a/b/__init__.py``, ``a/b``, and for its
        package ``a``: ``a.py``, ``a/__init__.py``, ``a``; then the ``site-packages`` folders
        of a ``.venv`` or ``venv`` under the root. For a Node module: the files a relative one
        resolves to, or ``node_modules/<name>``. Nothing when no module is named.
    """
    text = error or ""
    found: dict[str, None] = {}
    for match in _PYTHON.finditer(text):
        parts = match.group(1).rstrip(".").split(".")
        for end in range(len(parts), 0, -1):
            stem = "/".join(parts[:end])
            found.update(dict.fromkeys((f"{stem}.py", f"{stem}/__init__.py", stem)))
    if found:
        found.update(dict.fromkeys(_SITE_PACKAGES))
    for match in _NODE.finditer(text):
        name = match.group(1)
        if name.startswith(("./", "../")):
            stem = name[2:] if name.startswith("./") else name
            found.update(dict.fromkeys((stem, *(f"{stem}{ext}" for ext in _NODE_FILES))))
        elif not name.startswith("/"):
            found[f"node_modules/{name}"] = None
    return tuple(found)
