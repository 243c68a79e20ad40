"""No-progress loops: the identical call returning the identical result, nothing changed."""

from __future__ import annotations

import pytest

from scarguard import FailureMemory, Policy
from scarguard.errors import ConfigurationError
from scarguard.learning.progress import NO_RESULT, ProgressTracker, may_change, result_digest
from scarguard.model import ConstraintKind, Level
from scarguard.testing import FakeClock

READ = ("read_file", {"path": "notes.md"})


def _memory(**policy: object) -> tuple[FailureMemory, FakeClock]:
    clock = FakeClock()
    return FailureMemory(":memory:", clock=clock, policy=Policy(**policy)), clock


def _read(memory: FailureMemory, clock: FakeClock, result: object = "same text") -> None:
    clock.advance(5)
    memory.record(*READ, result=result)


def test_third_identical_result_reports_looping_and_the_next_call_is_warned() -> None:
    """The third identical result makes convergence 'looping'; the next identical call
    is allowed with a no-progress warning naming the count and the start time."""
    memory, clock = _memory()
    _read(memory, clock)
    _read(memory, clock)
    assert memory.convergence().status == "progressing"
    assert not memory.check(*READ).warnings
    _read(memory, clock)
    convergence = memory.convergence()
    assert convergence.status == "looping" and convergence.done and memory.is_done()
    assert "returned the same result 3 times since 00:00:05 UTC; nothing has changed" in (
        convergence.reason
    )
    decision = memory.check(*READ)
    assert decision.allowed
    [warning] = decision.warnings
    assert warning.kind is ConstraintKind.NO_PROGRESS and warning.constraint.level is Level.WARN
    assert "returned the same result 3 times since 00:00:05 UTC" in decision.message


def test_the_warning_counts_on_with_every_further_repeat() -> None:
    """Each further identical result raises the count the warning states."""
    memory, clock = _memory()
    for _ in range(5):
        _read(memory, clock)
    assert "5 times" in memory.check(*READ).message


def test_pagination_never_counts() -> None:
    """Calls that differ in other arguments (offsets) are other calls, even with equal pages."""
    memory, clock = _memory()
    for offset in range(0, 1000, 100):
        clock.advance(5)
        memory.record("read_file", {"path": "log.txt", "offset": offset}, result="")
    assert memory.convergence().status == "progressing"
    assert not memory.check("read_file", {"path": "log.txt", "offset": 900}).warnings


def test_a_changed_result_resets_the_count() -> None:
    """A different result starts the count again from one."""
    memory, clock = _memory()
    for result in ("a", "a", "b", "b"):
        _read(memory, clock, result)
    assert memory.convergence().status == "progressing"
    assert not memory.check(*READ).warnings
    _read(memory, clock, "b")
    assert memory.check(*READ).warnings


def test_a_mutating_success_in_between_resets_the_count() -> None:
    """A successful edit may have changed what the call returns: the count starts again."""
    memory, clock = _memory()
    _read(memory, clock)
    _read(memory, clock)
    memory.record("edit_file", {"path": "other.py", "old": "x", "new": "y"})
    _read(memory, clock)
    _read(memory, clock)
    assert memory.convergence().status == "progressing"
    assert not memory.check(*READ).warnings
    _read(memory, clock)
    assert memory.check(*READ).warnings


def test_a_mutating_success_lifts_a_current_loop() -> None:
    """A loop already warned about is forgotten once a mutating call succeeds."""
    memory, clock = _memory()
    for _ in range(4):
        _read(memory, clock)
    assert memory.check(*READ).warnings
    memory.record("run", {"command": "python gen_notes.py"})
    assert not memory.check(*READ).warnings


def test_a_failure_of_the_call_resets_its_count() -> None:
    """The call failing in between is a different outcome: its count starts again."""
    memory, clock = _memory()
    _read(memory, clock)
    _read(memory, clock)
    clock.advance(5)
    memory.record(*READ, error="PermissionError: [Errno 13] Permission denied: 'notes.md'")
    _read(memory, clock)
    assert memory.convergence().status == "progressing"
    assert not memory.check(*READ).warnings


def test_a_success_without_a_result_counts_nothing() -> None:
    """A success recorded without its result cannot be compared, so it ends the run."""
    memory, clock = _memory()
    _read(memory, clock)
    _read(memory, clock)
    clock.advance(5)
    memory.record(*READ)
    _read(memory, clock)
    assert not memory.check(*READ).warnings


