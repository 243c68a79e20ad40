"""The paths a "no such file or directory" error says are missing.

A shell command's words name a file only when they look like one (``src/a.py``); ``ls
build``, ``cd src`` and ``cat README`` name none, so their failure depended on no watched
path, and creating ``build`` outside the guarded tools left the call refused. The error text
names the path: ``ls: cannot access 'build': No such file or directory``, ``bash: line 1:
cd: src: No such file or directory``, ``[Errno 2] No such file or directory: 'data.csv'``,
``ENOENT: no such file or directory, open 'config'``, zsh's ``cd: no such file or
directory: src``. Its token is "missing" until it is created, which is the change that can
end the failure; so is its folder's, for a file whose folder is missing (``touch a/b``).
"""

from __future__ import annotations

import functools
import os
import re
from typing import Final

__all__ = ["missing_paths"]

_PHRASE: Final = re.compile(
    r"no such file or directory|\bENOENT\b|\bdoes(?: not|n't) exist\b|\bcannot find the "
    r"(?:file|path)\b|\bdid not match any file",
    re.IGNORECASE,
)
_QUOTED: Final = re.compile(
    r"""(?<!\w)(?:'([^'\n]{1,300})'|"([^"\n]{1,300})"|\u2018([^\u2019\n]{1,300})\u2019"""
    r"""|`([^'\n`]{1,300})')(?!\w)"""
)  # ('x', "x", curly quotes, `x'; a quote after a letter is an apostrophe: "can't open")
_BEFORE: Final = re.compile(r"([^\s:'\"\u2018\u2019`]{1,300}): (?i:no such file or directory)")
_AFTER: Final = re.compile(r"(?i:no such file or directory): ([^\s'\"\u2018\u2019`]{1,300})$")
_MAX: Final = 8
_READ: Final = 8192
_NOT_PATHS: Final = frozenset(
    {"ENOENT", "Error", "error", "fatal", "cd", "open", "stat", "lstat", "scandir", "mkdir",
     "rename", "unlink"}
)  # fmt: skip
"""Words such a line puts where a path could stand (``Error: ENOENT: ..., open 'x'``, zsh's
``cd: no such file or directory: x``)."""


def missing_paths(error: str | None) -> tuple[str, ...]:
    """Return the paths an error says do not exist, each followed by its folder, in order.

    Args:
        error: The failure's error text (its first 8 KiB are read).

    Returns:
        Up to eight paths, as the error spells them, and for each one in a folder, that
        folder (a relative path's own, not the root). Nothing for an error that says no path
        is missing.
    """
    if not error:
        return ()
    return _paths(error[:_READ])


@functools.lru_cache(maxsize=256)
def _paths(text: str) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for line in text.splitlines():
        if not _PHRASE.search(line):
            continue
        names = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(line)]
        names += _BEFORE.findall(line) + _AFTER.findall(line.rstrip())
        for name in names:
            name = name.strip()
            if not name or name in _NOT_PATHS or name.startswith("-") or "://" in name:
                continue
            found[name] = None
            folder = os.path.dirname(name.rstrip("/"))
            if folder and folder != "/":
                found[folder] = None
        if len(found) >= _MAX:
            break
    return tuple(found)[:_MAX]
