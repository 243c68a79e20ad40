"""Shell commands' words and files, and test runs: remembered answers are the answers."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from scarguard.adapters._shell import (
    _ERROR_FILE,
    _FILEISH,
    _SPLIT,
    _URLISH,
    REDIRECT,
    SEGMENTS,
    command_files,
    command_words,
    error_files,
)
from scarguard.adapters._test_runs import (
    _PYTEST_FILE,
    _PYTEST_FOLDER,
    _QUIET_OPTIONS,
    _QUIET_PREFIXES,
    _RUNNERS,
    selected_tests,
)

WORDS = (
    "pytest", "python", "-m", "cargo", "test", "npx", "jest", "make", "cd", "src/a.py",
    "tests/", "test_a.py::test_b", "-q", "--tb=short", "-k", "x=1", "$X", "&&", "|", ";",
    ">", "2>&1", "https://x.io/a.js", "a.b", "./run.sh", "cd/", "docs//x.md", "'a b'", "\n",
    "-C", "--cwd", "x" * 201, "Makefile", "a,b", "(c)", "`d`",
)  # fmt: skip
commands = st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join) | st.text(max_size=80)


def words_before(args: dict[str, Any]) -> tuple[str, ...]:
    """``command_words`` as it was before its answers were remembered."""
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
            if len(words) >= 64:
                return tuple(words)
    return tuple(words)


def files_before(args: dict[str, Any]) -> tuple[str, ...]:
    """``command_files`` as it was."""
    files: dict[str, None] = {}
    for value in args.values():
        if not isinstance(value, str):
            continue
        for word in _SPLIT.split(value):
            if (
                not word
                or len(word) > 200
                or word.startswith("-")
                or _URLISH.match(word)
                or not _FILEISH.search(word)
            ):
                continue
            files[word.rstrip("/") or word] = None
            if len(files) >= 16:
                return tuple(files)
    return tuple(files)


def error_files_before(text: str | None) -> tuple[str, ...]:
    """``error_files`` as it was."""
    if not text:
        return ()
    files: dict[str, None] = {}
    for match in _ERROR_FILE.finditer(text[:8192]):
        files[match.group(1)] = None
        if len(files) >= 16:
            break
    return tuple(files)


def selected_before(args: dict[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    """``selected_tests`` as it was."""
    command = next((args[k] for k in ("command", "cmd") if isinstance(args.get(k), str)), None)
    if command is None or SEGMENTS.search(command) or REDIRECT.search(command):
        return None
    words = command.split()
    prefix = next((p for p in _RUNNERS if tuple(words[: len(p)]) == p), None)
    if prefix is None:
        return None
    runner = _RUNNERS[prefix]
    selection: list[str] = []
    for word in words[len(prefix) :]:
        if word in _QUIET_OPTIONS or word.startswith(_QUIET_PREFIXES):
            continue
        if word.startswith("-") or "=" in word or "$" in word:
            return None
        if runner == "pytest" and not (_PYTEST_FILE.match(word) or _PYTEST_FOLDER.match(word)):
            return None
        selection.append(word)
    return runner, tuple(selection)


@given(commands, commands, st.integers())
def test_words_and_files_are_the_same_remembered_or_not(one: str, two: str, n: int) -> None:
    """One string argument (remembered) or several (not): the words and files as before."""
    for args in ({"command": one}, {"command": one, "cwd": two, "n": n}, {"n": n}):
        for _ in range(2):  # the second time, from what was remembered
            assert command_words(args) == words_before(args)
            assert command_files(args) == files_before(args)


def test_words_and_files_of_long_arguments_are_not_remembered_and_still_right() -> None:
    """An argument past the remembered size is judged afresh, capped as before."""
    long = " ".join(f"src/m{i}/f{i}.py" for i in range(400))
    assert len(long) > 1024
    assert command_words({"command": long}) == words_before({"command": long})
    assert command_files({"command": long}) == files_before({"command": long})
    assert len(command_files({"command": long})) == 16


@given(st.text(max_size=200) | commands, st.integers(min_value=0, max_value=9000))
def test_error_files_are_the_same_remembered_or_not(text: str, pad: int) -> None:
    """Error texts short (remembered) and long (not) name the same files as before."""
    for error in (text, "x" * pad + " " + text + ' File "a.py", line 1', None, ""):
        assert error_files(error) == error_files_before(error)
        assert error_files(error) == error_files_before(error)


@given(commands)
def test_a_test_run_is_judged_as_before(command: str) -> None:
    """Remembered or not, a command selects the tests it did (or is no test run)."""
    for args in ({"command": command}, {"cmd": command}, {"command": command + " " * 1100}):
        expected = selected_before(args)
        assert selected_tests(args) == expected
        assert selected_tests(args) == expected
    assert selected_tests({"command": 3}) is None
