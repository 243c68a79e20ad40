"""Module-level guarded tools for the pickle and process-pool tests (pickled by reference)."""

from __future__ import annotations

import subprocess

from scarguard.guard.decorator import guarded_tool


@guarded_tool
def failing_build(target: str, jobs: int = 1) -> str:
    """Fail like ``make`` does (default memory: ``SCARGUARD_PATH`` in the child)."""
    raise subprocess.CalledProcessError(2, ["make", target])


@guarded_tool
def echo(text: str) -> str:
    """Return the text."""
    return text


def plain_echo(text: str) -> str:
    """Return the text (guarded in the tests under another name, so pickled by value)."""
    return text


class Toolbox:
    """A class with a guarded method."""

    @guarded_tool
    def shout(self, text: str) -> str:
        """Return the text in capitals."""
        return text.upper()

    @guarded_tool
    @classmethod
    def label(cls, text: str) -> str:
        """Return the text prefixed with the class name."""
        return f"{cls.__name__}: {text}"


TOOLBOX = Toolbox()
