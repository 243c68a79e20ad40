"""``forget()`` resets the evidence behind a ban: the same failures afterwards count afresh.

A ban lifted by hand must come back exactly as it first came: after the operator's
``forget``, two identical failures ban the call again, with the reason they give, not as a
call whose result "varies" (it never succeeded).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scarguard import FailureMemory
from scarguard.testing import FakeClock

ARGS = {"target": "prod"}


@pytest.mark.parametrize("name", ["memory.db", "memory.json", ":memory:"])
def test_a_forgotten_ban_comes_back_as_it_first_came(tmp_path: Path, name: str) -> None:
    where = name if name == ":memory:" else tmp_path / name
    memory = FailureMemory(where, clock=FakeClock())
    try:
        for round_ in range(3):
            for _ in range(2):
                memory.record("deploy", ARGS, error="permission denied")
            decision = memory.check("deploy", ARGS)
            assert not decision.allowed, f"round {round_}: {decision.message}"
            assert "varies" not in decision.message
            assert len(memory.forget(tool="deploy")) == 1
            assert memory.check("deploy", ARGS).allowed
    finally:
        memory.close()


def test_a_call_that_did_succeed_in_between_still_reads_as_varying(tmp_path: Path) -> None:
    """Only ``forget`` resets the per-state counts: a real success in between still makes
    the call one whose result varies (refused only from 4 in a row)."""
    memory = FailureMemory(":memory:", root=tmp_path, clock=FakeClock())
    flaky = {"command": "pytest test_flaky.py"}
    error = "FAILED test_flaky.py::test_x - assert 0\n1 failed in 0.01s"
    for _ in range(2):
        memory.record("bash", flaky, error=error)
    memory.record("bash", flaky, ok=True, result="1 passed")
    for _ in range(2):
        memory.record("bash", flaky, error=error)
    decision = memory.check("bash", flaky)
    assert decision.allowed and "varies" in decision.message
