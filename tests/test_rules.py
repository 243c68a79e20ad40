"""What a failure teaches: the learning ladder of DESIGN.md, each rung against a fake clock."""

from __future__ import annotations

import pytest

from helpers.engine import EDIT, MAKE_FAILED, fail
from scarguard import Blame, ConstraintKind, FailureMemory, Policy
from scarguard.testing import FakeClock, memory_for_tests

# -- rule 1: blame first --------------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    ["429 Too Many Requests", "Read timed out. (read timeout=30)", "503 Service Unavailable"],
)
def test_harness_failures_seed_nothing(memory: FailureMemory, error: str) -> None:
    """Ten rate limits, timeouts or 5xx answers teach nothing; the call stays allowed."""
    args = {"url": "https://api.example.com/v1/items"}
    for _ in range(10):
        result = fail(memory, "http_get", args, error)
        assert result.blame is Blame.HARNESS
        assert result.new_constraints == ()
    assert memory.constraints() == []
    assert memory.check("http_get", args).allowed


def test_unknown_blame_seeds_only_exact_call_bans(memory: FailureMemory) -> None:
    """An unrecognised error bans only the identical call, after corroboration."""
    for path in ("a.txt", "b.txt", "c.txt", "d.txt"):
        for _ in range(2):
            fail(memory, "frobnicate", {"path": path}, "Flux capacitor misaligned at 0x7fa3")
    kinds = {c.kind for c in memory.constraints()}
    assert kinds == {ConstraintKind.EXACT_CALL}
    assert memory.check("frobnicate", {"path": "e.txt"}).allowed


def test_unrecognised_error_groups_across_numbers(memory: FailureMemory) -> None:
    """The same unknown error with different ids still groups into one pattern."""
    for n in range(3):
        fail(
            memory,
            "frobnicate",
            {"n": n},
            f"Flux capacitor misaligned at 0x7fa{n} (pid {4000 + n})",
        )
    patterns = memory.patterns()
    assert len(patterns) == 1
    assert patterns[0].count == 3
    assert patterns[0].signature.startswith("error:")


# -- rule 2, first rung: the exact call -----------------------------------------------------


def test_identical_failing_command_is_refused_after_two_failures(memory: FailureMemory) -> None:
    """A command that failed twice identically is refused; once is not enough (tests flake)."""
    args = {"command": "make build"}
    fail(memory, "bash", args, MAKE_FAILED)
    assert memory.check("bash", args).allowed
    fail(memory, "bash", args, MAKE_FAILED)
    decision = memory.check("bash", args)
    assert not decision.allowed
    assert decision.violations[0].kind is ConstraintKind.EXACT_CALL
    assert "bash" in decision.message
    assert "command failed" in decision.message.lower()
    assert "Hint:" in decision.message


@pytest.mark.parametrize(
    ("tool", "args", "error"),
    [
        ("edit_file", EDIT, "Error: old_string not found in file app.py"),
        (
            "read_file",
            {"path": "missing.py"},
            "FileNotFoundError: [Errno 2] No such file or directory: 'missing.py'",
        ),
        ("python", {"code": "print(1"}, "SyntaxError: '(' was never closed"),
        ("create_file", {"path": "a.txt", "content": "x"}, "409 Conflict: file already exists"),
    ],
)
def test_deterministic_failure_refuses_identical_call_after_one(
    memory: FailureMemory, tool: str, args: dict[str, object], error: str
) -> None:
    """Kinds that fail identically for identical input are refused after a single failure."""
    fail(memory, tool, args, error)
    decision = memory.check(tool, args)
    assert not decision.allowed
    assert tool in decision.message


def test_different_call_on_same_tool_still_runs(memory: FailureMemory) -> None:
    """Refusing one edit leaves other edits of the same tool allowed."""
    fail(memory, "edit_file", EDIT, "old_string not found in file")
    other = {**EDIT, "old_string": "def other("}
    assert memory.check("edit_file", other).allowed


# -- rule 2, second rung: the target fact -------------------------------------------------


def test_missing_target_refuses_other_calls_that_need_it(memory: FailureMemory) -> None:
    """A path that does not exist refuses reads and edits of it, not its creation."""
    fail(
        memory,
        "read_file",
        {"path": "ghost.py"},
        "ENOENT: no such file or directory, open 'ghost.py'",
    )
    assert not memory.check(
        "edit_file", {"path": "ghost.py", "old_string": "a", "new_string": "b"}
    ).allowed
    assert not memory.check("read_file", {"path": "ghost.py", "offset": 10}).allowed
    assert memory.check("create_file", {"path": "ghost.py", "content": "x"}).allowed
    assert memory.check("read_file", {"path": "real.py"}).allowed


# -- rule 5: legitimate repeats are not loops -----------------------------------------------


