"""Shell commands: which change the workspace, which words and files they name.

A shell command's targets are rarely declared, so what the engine knows about one comes from
its words: the programs it runs, the files it names, and the build manifests whose change can
change what any command does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["MANIFESTS", "command_words", "shell_changes_workspace"]

MANIFESTS = frozenset(
    {
        "Makefile",
        "makefile",
        "GNUmakefile",
        "package.json",
        "package-lock.json",
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        "Cargo.toml",
        "go.mod",
        "tsconfig.json",
        "CMakeLists.txt",
        ".env",
    }
)
"""Files whose change can change what any command does (build and dependency manifests)."""

_SPLIT = re.compile(r"""[\s'"`=;|&()<>,]+""")
_MAX_WORDS = 64


def command_words(args: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the words of a call's string arguments, with the basenames of path-like ones.

    They tell which files a shell command names, so that changing one of them (or creating a
    path the command needs) can lift what was learned about the command.
    """
    words: dict[str, None] = {}
    for value in args.values():
        if not isinstance(value, str):
            continue
        for word in _SPLIT.split(value):
            if not word or len(word) > 200:
                continue
            words[os.path.normpath(word) if "/" in word else word] = None
            if "/" in word:
                words[os.path.basename(word.rstrip("/"))] = None
            if len(words) >= _MAX_WORDS:
                return tuple(words)
    return tuple(words)


_CHANGING_PROGRAMS: Final = frozenset(
    {
        "rm",
        "rmdir",
        "mv",
        "cp",
        "mkdir",
        "touch",
        "ln",
        "chmod",
        "chown",
        "truncate",
        "patch",
        "unzip",
        "install",
        "kill",
        "pkill",
        "killall",
        "fuser",
        "tee",
        "dd",
    }
)
"""Shell programs that change files or processes whatever their arguments."""
_CHANGING_SUBCOMMANDS: Final[Mapping[str, frozenset[str]]] = {
    "git": frozenset(
        {
            "checkout",
            "switch",
            "reset",
            "restore",
            "stash",
            "pull",
            "merge",
            "rebase",
            "apply",
            "am",
            "cherry-pick",
            "revert",
            "commit",
            "clone",
            "clean",
            "worktree",
            "init",
            "rm",
            "mv",
        }
    ),
    "pip": frozenset({"install", "uninstall"}),
    "pip3": frozenset({"install", "uninstall"}),
    "uv": frozenset({"pip", "add", "remove", "sync", "venv"}),
    "poetry": frozenset({"add", "remove", "install", "update", "lock"}),
    "npm": frozenset({"install", "i", "ci", "uninstall", "remove", "rm", "update", "link"}),
    "yarn": frozenset({"add", "remove", "install", "upgrade"}),
    "pnpm": frozenset({"add", "remove", "install", "i", "update"}),
    "cargo": frozenset({"add", "remove", "install", "update", "clean"}),
    "go": frozenset({"get", "install", "mod"}),
    "apt": frozenset({"install", "remove", "purge"}),
    "apt-get": frozenset({"install", "remove", "purge"}),
    "brew": frozenset({"install", "uninstall", "upgrade"}),
    "conda": frozenset({"install", "remove", "create", "update"}),
    "docker": frozenset({"stop", "rm", "kill", "run", "restart", "compose", "pull"}),
    "systemctl": frozenset({"start", "stop", "restart", "reload"}),
    "service": frozenset({"start", "stop", "restart", "reload"}),
    "make": frozenset({"clean", "install", "distclean"}),
    "sed": frozenset({"-i"}),
}
"""Programs that change the workspace with one of these words (``git checkout``...)."""
_PREFIXES: Final = frozenset({"sudo", "env", "nohup", "time", "exec", "command", "xargs"})
_SEGMENTS: Final = re.compile(r"&&|\|\||[;|\n]")
_REDIRECT: Final = re.compile(r"(?<![0-9&])>{1,2}\s*(?!&)[^\s>]")


def shell_changes_workspace(command: str) -> bool:
    """Return whether a shell command changes files or processes (so earlier failures may not hold).

    A command counts when any of its segments runs a changing program (``rm``, ``kill``...),
    a changing subcommand (``git checkout``, ``pip install``, ``sed -i``...), or redirects
    output into a file. Reading commands (``ls``, ``cat``, ``npm test``) do not.
    """
    if _REDIRECT.search(command):
        return True
    for segment in _SEGMENTS.split(command):
        words = [w for w in segment.split() if "=" not in w or w.startswith("-")]
        while words and words[0] in _PREFIXES:
            words = words[1:]
        if not words:
            continue
        program = os.path.basename(words[0])
        if program in _CHANGING_PROGRAMS:
            return True
        changing = _CHANGING_SUBCOMMANDS.get(program)
        if changing and any(w in changing for w in words[1:3]):
            return True
    return False
