"""The test doubles users get: a fake clock and a throw-away memory on it."""

from __future__ import annotations

from scarguard.testing import FakeClock, memory_for_tests


def test_the_fake_clock_moves_only_when_told() -> None:
    """The time stays put until ``advance``, which adds seconds, minutes, hours and days."""
    clock = FakeClock(start=1000.0)
    assert clock() == clock() == 1000.0
    assert clock.advance(5) == 1005.0
    assert clock.advance(minutes=1, hours=1, days=1) == 1005.0 + 60 + 3600 + 86400
    assert clock() == clock.now


def test_a_test_memory_is_in_memory_on_its_own_fake_clock() -> None:
    """Each memory for tests starts empty, on a fake clock of its own unless given one."""
    first, second = memory_for_tests(), memory_for_tests()
    assert isinstance(first.clock, FakeClock)
    assert first.clock is not second.clock
    first.record("edit_file", {"path": "a.py", "old": "x"}, error="old_string not found")
    assert second.recent_failures() == []
    clock = FakeClock()
    assert memory_for_tests(clock=clock, project="web").clock is clock


def test_rules_of_a_test_memory_expire_with_its_clock() -> None:
    """The example of the module: refused now, allowed again once the clock passes the TTL."""
    clock = FakeClock()
    memory = memory_for_tests(clock=clock)
    memory.record("edit_file", {"path": "a.py", "old": "x"}, error="old_string not found")
    assert not memory.check("edit_file", {"path": "a.py", "old": "x"}).allowed
    clock.advance(days=8)
    assert memory.check("edit_file", {"path": "a.py", "old": "x"}).allowed