def test_paginated_reads_are_never_blocked(memory: FailureMemory) -> None:
    """Reading one file page by page (different offsets) always runs."""
    for offset in range(0, 5000, 100):
        args = {"path": "big.log", "offset": offset, "limit": 100}
        assert memory.check("read_file", args).allowed
        memory.record("read_file", args, ok=True)
    assert memory.constraints() == []


def test_failed_page_refuses_only_that_offset(memory: FailureMemory) -> None:
    """An offset past the end refuses that offset, not the next page of another read."""
    past_end = {"path": "big.log", "offset": 9000}
    for _ in range(2):
        fail(memory, "read_file", past_end, "offset 9000 is beyond end of file (8123 lines)")
    assert not memory.check("read_file", past_end).allowed
    assert memory.check("read_file", {"path": "big.log", "offset": 8000}).allowed


def test_identical_failures_100ms_apart_all_count_and_are_stored(memory: FailureMemory) -> None:
    """Three identical failures 100 ms apart: refused at the third, and all three stored."""
    clock = memory.clock
    assert isinstance(clock, FakeClock)
    args = {"command": "pytest -q"}
    for n in range(3):
        assert memory.check("bash", args).allowed == (n < 2)
        memory.record("bash", args, error="exit code 1")
        clock.advance(0.1)
    assert not memory.check("bash", args).allowed
    assert len(memory.recent_failures()) == 3


def test_identical_deterministic_failures_100ms_apart_refused_at_the_second(
    memory: FailureMemory,
) -> None:
    """A deterministic kind repeated 100 ms later is refused at the second call; both stored."""
    clock = memory.clock
    assert isinstance(clock, FakeClock)
    memory.record("edit_file", EDIT, error="old_string not found in file")
    clock.advance(0.1)
    assert not memory.check("edit_file", EDIT).allowed
    memory.record("edit_file", EDIT, error="old_string not found in file")
    assert len(memory.recent_failures()) == 2


def test_guard_retries_are_stored_but_count_once(memory: FailureMemory) -> None:
    """The guard's own retries of one call are stored and count as one decision."""
    args = {"url": "https://api.example.com/v1/items"}
    memory.record("http_get", args, error="HTTP 503 Service Unavailable")
    memory.record("http_get", args, error="HTTP 503 Service Unavailable", retry=True)
    memory.record("http_get", args, error="HTTP 503 Service Unavailable", retry=True)
    assert len(memory.recent_failures()) == 3
    assert memory.stats().failures == 1
    assert memory.convergence().failures == 1


def test_retry_of_an_unknown_failure_teaches_nothing_more(memory: FailureMemory) -> None:
    """A retry flagged by the guard does not corroborate the call it retries."""
    args = {"command": "./deploy.sh"}
    memory.record("bash", args, error="frobnicator jammed")
    memory.record("bash", args, error="frobnicator jammed", retry=True)
    assert memory.check("bash", args).allowed
    memory.record("bash", args, error="frobnicator jammed")
    assert not memory.check("bash", args).allowed


# -- rule 8: TTL ----------------------------------------------------------------------------


def test_rules_expire_with_the_clock_not_within_a_day(
    memory: FailureMemory, clock: FakeClock
) -> None:
    """An exact-call ban holds for days (across sessions) and lapses after its TTL."""
    fail(memory, "edit_file", EDIT, "old_string not found")
    clock.advance(days=1)
    assert not memory.check("edit_file", EDIT).allowed
    clock.advance(days=7)
    assert memory.check("edit_file", EDIT).allowed
    assert memory.constraints() == []


def test_ttl_is_configurable_per_kind(clock: FakeClock) -> None:
    """A per-kind TTL override applies to rules of that kind."""
    memory = memory_for_tests(clock=clock, policy=Policy(ttl={"exact_call": 60}))
    fail(memory, "edit_file", EDIT, "old_string not found")
    clock.advance(59)
    assert not memory.check("edit_file", EDIT).allowed
    clock.advance(2)
    assert memory.check("edit_file", EDIT).allowed


# -- rule 10: cap on active constraints -----------------------------------------------------


def test_cap_evicts_oldest_and_keeps_learning(clock: FakeClock) -> None:
    """Past the cap the oldest rules go; new failures still teach."""
    memory = memory_for_tests(clock=clock, policy=Policy(max_active_constraints=10))
    for i in range(15):
        fail(memory, "edit_file", {"path": "a.py", "old_string": f"s{i}"}, "old_string not found")
    active = memory.constraints(kind=ConstraintKind.EXACT_CALL)
    assert len(active) <= 10
    assert not memory.check("edit_file", {"path": "a.py", "old_string": "s14"}).allowed
    assert memory.check("edit_file", {"path": "a.py", "old_string": "s0"}).allowed