def test_polling_is_never_refused_by_default() -> None:
    """Without loop_block, twenty identical statuses warn but are never refused."""
    memory, clock = _memory()
    for _ in range(20):
        clock.advance(5)
        assert memory.check("job_status", {"id": 7}).allowed
        memory.record("job_status", {"id": 7}, result={"state": "pending"})
    assert memory.check("job_status", {"id": 7}).warnings


def test_refusing_a_loop_is_opt_in_with_loop_block() -> None:
    """With loop_block=4 the identical call is refused after its fourth identical result,
    without an operator's forget line, and runs again after a change."""
    memory, clock = _memory(loop_block=4)
    for _ in range(3):
        _read(memory, clock)
    assert memory.check(*READ).allowed
    _read(memory, clock)
    decision = memory.check(*READ)
    assert not decision.allowed
    assert decision.violations[0].kind is ConstraintKind.NO_PROGRESS
    assert "it keeps returning the same result" in decision.message
    assert "scarguard forget" not in decision.message
    assert memory.check("read_file", {"path": "other.md"}).allowed
    memory.record("write_file", {"path": "notes.md", "content": "new"})
    assert memory.check(*READ).allowed


def test_shadow_mode_lets_a_loop_refusal_run() -> None:
    """With enforce=False a loop refusal is computed but the call is allowed."""
    clock = FakeClock()
    memory = FailureMemory(":memory:", clock=clock, policy=Policy(loop_block=3), enforce=False)
    for _ in range(3):
        _read(memory, clock)
    decision = memory.check(*READ)
    assert decision.allowed and decision.shadow and decision.violations


def test_loops_are_never_stored() -> None:
    """A no-progress warning is not a learned constraint: nothing is written to the store."""
    memory, clock = _memory(loop_block=3)
    for _ in range(5):
        _read(memory, clock)
    assert memory.constraints() == []
    assert memory.store.load_constraints(memory.scope) == []


def test_equal_structured_results_match() -> None:
    """Equal mappings returned by separate calls are the same result."""
    memory, clock = _memory()
    for _ in range(3):
        _read(memory, clock, {"state": "pending", "items": [1, 2]})
    assert memory.check(*READ).warnings


def test_objects_shown_by_address_never_look_alike() -> None:
    """Results whose repr holds a memory address never count as identical (no false loop)."""
    memory, clock = _memory()
    results = [object() for _ in range(4)]  # alive at once: four distinct addresses
    for result in results:
        _read(memory, clock, result)
    assert not memory.check(*READ).warnings


@pytest.mark.parametrize(
    ("one", "other"),
    [("text", "text!"), ("1", 1), (b"x", "x"), ({"a": 1}, {"a": 2}), (None, "")],
)
def test_result_digest_tells_different_results_apart(one: object, other: object) -> None:
    """Different results (also of different types) have different digests."""
    assert result_digest(one) != result_digest(other)
    assert result_digest(one) == result_digest(one)


def test_result_digest_of_a_huge_text_covers_all_of_it() -> None:
    """Two megabyte texts differing only in their last character have different digests."""
    head = "x" * 1_000_000
    assert result_digest(head + "a") != result_digest(head + "b")


def test_result_digest_of_an_unreadable_object_is_none() -> None:
    """An object that raises when looked at gets no digest instead of breaking the call."""

    class Hostile:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert result_digest(Hostile()) is None


def test_policy_validates_loop_thresholds() -> None:
    """loop_warn must be >= 1 and loop_block, when set, >= loop_warn."""
    with pytest.raises(ConfigurationError, match="loop_warn"):
        Policy(loop_warn=0)
    with pytest.raises(ConfigurationError, match="loop_block"):
        Policy(loop_warn=3, loop_block=2)
    assert Policy(loop_warn=2, loop_block=2).loop_block == 2


def test_tracker_is_cold_until_a_call_loops_and_after_a_change() -> None:
    """The tracker is 'hot' only while some call is at or over loop_warn, so check() skips
    the lookup on the common path."""
    tracker = ProgressTracker(Policy())
    assert not tracker.hot
    for n in range(1, 4):
        assert tracker.returned("fp", "d", float(n)) == n
    assert tracker.hot
    tracker.returned("fp", "other", 4.0)
    assert not tracker.hot
    for n in range(3):
        tracker.returned("fp", "d", 5.0 + n)
    tracker.changed()
    assert not tracker.hot and tracker.since("fp") is None


