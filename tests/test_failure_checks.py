"""Failure checks: predicates that tell a failed result, and how a failed result is described."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from scarguard.errors import ToolBlocked
from scarguard.guard.decorator import guarded_tool
from scarguard.guard.failure_checks import MAX_RESULT_TEXT, describe_failure, failure_when
from scarguard.memory import FailureMemory
from scarguard.naming.classify import error_parts
from scarguard.testing import FakeClock


def test_completed_process_with_failure_when(memory: FailureMemory, clock: FakeClock) -> None:
    """A returned CompletedProcess with returncode 2 counts as a failure and is refused later."""
    runs: list[str] = []

    @guarded_tool(memory, failure_when=failure_when.nonzero_returncode)
    def build(target: str) -> subprocess.CompletedProcess[str]:
        runs.append(target)
        return subprocess.CompletedProcess(["make", target], 2, "", "error: no rule")

    first = build("all")
    clock.advance(10)
    build(target="all")
    clock.advance(10)
    with pytest.raises(ToolBlocked):
        build("all")
    assert first.returncode == 2  # the result itself still reached the caller
    assert len(runs) == 2
    assert memory.recent_failures()[0].signature == "command_failed"


@pytest.mark.parametrize(
    ("predicate", "result", "failed"),
    [
        (failure_when.error_key, {"error": "boom"}, True),
        (failure_when.error_key, {"error": None, "data": 1}, False),
        (failure_when.error_prefix, "Error: file missing", True),
        (failure_when.error_prefix, "error: x", True),
        (failure_when.error_prefix, "Errors fixed: 0", False),
        (failure_when.nonzero_returncode, {"returncode": 1}, True),
        (failure_when.nonzero_returncode, {"returncode": 0}, False),
        (failure_when.any_of(failure_when.error_key, failure_when.error_prefix), "ERROR x", True),
    ],
)
def test_failure_when_helpers(predicate: Any, result: Any, failed: bool) -> None:
    """The shipped predicates flag the failure shapes they name and nothing else."""
    assert predicate(result) is failed


# -- describing a failed result ---------------------------------------------------------------


def test_a_process_result_reads_like_the_raised_error() -> None:
    """A failed process result classifies as CalledProcessError does, its stderr after."""
    result = subprocess.CompletedProcess(["make", "all"], 2, "", b"make: *** no rule")
    text = describe_failure(result)
    assert text == "Command ['make', 'all'] returned non-zero exit status 2.\nmake: *** no rule"
    memory = FailureMemory(":memory:", clock=FakeClock())
    raised = subprocess.CalledProcessError(2, ["make", "all"])
    assert memory.classify(text).signature == memory.classify(raised).signature


def test_a_raised_process_error_reads_its_captured_output() -> None:
    """``check=True`` with captured output: its stderr (else its stdout, where pytest reports)
    names the failure, redacted when stored.

    Without it the error is only "returned non-zero exit status 2", a command failure of
    unknown blame, where the stderr says a make target is missing.
    """
    memory = FailureMemory(":memory:", clock=FakeClock())
    stderr = b"make: *** No rule to make target 'deploy'.  Stop.\ntoken ghp_" + b"a" * 36
    raised = subprocess.CalledProcessError(2, ["make", "deploy"], stderr=stderr)
    assert memory.classify(raised).signature.name == "make_target_missing"
    plain = subprocess.CalledProcessError(2, ["make", "deploy"])
    assert memory.classify(plain).signature.name == "command_failed"
    text = memory.record("run", {"command": "make deploy"}, error=raised).failure.error or ""
    assert text.startswith("CalledProcessError: Command '['make', 'deploy']' returned non-zero")
    assert "No rule to make target 'deploy'" in text
    assert "ghp_" + "a" * 36 not in text
    pytest_run = subprocess.CalledProcessError(
        1, "pytest -q", output="F\nFAILED tests/test_a.py::test_x - assert 2 == 3\n", stderr=""
    )
    assert error_parts(pytest_run)[0].endswith("FAILED tests/test_a.py::test_x - assert 2 == 3\n")
    long = subprocess.CalledProcessError(1, "x", stderr="e" * (MAX_RESULT_TEXT * 3) + "END")
    assert memory.classify(long).signature.name == "command_failed"
    assert error_parts(long)[0].endswith("e" * (MAX_RESULT_TEXT - 3) + "END")  # its tail
    assert len(error_parts(long)[0]) < MAX_RESULT_TEXT + 100


def test_a_mapping_gives_its_error_and_anything_else_its_text() -> None:
    """A mapping's ``error`` entry is its description; other results their ``str()``."""
    assert describe_failure({"error": "quota exceeded", "data": 1}) == "quota exceeded"
    assert describe_failure({"returncode": 3, "args": "x"}).endswith("non-zero exit status 3.")
    assert describe_failure("Error: nope") == "Error: nope"


def test_descriptions_are_bounded() -> None:
    """However long the result, its description is at most MAX_RESULT_TEXT characters."""
    assert len(describe_failure("x" * (MAX_RESULT_TEXT * 3))) == MAX_RESULT_TEXT
    long_stderr = subprocess.CompletedProcess("cmd", 1, "", "e" * (MAX_RESULT_TEXT * 3))
    assert len(describe_failure(long_stderr)) == MAX_RESULT_TEXT


def test_a_result_that_cannot_describe_itself_is_named_by_its_type() -> None:
    """A result whose ``str()`` raises is described by its type, without raising."""

    class Mute:
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert describe_failure(Mute()) == "<Mute result>"


def test_failure_when_is_a_namespace() -> None:
    """failure_when cannot be instantiated: its predicates are used as they are."""
    with pytest.raises(TypeError, match="namespace"):
        failure_when()
