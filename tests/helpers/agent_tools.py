"""Tool bodies the framework tests build their tool objects from, with a run counter.

The framework tests guard tool objects they did not write: each framework's tool object is
built here (another module), the way a toolkit would build it, around a body that fails
deterministically (the file does not exist) and counts how often it really ran.
"""

from __future__ import annotations

from pathlib import Path

MISSING = "notes/missing.txt"
"""The path the scripted model keeps asking for; it never exists."""


class Counter:
    """How many times the tool body ran."""

    def __init__(self) -> None:
        self.runs = 0


def read_text(counter: Counter, path: str) -> str:
    """Read a text file (the body every framework's tool wraps)."""
    counter.runs += 1
    return Path(path).read_text(encoding="utf-8")