def test_tracker_stays_bounded_and_consistent() -> None:
    """Past its capacity the least recently used call is forgotten, hot count included."""
    tracker = ProgressTracker(Policy(loop_warn=2))
    tracker.returned("looping", "d", 0.0)
    tracker.returned("looping", "d", 1.0)
    assert tracker.hot
    for i in range(1100):
        tracker.returned(f"fp{i}", "d", 2.0)
    assert tracker.since("looping") is None
    assert not tracker.hot


def test_no_result_is_not_none() -> None:
    """The default of record(result=) is a sentinel, so a tool returning None still counts."""
    assert NO_RESULT is not None
    memory, clock = _memory()
    for _ in range(3):
        _read(memory, clock, None)
    assert memory.check(*READ).warnings


@pytest.mark.parametrize(
    ("command", "changes"),
    [
        ("cat notes.md", False),
        ("ls -la docs", False),
        ("/usr/bin/grep -n todo app.py", False),
        ("python gen_notes.py", True),
        ("make build", True),
        ("git merge feature", True),
        ("cat a > b", True),
        ("ls; rm -rf build", True),
        ("", True),
    ],
)
def test_shell_commands_other_than_readers_may_change_the_workspace(
    command: str, changes: bool
) -> None:
    """A shell success ends loops unless it only ran a reader (scripts, builds and
    generators change files without naming them)."""
    memory = FailureMemory(":memory:")
    call = memory.describe("run", {"command": command})
    assert may_change(call, memory.adapter_for("run").mutating(call)) is changes


def test_reading_with_a_shell_reader_can_loop_too() -> None:
    """`cat` of the same file returning the same text three times is a loop as well."""
    memory, clock = _memory()
    for _ in range(3):
        clock.advance(5)
        memory.record("bash", {"command": "cat notes.md"}, result="same")
    assert memory.check("bash", {"command": "cat notes.md"}).warnings


class _Reference:
    """The counts of runs as first written: every run in a plain dict, newest last."""

    def __init__(self, warn: int, entries: int) -> None:
        self.warn, self.entries = warn, entries
        self.runs: dict[str, list[object]] = {}  # fingerprint -> [digest, count, tool]

    def returned(self, fingerprint: str, digest: object, tool: str) -> int:
        run = self.runs.pop(fingerprint, None)
        if run is not None and run[0] == digest:
            run[1] = int(run[1]) + 1  # type: ignore[call-overload]
        else:
            run = [digest, 1, tool]
        self.runs[fingerprint] = run
        if len(self.runs) > self.entries:
            del self.runs[next(iter(self.runs))]
        return int(run[1])  # type: ignore[call-overload]

    def hot_tools(self) -> dict[str, int]:
        hot: dict[str, int] = {}
        for _, count, tool in self.runs.values():
            if int(count) >= self.warn:  # type: ignore[call-overload]
                hot[str(tool)] = hot.get(str(tool), 0) + 1
        return hot


@pytest.mark.parametrize("warn", [1, 2, 3])
def test_runs_dropped_when_full_keep_every_count_right(
    warn: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the oldest run dropped at each new call once full, the counts returned, the
    tools with runs and the looping ones are those of every run kept in call order."""
    import random

    from scarguard.learning import progress

    monkeypatch.setattr(progress, "_ENTRIES", 4)
    tracker = ProgressTracker(Policy(loop_warn=warn))
    reference = _Reference(warn, 4)
    rng = random.Random(7)
    for step in range(3000):
        fingerprint = f"fp{rng.randrange(8)}"
        tool = f"t{int(fingerprint[2:]) % 3}"
        digest = rng.randrange(2)
        got = tracker.returned(fingerprint, digest, float(step), tool=tool)
        assert got == reference.returned(fingerprint, digest, tool)
        assert list(tracker._runs) == list(reference.runs)
        tools: dict[str, int] = {}
        for run in reference.runs.values():
            tools[str(run[2])] = tools.get(str(run[2]), 0) + 1
        assert dict(tracker._tools) == tools
        assert dict(tracker._hot_tools) == reference.hot_tools()
        assert tracker._hot == sum(reference.hot_tools().values())
