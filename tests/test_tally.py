"""Per-tool counters: bumped from any thread, read as one frozen value."""

from __future__ import annotations

import threading

import attrs
import pytest

from scarguard.guard.tally import Tally, ToolStats


def test_a_new_tally_counts_nothing() -> None:
    """A fresh tally's snapshot is all zeros."""
    assert Tally().snapshot() == ToolStats()


def test_bumps_show_in_the_snapshot_and_failures_add_up() -> None:
    """Each bump adds to its counter; ``failures`` is the sum of the three blames."""
    tally = Tally()
    tally.bump("calls", 3)
    tally.bump("agent_failures")
    tally.bump("harness_failures", 2)
    tally.bump("unknown_failures")
    stats = tally.snapshot()
    assert stats.calls == 3
    assert stats.failures == 4


def test_a_snapshot_is_frozen_and_does_not_follow_later_bumps() -> None:
    """A snapshot is a value: it cannot be changed and later bumps do not reach it."""
    tally = Tally()
    before = tally.snapshot()
    tally.bump("blocked")
    assert before.blocked == 0
    assert tally.snapshot().blocked == 1
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        before.blocked = 5  # type: ignore[misc]


def test_an_unknown_counter_is_refused() -> None:
    """Bumping a counter ToolStats does not have raises instead of adding a field."""
    with pytest.raises(KeyError):
        Tally().bump("no_such_counter")


def test_threads_lose_no_bumps() -> None:
    """Eight threads bumping at once lose none of their counts."""
    tally = Tally()

    def work() -> None:
        for _ in range(2000):
            tally.bump("calls")

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert tally.snapshot().calls == 16_000
