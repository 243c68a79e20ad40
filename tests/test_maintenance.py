"""Maintenance of a memory: forgetting by hand, snapshots and their restore."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers.engine import EDIT, MAKE_FAILED, fail
from scarguard import ConfigurationError, FailureMemory
from scarguard.stores.protocol import Store
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


SYNTAX = 'syntax error at or near "selec"'
QUERY = {"q": "selec 1"}


def _banned_and_checked(memory: FailureMemory) -> None:
    """Ban ``run_query(QUERY)`` and check it once (the check loads the memory's index)."""
    for _ in range(2):
        memory.record("run_query", QUERY, error=SYNTAX)
    assert not memory.check("run_query", QUERY).allowed


@pytest.mark.parametrize("kind", ["memory", "sqlite", "json"])
def test_a_success_after_forget_lifts_nothing(
    kind: str, store_factory: Callable[..., Store]
) -> None:
    """A success recorded right after ``forget()`` does not report lifting the forgotten rule.

    The success decides what it lifts from the memory's index, with no check in between:
    ``forget()`` keeps that index current.
    """
    memory = FailureMemory(store_factory(kind), clock=FakeClock())
    _banned_and_checked(memory)
    (forgotten,) = memory.forget(tool="run_query")
    done = memory.record("run_query", QUERY, ok=True)
    assert done.lifted == ()
    assert memory.constraints() == []
    assert memory.check("run_query", QUERY).allowed
    assert forgotten.key.startswith("exact:")


def test_a_success_after_clear_lifts_nothing(memory: FailureMemory) -> None:
    """After ``clear()``, a success reports lifting nothing: the rules went with the records."""
    _banned_and_checked(memory)
    memory.clear()
    assert memory.record("run_query", QUERY, ok=True).lifted == ()
    assert memory.check("run_query", QUERY).allowed


def test_a_success_lifts_only_what_the_store_still_held(tmp_path: Path) -> None:
    """Another memory forgot the rule meanwhile: the success reports lifting nothing.

    Its index still holds the rule (no check ran since), but the store no longer does:
    what a success reports lifted is what it removed.
    """
    path = tmp_path / "shared.db"
    with FailureMemory(path) as mine, FailureMemory(path) as other:
        _banned_and_checked(mine)
        assert [c.tool for c in other.forget(tool="run_query")] == ["run_query"]
        assert mine.record("run_query", QUERY, ok=True).lifted == ()
        assert mine.check("run_query", QUERY).allowed
