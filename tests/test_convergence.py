"""Convergence of one session: progressing, plateau, stuck, exhausted, looping."""

from __future__ import annotations

from helpers.engine import fail
from scarguard import FailureMemory
from scarguard._results import ConvergenceStatus
from scarguard.learning.convergence import Event, SessionTracker
from scarguard.policy import Policy
from scarguard.testing import FakeClock, memory_for_tests


def test_successes_keep_a_session_progressing() -> None:
    """However many calls succeed, the session is never done on that account."""
    tracker = SessionTracker(Policy())
    for _ in range(50):
        tracker.note(Event.OK, "file_read")
    result = tracker.convergence()
    assert result.status is ConvergenceStatus.PROGRESSING
    assert not result.done
    assert (result.attempts, result.failures, result.blocked) == (50, 0, 0)


def test_a_run_of_failures_as_long_as_the_window_is_stuck() -> None:
    """The last ``stuck_window`` calls all failing or refused make the session stuck."""
    policy = Policy(stuck_window=3)
    tracker = SessionTracker(policy)
    tracker.note(Event.FAILED, "shell")
    tracker.note(Event.FAILED, "shell")
    tracker.note(Event.OK, "file_read")
    tracker.note(Event.FAILED, "shell")
    tracker.note(Event.FAILED, "shell")
    assert tracker.convergence().status is ConvergenceStatus.PROGRESSING
    tracker.note(Event.BLOCKED, "file_edit")
    tracker.note(Event.OK, "file_read")
    assert tracker.convergence().status is ConvergenceStatus.PROGRESSING
    for _ in range(3):
        tracker.note(Event.FAILED, "shell")
    result = tracker.convergence()
    assert result.status is ConvergenceStatus.STUCK
    assert result.done
    assert "3" in result.reason


def test_refusals_count_apart_from_attempts() -> None:
    """A refused call is counted as blocked, not as an attempt."""
    tracker = SessionTracker(Policy())
    tracker.note(Event.FAILED, "shell")
    tracker.note(Event.BLOCKED, "shell")
    result = tracker.convergence()
    assert (result.attempts, result.failures, result.blocked) == (1, 1, 1)


def test_every_class_refused_last_is_exhausted_until_one_runs() -> None:
    """Exhausted while each class's latest call was refused; one allowed call ends it."""
    tracker = SessionTracker(Policy(stuck_window=100))
    tracker.note(Event.BLOCKED, "file_edit")
    tracker.note(Event.OK, "shell")
    assert tracker.convergence().status is ConvergenceStatus.PROGRESSING
    tracker.note(Event.BLOCKED, "shell")
    assert tracker.convergence().status is ConvergenceStatus.EXHAUSTED
    tracker.note(Event.OK, "file_edit")
    assert tracker.convergence().status is ConvergenceStatus.PROGRESSING


def test_plateau_follows_the_direction_and_tolerance() -> None:
    """Only an improvement beyond the tolerance, in the policy's direction, resets the window."""
    tracker = SessionTracker(Policy(plateau_window=2, plateau_tolerance=0.01, direction="minimize"))
    tracker.note(Event.OK, "train", score=1.0)
    tracker.note(Event.OK, "train", score=1.5)  # worse when minimising
    tracker.note(Event.OK, "train", score=0.995)  # better, but within the tolerance
    result = tracker.convergence()
    assert result.status is ConvergenceStatus.PLATEAU
    assert result.best_score == 1.0
    assert result.since_improvement == 2
    tracker.note(Event.OK, "train", score=0.5)
    result = tracker.convergence()
    assert result.status is ConvergenceStatus.PROGRESSING
    assert result.best_score == 0.5


def test_a_loop_reason_is_reported_and_cleared_by_the_next_call() -> None:
    """A no-progress repeat is ``looping`` with its reason until another call is noted."""
    tracker = SessionTracker(Policy())
    tracker.note(Event.OK, "file_read")
    tracker.loop_reason = "the same result three times"
    result = tracker.convergence()
    assert result.status is ConvergenceStatus.LOOPING
    assert result.reason == "the same result three times"
    tracker.note(Event.OK, "file_read")
    assert tracker.convergence().status is ConvergenceStatus.PROGRESSING


# -- through a memory -----------------------------------------------------------------------


def test_successes_never_make_the_loop_done(memory: FailureMemory) -> None:
    """Twenty successful calls in a row are progress, not convergence."""
    for i in range(20):
        memory.record("read_file", {"path": f"f{i}.py"}, ok=True)
    assert not memory.is_done()
    assert memory.convergence().status == "progressing"


def test_stuck_when_recent_calls_all_fail(memory: FailureMemory) -> None:
    """Eight calls in a row that failed or were refused make the loop stuck."""
    for i in range(8):
        fail(memory, "bash", {"command": f"cmd {i}"}, "exit code 1")
    assert memory.convergence().status == "stuck"
    assert memory.is_done()


def test_scored_plateau_respects_direction_and_tolerance(clock: FakeClock) -> None:
    """A maximised score that stops improving beyond the tolerance reaches a plateau."""
    memory = memory_for_tests(
        clock=clock, policy=Policy(direction="maximize", plateau_window=3, plateau_tolerance=0.01)
    )
    for score in (0.5, 0.6, 0.605, 0.6, 0.609):
        memory.record("train", {"lr": score}, ok=True, score=score)
    assert memory.convergence().status == "plateau"
    assert memory.convergence().best_score == 0.6
