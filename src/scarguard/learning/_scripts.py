"""The files a script that a failing command runs names in its text.

``./run.sh`` fails in ``./step.sh``, which it runs; ``python3 check.py`` fails because the
``inbox`` folder its code lists is empty; ``npm test`` runs ``node test.js``, which the
``test`` script of ``package.json`` names. Neither the command nor the error names those
files, so a fix there, by hand or by a tool the memory does not guard, left the call refused.

- A shell script (``.sh``, ``.bash``, or a ``bash``/``sh`` argument): the file-like words of
  its lines (``./step.sh``, ``. ./lib.sh``, ``python3 tools/gen.py``, ``data/in.csv``),
  comments left out, and those of the scripts it names in turn, two levels deep.
- Another script (Python, JavaScript, Ruby...): its string literals that name a path
  (``"data/in.csv"``, ``'inbox'`` where ``inbox`` is a name in the folder it runs in or in
  its own folder, and ``"input.txt"`` inside such a folder: ``HERE / "data" / "input.txt"``).
- A package script (``npm test``, ``npm run build``, ``yarn build``, ``pnpm run lint``):
  the ``package.json`` script's own command, read as a command run in the package folder.

Paths are relative to the folder the command runs in; all work is bounded.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from typing import Final

from scarguard.adapters._shell import command_files

__all__ = ["PACKAGE_MANAGERS", "package_script", "script_names"]

Read = Callable[[str], str | None]
Names = Callable[[str], frozenset[str] | None]

_SHELL_SCRIPTS: Final = (".sh", ".bash")
_OTHER_SCRIPTS: Final = (".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".rb", ".pl", ".php", ".lua")
_READ: Final = 65536
"""Only the first 64 KiB of a script are read."""
_PER_SCRIPT: Final = 12
"""At most this many paths taken from one script."""
_LITERAL: Final = re.compile(r"""(?<![\w\\])(['"])([\w@+-][\w./@+-]{0,150})\1""")
"""A quoted word made of the characters of a path (no spaces, no escapes)."""
_PATHISH: Final = re.compile(r"/|\.[A-Za-z][A-Za-z0-9]{0,9}$")
PACKAGE_MANAGERS: Final = frozenset({"npm", "yarn", "pnpm", "bun"})
"""The package managers whose scripts ``package.json`` names (``npm test``, ``yarn build``)."""
_VALUED: Final = frozenset({"--prefix", "-C", "--cwd", "--dir", "--filter", "-w", "--workspace"})
"""Options whose value is the next word (a folder, a workspace)."""
_RUN_WORDS: Final = frozenset({"run", "run-script", "rum", "urn"})
_LIFECYCLE: Final = {"test": "test", "t": "test", "tst": "test", "start": "start", "stop": "stop"}
"""npm's own commands that run the script of the same name."""
_NOT_SCRIPTS: Final = frozenset(
    {"install", "i", "ci", "add", "remove", "rm", "uninstall", "update", "upgrade", "exec", "x",
     "dlx", "create", "init", "publish", "pack", "link", "audit", "outdated", "why", "list",
     "ls", "info", "view", "config", "cache", "login", "logout", "version", "help", "set"}
)  # fmt: skip
"""Package manager commands that are not a script's name (``yarn install``...)."""


def script_names(where: str, script: str, read: Read, names: Names) -> Iterator[str]:
    """Yield the paths a script (relative to the root) names, and those its scripts name.

    Args:
        where: The folder the command runs in (a script's relative paths are from there).
        script: The script's path, relative to the root.
        read: Returns a file's text, relative to the root (``None`` when unreadable).
        names: Lists a folder relative to the root (``None`` when it cannot be).
    """
    todo, seen = [script], {script}
    for _ in range(2):
        following: list[str] = []
        for path in todo:
            for found in _named(where, path, read, names):
                if found not in seen:
                    seen.add(found)
                    yield found
                    if found.endswith(_SHELL_SCRIPTS):
                        following.append(found)
        todo = following[:8]


def _named(where: str, script: str, read: Read, names: Names) -> list[str]:
    is_shell = script.endswith(_SHELL_SCRIPTS)
    if not is_shell and not script.endswith(_OTHER_SCRIPTS):
        return []
    text = read(script)
    if not text:
        return []
    text = text[:_READ]
    if is_shell or text.startswith("#!/bin/sh") or text.startswith("#!/bin/bash"):
        found = [_joined(where, f) for f in _shell_words(text) if not os.path.isabs(f)]
    else:
        found = _literals(where, os.path.dirname(script) or ".", text, names)
    return found[:_PER_SCRIPT]


def _shell_words(text: str) -> list[str]:
    words: dict[str, None] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        for word in command_files({"command": line.split(" #", 1)[0]}):
            if "$" not in word and not word.startswith("~"):
                words[word] = None
        if len(words) >= _PER_SCRIPT:
            break
    return list(words)


def _literals(where: str, own: str, text: str, names: Names) -> list[str]:
    """String literals naming a path, joined with the folder they are a name of.

    A literal counts when it is file-like (``"data/in.csv"``) or a name of the folder the
    script runs in, or of the script's own folder (``Path(__file__).parent / "data"``). A
    literal naming a file inside a folder another literal names is that file (``"data"``
    and ``"input.txt"``: ``data/input.txt``, where it is there).
    """
    folders = dict.fromkeys([where, own])
    listings = {folder: names(folder) or frozenset() for folder in folders}
    literals = []
    for _, literal in _LITERAL.findall(text):
        if ".." not in literal and not literal.startswith("."):
            literals.append(literal.rstrip("/"))
            if len(literals) >= _PER_SCRIPT * 8:
                break
    found: dict[str, None] = {}
    named_folders = []
    for literal in dict.fromkeys(literals):
        first = literal.split("/", 1)[0]
        home = next((f for f in folders if first in listings[f]), None)
        if home is None and not _PATHISH.search(literal):
            continue
        path = _joined(home or where, literal)
        found[path] = None
        if home is not None and "/" not in literal and "." not in literal:
            named_folders.append(path)
        if len(found) >= _PER_SCRIPT:
            return list(found)
    for folder in named_folders[:4]:  # a file named inside a folder named
        inside = names(folder) or frozenset()
        for literal in literals:
            if literal in inside:
                found[_joined(folder, literal)] = None
                if len(found) >= _PER_SCRIPT:
                    return list(found)
    return list(found)


def package_script(where: str, words: list[str], read: Read) -> str | None:
    """Return the command of the ``package.json`` script a package manager's words run.

    ``where`` is the package's folder (after ``--prefix``, ``--cwd``, ``-C``).
    """
    program = os.path.basename(words[0])
    if program not in PACKAGE_MANAGERS or len(words) < 2:
        return None
    rest, skip = [], False
    for word in words[1:]:
        if skip:
            skip = False
        elif word in _VALUED:
            skip = True
        elif not word.startswith("-"):
            rest.append(word)
    if not rest:
        return None
    if rest[0] in _RUN_WORDS:
        name = rest[1] if len(rest) > 1 else None
    elif rest[0] in _LIFECYCLE:
        name = _LIFECYCLE[rest[0]]
    elif program != "npm" and rest[0] not in _NOT_SCRIPTS:
        name = rest[0]  # yarn build, pnpm lint, bun test
    else:
        name = None
    if name is None:
        return None
    text = read(_joined(where, "package.json"))
    try:
        scripts = json.loads(text or "{}").get("scripts") or {}
    except (ValueError, AttributeError):
        return None
    command = scripts.get(name) if isinstance(scripts, dict) else None
    return command[:4096] if isinstance(command, str) else None


def _joined(where: str, name: str) -> str:
    return os.path.normpath(name if where == "." else os.path.join(where, name))
