"""Test doubles for your own agent tests: a fake clock and a throw-away memory.

Example::

    from scarguard.testing import FakeClock, memory_for_tests

    def test_my_agent_stops_repeating():
        clock = FakeClock()
        memory = memory_for_tests(clock=clock)
        memory.record("edit_file", {"path": "a.py", "old": "x"}, error="old_string not found")
        assert not memory.check("edit_file", {"path": "a.py", "old": "x"}).allowed
        clock.advance(days=8)                  # rules expire without sleeping
        assert memory.check("edit_file", {"path": "a.py", "old": "x"}).allowed
"""

from __future__ import annotations

from typing import Any

from scarguard.memory import FailureMemory

__all__ = ["FakeClock", "memory_for_tests"]


class FakeClock:
    """A clock that moves only when told to.

    Args:
        start: The time to start at, in seconds since the epoch.
    """

    def __init__(self, start: float = 1_767_225_600.0) -> None:
        self.now = float(start)

    def __call__(self) -> float:
        """Return the current fake time."""
        return self.now

    def advance(
        self, seconds: float = 0.0, *, minutes: float = 0.0, hours: float = 0.0, days: float = 0.0
    ) -> float:
        """Move the clock forward and return the new time."""
        self.now += seconds + 60 * minutes + 3600 * hours + 86400 * days
        return self.now


def memory_for_tests(**options: Any) -> FailureMemory:
    """Return an in-memory :class:`FailureMemory` driven by a :class:`FakeClock`.

    Args:
        **options: Passed to :class:`FailureMemory` (``clock`` defaults to a new FakeClock).
    """
    options.setdefault("clock", FakeClock())
    return FailureMemory(":memory:", **options)
