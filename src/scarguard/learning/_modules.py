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

import functools
import glob
import os
import re
import shutil
from typing import Final

__all__ = ["interpreter_site_packages", "module_paths"]

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


_PYTHONS: Final = re.compile(r"^(?:python(?:3(?:\.\d+)?)?|pytest|py\.test|pip3?|uv|poetry)$")
"""Programs whose missing module an install into their interpreter's ``site-packages``
supplies (``pip install requests`` in a terminal)."""


def interpreter_site_packages(program: str | None) -> tuple[str, ...]:
    """Return the ``site-packages`` folders of the interpreter a Python program runs on.

    The interpreter is found on ``PATH`` (``python3``, ``pytest``, ``.venv/bin/python``), its
    prefix is the folder above its ``bin``, and its folders are ``lib/python3.X/
    site-packages`` there, and the user's (``~/.local/lib/python3.X/site-packages``): an
    install outside the workspace adds an entry to one of them. Nothing for another program
    or one not found. Remembered per program and ``PATH``.
    """
    if not program or not _PYTHONS.match(os.path.basename(program)):
        return ()
    return _site_packages(program, os.environ.get("PATH", ""))


@functools.lru_cache(maxsize=32)
def _site_packages(program: str, path: str) -> tuple[str, ...]:
    found = shutil.which(program, path=path)
    if found is None:
        return ()
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(found)))
    unreal = os.path.dirname(os.path.dirname(os.path.abspath(found)))  # a venv's own prefix
    bases = [unreal, prefix]
    if os.path.basename(os.path.dirname(found)) == "shims":  # pyenv's: any of its versions
        pyenv = os.path.dirname(os.path.dirname(found))
        bases += sorted(glob.glob(os.path.join(pyenv, "versions", "*")))
    folders: dict[str, None] = {}
    for base in dict.fromkeys(bases):
        for lib in sorted(glob.glob(os.path.join(base, "lib", "python3*", "site-packages"))):
            folders[lib] = None
    home = os.path.expanduser("~")
    if home != "~":
        for version in sorted({os.path.basename(os.path.dirname(f)) for f in folders}):
            folders[os.path.join(home, ".local", "lib", version, "site-packages")] = None
    return tuple(folders)[:_MAX_SITES]


_MAX_SITES: Final = 12
