"""Programs a failure names as missing, and where an install under a root may put them.

The knowledge behind the ``program`` condition of :mod:`scarguard.learning.semantic`: the
program a ``command not found`` error names (in the wording of the usual shells and
runtimes), and the folders under a root where installs put programs a tool's shell may have
on its ``PATH``.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["ROOT_BINS", "missing_program", "program_paths"]

_NOT_FOUND: Final = (
    re.compile(r"(?:^|[\s:])([\w.+-]{1,100}): command not found\b", re.M),
    re.compile(r"\bcommand not found: ([\w.+-]{1,100})"),
    re.compile(r"'([\w.+-]{1,100})' is not recognized as an internal or external command"),
    re.compile(r"exec: \"([\w.+-]{1,100})\": executable file not found in \$PATH"),
    re.compile(r"\bspawn ([\w.+-]{1,100}) ENOENT\b"),
    re.compile(r"\b(?:sh|dash|ash): (?:\d+: |line \d+: )?([\w.+-]{1,100}): not found\b"),
)
_SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash", "fish", "line"})


ROOT_BINS: Final = (
    ".venv/bin", "venv/bin", "env/bin", ".venv/Scripts", "venv/Scripts", "node_modules/.bin",
    "bin", ".bin", ".local/bin", "vendor/bin", "target/debug", "target/release",
)  # fmt: skip
"""Folders under a root where installs put programs that a tool's shell may have on its PATH."""


def program_paths(program: str) -> tuple[str, ...]:
    """Return where under a root an install may put ``program`` (relative paths)."""
    if "/" in program or "\\" in program or program.startswith("."):
        return ()
    return tuple(
        f"{folder}/{name}"
        for folder in ROOT_BINS
        for name in ((program, f"{program}.exe") if folder.endswith("Scripts") else (program,))
    )


def missing_program(error: str | None) -> str | None:
    """Return the program a ``command not found`` error names.

    ``bash: foo: command not found``, ``zsh: command not found: foo``, ``spawn foo ENOENT``,
    dash's ``sh: 1: foo: not found`` (the ``sh`` that runs npm's scripts on Debian)...
    """
    for pattern in _NOT_FOUND:
        for found in pattern.finditer(error or ""):
            name = found.group(1)
            if name not in _SHELLS and not name.isdigit():
                return name
    return None
