"""The framework driver: one framework tool call through ``memory.attempt``, and its options."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from scarguard.errors import ConfigurationError, ScarguardWarning, ToolBlocked
from scarguard.integrations._driver import (
    CallPlan,
    GuardSettings,
    error_text,
    raise_blocked,
    run_async,
    run_sync,
)
from scarguard.memory import FailureMemory
from scarguard.testing import FakeClock, memory_for_tests

ARGS = {"command": "make deploy"}


class Interrupt(Exception):
    """A framework's control-flow exception (an interrupt, a deferral)."""


@pytest.fixture
def memory() -> FailureMemory:
    return memory_for_tests(clock=FakeClock())


@pytest.fixture
def settings(memory: FailureMemory) -> GuardSettings:
    return GuardSettings.build(memory)


def refuse(decision: Any) -> str:
    return f"REFUSED: {decision.message}"


PLAN = CallPlan(
    refuse=refuse,
    failure_in=lambda result: result["error"] if isinstance(result, dict) else None,
    passthrough=(Interrupt,),
)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"memory": object()}, "FailureMemory"),
        ({"targets": 3}, "targets"),
        ({"targets": ["path", 2]}, "targets"),
        ({"handle_errors": "yes"}, "handle_errors"),
    ],
)
def test_bad_settings_are_configuration_errors(
    memory: FailureMemory, options: dict[str, Any], named: str
) -> None:
    """A non-memory, targets that are not names or a callable, a non-bool switch: refused."""
    options = {"memory": memory, **options}
    with pytest.raises(ConfigurationError, match=named):
        GuardSettings.build(options.pop("memory"), **options)


def test_targets_by_name_collect_strings_and_sequences(memory: FailureMemory) -> None:
    """One name or several; list values give each item; a missing argument gives nothing."""
    assert GuardSettings.build(memory, targets="path").targets == ("path",)
    settings = GuardSettings.build(memory, targets=["path", "paths", "other"])
    assert settings.targets_of({"path": "a.py", "paths": ["b.py", "c.py"]}) == (
        "a.py",
        "b.py",
        "c.py",
    )
    assert GuardSettings.build(memory).targets_of({"path": "a.py"}) is None


def test_a_targets_callable_that_raises_is_warned_about_and_ignored(memory: FailureMemory) -> None:
    """The call goes on without targets; the trouble is a warning, not an error."""

    def broken(args: Any) -> list[str]:
        raise KeyError("path")

    settings = GuardSettings.build(memory, targets=broken)
    with pytest.warns(ScarguardWarning, match="could not compute the targets"):
        assert settings.targets_of({}) is None
    assert GuardSettings.build(memory, targets=lambda a: [1, 2]).targets_of({}) == ("1", "2")


def test_a_flagged_result_is_a_failure_and_the_repeat_is_refused(
    settings: GuardSettings, memory: FailureMemory
) -> None:
    """A result the plan reads as failed is recorded; once corroborated, the plan refuses."""
    runs: list[int] = []

    def run() -> dict[str, str]:
        runs.append(1)
        return {"error": "make: *** [Makefile:3: deploy] Error 2"}

    for _ in range(2):
        assert run_sync(settings, "bash", ARGS, run, PLAN) == run()
        memory.clock.advance(5)  # type: ignore[attr-defined]
    runs.clear()
    refused = run_sync(settings, "bash", ARGS, run, PLAN)
    assert refused.startswith("REFUSED: scarguard refused this bash call")
    assert runs == []
    assert len(memory.recent_failures()) == 2


def test_a_result_read_as_ok_is_a_success(settings: GuardSettings, memory: FailureMemory) -> None:
    """A result the plan does not flag counts as a success of the tool."""
    assert run_sync(settings, "bash", ARGS, lambda: "deployed", PLAN) == "deployed"
    memory.flush()
    assert memory.stats().successes_by_tool == {"bash": 1}
    assert memory.recent_failures() == []


def test_the_tools_exception_is_recorded_and_propagates(
    settings: GuardSettings, memory: FailureMemory
) -> None:
    """The tool's own exception leaves unchanged, after being recorded."""
    error = RuntimeError("boom")

    def run() -> None:
        raise error

    with pytest.raises(RuntimeError) as caught:
        run_sync(settings, "bash", ARGS, run, PLAN)
    assert caught.value is error
    assert [f.error for f in memory.recent_failures()] == ["RuntimeError: boom"]


def test_control_flow_exceptions_pass_unrecorded(
    settings: GuardSettings, memory: FailureMemory
) -> None:
    """A passthrough exception propagates as it is and records no outcome."""
    interrupt = Interrupt("waiting for a human")

    def run() -> None:
        raise interrupt

    with pytest.raises(Interrupt) as caught:
        run_sync(settings, "bash", ARGS, run, PLAN)
    assert caught.value is interrupt
    memory.flush()
    assert memory.recent_failures() == []
    assert memory.stats().successes_by_tool == {}


def test_a_nested_call_of_the_same_tool_is_guarded_once(
    settings: GuardSettings, memory: FailureMemory
) -> None:
    """A hook and a guarded tool object under it make one guarded call, not two."""

    def inner() -> dict[str, str]:
        return run_sync(settings, "bash", ARGS, lambda: {"error": "exit code 1"}, PLAN)

    run_sync(settings, "bash", ARGS, inner, PLAN)
    assert len(memory.recent_failures()) == 1


def test_async_calls_are_guarded_alike(settings: GuardSettings, memory: FailureMemory) -> None:
    """An async tool's flagged results are recorded and its repeat refused."""

    async def run() -> dict[str, str]:
        return {"error": "make: *** [Makefile:3: deploy] Error 2"}

    async def three() -> list[Any]:
        out = []
        for _ in range(3):
            out.append(await run_async(settings, "bash", ARGS, run, PLAN))
            memory.clock.advance(5)  # type: ignore[attr-defined]
        return out

    first, second, third = asyncio.run(three())
    assert first == second == {"error": "make: *** [Makefile:3: deploy] Error 2"}
    assert third.startswith("REFUSED:")


def test_raise_blocked_raises_tool_blocked_with_the_decision(
    settings: GuardSettings, memory: FailureMemory
) -> None:
    """The raising refusal carries the refusing decision."""
    plan = CallPlan(refuse=raise_blocked, failure_in=PLAN.failure_in)
    for _ in range(2):
        run_sync(settings, "bash", ARGS, lambda: {"error": "exit code 2"}, plan)
        memory.clock.advance(5)  # type: ignore[attr-defined]
    with pytest.raises(ToolBlocked) as caught:
        run_sync(settings, "bash", ARGS, lambda: "ran", plan)
    assert not caught.value.decision.allowed


def test_error_text_names_the_type_and_is_bounded() -> None:
    """The model sees ``Type: message``, cut at 2000 characters, even when str() raises."""

    class Mute(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert error_text(ValueError("bad")) == "ValueError: bad"
    assert error_text(ValueError()) == "ValueError"
    assert error_text(Mute()) == "Mute: <unprintable>"
    assert len(error_text(ValueError("x" * 5000))) == len("ValueError: ") + 2001
