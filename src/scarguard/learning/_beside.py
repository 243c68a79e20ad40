"""The configuration and data files beside what a failing command ran.

``python3 app.py`` failing with ``KeyError: 'port'`` depends on ``config.json``, which
neither the command nor the error names: fixed by hand, or by a tool the memory does not
guard, it left the call refused. A command whose failure has no known condition (an error
that is not deterministic for the same input) therefore also watches the configuration-like
files of the root and of the folders of the scripts it names (``scripts/migrate.py``), and
of their ``config``, ``conf``, ``settings``, ``fixtures`` and ``data`` folders: files a
program reads at run time. Logs are not among them (a running server rewrites its own).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from typing import Final

__all__ = ["beside_files"]

_SUFFIXES: Final = frozenset(
    {".json", ".jsonc", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".env", ".xml",
     ".properties", ".csv", ".tsv", ".sql"}
)  # fmt: skip
"""What configuration and data files end with."""
_SCRIPTS: Final = frozenset(
    {".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".sh", ".bash", ".rb", ".pl", ".php", ".r",
     ".lua", ".jl"}
)  # fmt: skip
"""What the scripts a command runs end with (their folder is looked in too)."""
_FOLDERS: Final = ("conf", "config", "configs", "data", "fixtures", "settings", "testdata")
_MAX: Final = 16
_LISTED: Final = 1000
"""A folder with more names than this is not looked into (a data dump, not a project's)."""


def beside_files(
    files: Iterable[str], names: Callable[[str], frozenset[str] | None]
) -> tuple[str, ...]:
    """Return the configuration-like files of the root and of the scripts' folders.

    Args:
        files: The files the command names (``app.py``, ``scripts/migrate.py``).
        names: Lists a folder (relative to the root), ``None`` when it cannot be.

    Returns:
        Up to 16 paths relative to the root, the root's first, each folder's sorted.
    """
    files = tuple(files)
    key = (getattr(names, "__self__", names), files)
    known = _REMEMBERED.get(key)
    if known is not None and all(names(f) is listing for f, listing in known[0]):
        return known[1]  # (no folder it listed changed: the same answer)
    listed: dict[str, frozenset[str] | None] = {}

    def names_once(folder: str) -> frozenset[str] | None:
        listing = listed[folder] = names(folder)
        return listing

    found = _found(files, names_once)
    if len(_REMEMBERED) >= 256:
        _REMEMBERED.clear()
    _REMEMBERED[key] = (tuple(listed.items()), found)
    return found


_REMEMBERED: dict[
    tuple[object, tuple[str, ...]],
    tuple[tuple[tuple[str, frozenset[str] | None], ...], tuple[str, ...]],
] = {}
"""Answers by observer and command files, with the listings they were read from."""


def _found(
    files: tuple[str, ...], names: Callable[[str], frozenset[str] | None]
) -> tuple[str, ...]:
    folders = {".": None}
    for name in files:
        if os.path.splitext(name)[1].lower() in _SCRIPTS and not os.path.isabs(name):
            folder = os.path.dirname(os.path.normpath(name))
            if folder and not folder.startswith(".."):
                folders[folder] = None
    found: list[str] = []
    for folder in folders:
        listing = names(folder)
        if listing is None or len(listing) > _LISTED:
            continue
        configs, subfolders = _kept(listing)
        found.extend(_joined(folder, configs))
        for sub in subfolders:
            inner = os.path.join(folder, sub) if folder != "." else sub
            listing = names(inner)
            if listing is not None and len(listing) <= _LISTED:
                found.extend(_joined(inner, _kept(listing)[0]))
        if len(found) >= _MAX:
            break
    return tuple(found[:_MAX])


@functools.lru_cache(maxsize=256)
def _kept(listing: frozenset[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return a folder's configuration-like files and its configuration folders, sorted."""
    configs = sorted(n for n in listing if os.path.splitext(n)[1].lower() in _SUFFIXES)
    return tuple(configs), tuple(f for f in _FOLDERS if f in listing)


def _joined(folder: str, names: Iterable[str]) -> list[str]:
    return [os.path.join(folder, n) if folder != "." else n for n in names]
