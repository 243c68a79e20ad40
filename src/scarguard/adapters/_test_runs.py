"""Test runs: which command runs which tests, and whether its output says tests failed.

A run of a known test runner without a selection runs every test a selection can name, so
its success can lift what a failing selection taught.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, Final

from scarguard.adapters._shell import REDIRECT, SEGMENTS

__all__ = ["reports_failed_tests", "selected_tests"]

_RUNNERS: Final[Mapping[tuple[str, ...], str]] = {
    ("pytest",): "pytest",
    ("py.test",): "pytest",
    ("python", "-m", "pytest"): "pytest",
    ("python3", "-m", "pytest"): "pytest",
    ("cargo", "test"): "cargo test",
    ("jest",): "jest",
    ("npx", "jest"): "jest",
}
"""Test runners whose run without a selection runs every test a selection can name."""
_FIRST_WORDS: Final = frozenset(prefix[0] for prefix in _RUNNERS)
_CACHED_COMMAND = 1024
"""Commands up to this long have their verdict remembered."""
_QUIET_OPTIONS: Final = frozenset(
    {"-q", "-qq", "-v", "-vv", "-vvv", "-x", "-s", "-l", "--quiet", "--verbose", "--exitfirst",
     "--showlocals", "--no-header", "--silent", "--ci"}
)  # fmt: skip
"""Options that change how a test run reports, not which tests it runs."""
_QUIET_PREFIXES: Final = ("--tb=", "--color=", "--colors", "--durations=")
_PYTEST_FILE: Final = re.compile(
    r"^(?:[\w.@+-]+/)*(?:test_[\w.-]*|[\w.-]*_test)\.py(?:::[\w\[\].:-]+)?$"
)
_PYTEST_FOLDER: Final = re.compile(r"^(?:\.|\./)?(?:[\w@+-][\w.@+-]*/)*(?:[\w@+-]+/?)?$")
"""A folder pytest collects test files in (``tests``, ``tests/unit/``, ``.``): no suffix."""
_SCANNED: Final = 8192
"""Characters of a test run's output searched for its verdict, at its start and at its end."""
_TESTS_FAILED: Final = re.compile(
    r"(?m)^FAILED \S|\b\d+ failed\b|^test result: FAILED\b|^Tests:\s.*\b\d+ failed\b"
)


def selected_tests(args: Mapping[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    """Return the test runner a command runs and the tests it selects, if it is a test run.

    ``pytest tests/test_a.py::test_x`` is ``("pytest", ("tests/test_a.py::test_x",))``;
    ``python -m pytest -q`` is ``("pytest", ())``, a run of every test. Only a single command
    of a known runner (``pytest``, ``cargo test``, ``jest``) whose options change how it
    reports, not what it runs, and whose selection a run without one covers (pytest: files
    named as pytest collects them by default, ``test_*.py`` or ``*_test.py``, and folders):
    anything else is ``None``.
    """
    command = args.get("command")
    if not isinstance(command, str):
        command = args.get("cmd")
        if not isinstance(command, str):
            return None
    if len(command) <= _CACHED_COMMAND:
        return _selected_cached(command)  # test commands repeat
    return _selected(command)


def _selected(command: str) -> tuple[str, tuple[str, ...]] | None:
    words = command.split()
    if not words or words[0] not in _FIRST_WORDS:
        return None  # no runner (the usual case: judged before any regex runs)
    if SEGMENTS.search(command) or REDIRECT.search(command):
        return None
    prefix = next((p for p in _RUNNERS if tuple(words[: len(p)]) == p), None)
    if prefix is None:
        return None
    runner = _RUNNERS[prefix]
    selection: list[str] = []
    for word in words[len(prefix) :]:
        if word in _QUIET_OPTIONS or word.startswith(_QUIET_PREFIXES):
            continue
        if word.startswith("-") or "=" in word or "$" in word:
            return None  # an option that may choose what runs (or an unexpanded word)
        if runner == "pytest" and not (_PYTEST_FILE.match(word) or _PYTEST_FOLDER.match(word)):
            return None
        selection.append(word)
    return runner, tuple(selection)


_selected_cached = functools.lru_cache(maxsize=1024)(_selected)


def reports_failed_tests(error: str | None) -> bool:
    """Return whether a test run's output says tests ran and failed (not a usage error).

    pytest's ``FAILED a.py::t`` and ``1 failed``, cargo's ``test result: FAILED``, jest's
    ``Tests: 1 failed``.
    """
    if error is None:
        return False
    if _TESTS_FAILED.search(error[:_SCANNED]) is not None:
        return True
    # the runners sum up at the end, after tracebacks and captured output of any length
    return len(error) > _SCANNED and _TESTS_FAILED.search(error[-_SCANNED:]) is not None
