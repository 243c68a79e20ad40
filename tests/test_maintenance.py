"""Maintenance of a memory: forgetting by hand, snapshots and their restore."""

from __future__ import annotations

import json

import pytest

from helpers.engine import EDIT, MAKE_FAILED, fail
from scarguard import ConfigurationError, FailureMemory
from scarguard.testing import FakeClock, memory_for_tests


def test_forget_lifts_by_id_and_resets_evidence(memory: FailureMemory) -> None:
    """forget() lifts a constraint by id; one more failure does not bring it straight back."""
    args = {"command": "make build"}
    fail(memory, "bash", args, MAKE_FAILED)
    fail(memory, "bash", args, MAKE_FAILED)
    (rule,) = memory.constraints()
    assert [c.id for c in memory.forget(rule.id)] == [rule.id]
    assert memory.check("bash", args).allowed
    fail(memory, "bash", args, MAKE_FAILED)
    assert memory.check("bash", args).allowed


def test_after_forget_the_same_failures_ban_again_as_from_scratch(memory: FailureMemory) -> None:
    """forget() starts the call over: two failures ban it again, with no flakiness claim.

    The failures counted in one observed state survive a success (they tell a flaky call),
    but not a lift by hand: the old count must not read as "it also succeeded".
    """
    args = {"target": "prod"}
    for _ in range(2):
        memory.record("deploy", args, error="permission denied")
    assert not memory.check("deploy", args).allowed
    memory.forget(tool="deploy")
    for _ in range(2):
        memory.record("deploy", args, error="permission denied")
    decision = memory.check("deploy", args)
    assert not decision.allowed
    assert "varies" not in decision.message


def test_forget_needs_a_selector(memory: FailureMemory) -> None:
    """forget() with nothing named refuses instead of wiping everything."""
    with pytest.raises(ConfigurationError, match="forget"):
        memory.forget()


def test_snapshot_restore_round_trip(memory: FailureMemory, clock: FakeClock) -> None:
    """A snapshot restored into a fresh memory refuses the same calls."""
    fail(memory, "edit_file", EDIT, "old_string not found")
    snap = json.loads(json.dumps(memory.snapshot()))
    other = memory_for_tests(clock=clock)
    other.restore(snap)
    assert not other.check("edit_file", EDIT).allowed
    with pytest.raises(ConfigurationError):
        other.restore({"nope": 1})
