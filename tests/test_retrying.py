"""Retrying harness faults: the Retry value, its shorthands, waits that honour Retry-After."""

from __future__ import annotations

from typing import Any

import pytest
import tenacity

from helpers.engine import run
from scarguard.errors import ConfigurationError
from scarguard.guard.decorator import guarded_tool
from scarguard.guard.retrying import (
    ResultFailure,
    Retry,
    as_retry,
    next_wait,
    sleep_async,
    sleep_sync,
)
from scarguard.memory import FailureMemory
from scarguard.testing import FakeClock


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_retry_harness_faults_then_success(is_async: bool, memory: FailureMemory) -> None:
    """Two harness faults then success: the caller sees the success, nothing is learned."""
    sleeps: list[float] = []
    errors = [
        ConnectionError("429 Too Many Requests; Retry-After: 7"),
        TimeoutError("Read timed out"),
    ]

    def fetch(url: str) -> str:
        if errors:
            raise errors.pop(0)
        return f"got {url}"

    async def fetch_async(url: str) -> str:
        return fetch(url)

    retry = Retry(
        stop=tenacity.stop_after_attempt(3), wait=tenacity.wait_fixed(0.5), sleep=sleeps.append
    )
    guarded = guarded_tool(memory, retry=retry)(fetch_async if is_async else fetch)
    assert run(guarded("u")) == "got u"
    assert memory.constraints() == []
    assert sleeps[0] >= 7  # the Retry-After hint beats the 0.5 s wait
    assert len(sleeps) == 2
    stats = guarded.stats
    assert (stats.harness_failures, stats.retries, stats.succeeded) == (2, 2, 1)
    # both faults are stored; the retry inside the one guarded call counts with its first try
    assert len(memory.recent_failures()) == 2
    assert memory.stats().failures == 1


def test_retry_never_retries_agent_mistakes(memory: FailureMemory) -> None:
    """An agent failure is not retried even with retry configured, and no tenacity runs."""
    runs: list[str] = []

    @guarded_tool(memory, retry=3)
    def read(path: str) -> str:
        runs.append(path)
        raise FileNotFoundError(2, "No such file or directory", path)

    with pytest.raises(FileNotFoundError):
        read("a.py")
    assert runs == ["a.py"]
    assert read.stats.retries == 0


def test_retry_gives_up_when_retry_after_too_long(memory: FailureMemory) -> None:
    """A Retry-After beyond max_retry_after is not waited for: the error goes to the caller."""
    sleeps: list[float] = []

    @guarded_tool(memory, retry=Retry(sleep=sleeps.append, max_retry_after=5))
    def fetch(url: str) -> str:
        raise ConnectionError("429 Too Many Requests; Retry-After: 3600")

    with pytest.raises(ConnectionError):
        fetch("u")
    assert sleeps == []


def test_retry_exhausted_reraises_last_fault(memory: FailureMemory) -> None:
    """When attempts run out, the last harness fault reaches the caller."""
    sleeps: list[float] = []
    last = TimeoutError("Read timed out")
    retry = Retry(stop=tenacity.stop_after_attempt(2), sleep=sleeps.append)

    @guarded_tool(memory, retry=retry)
    def fetch(url: str) -> str:
        raise last

    with pytest.raises(TimeoutError) as info:
        fetch("u")
    assert info.value is last
    assert len(sleeps) == 1
    assert fetch.stats.harness_failures == 2


@pytest.mark.parametrize("value", [3, tenacity.stop_after_attempt(3)])
def test_retry_shorthands(value: Any) -> None:
    """retry= also takes a number of attempts or a tenacity stop strategy."""
    retry = as_retry(value)
    assert isinstance(retry, Retry)
    assert retry.stop(tenacity.RetryCallState(None, None, (), {})) is False


# -- the retry policy on its own --------------------------------------------------------------


def _found(error: str):
    return FailureMemory(":memory:", clock=FakeClock()).classify(error)


@pytest.mark.parametrize(
    "options", [{"max_retry_after": -1}, {"max_retry_after": True}, {"stop": 3}, {"sleep": "x"}]
)
def test_invalid_retry_values_are_configuration_errors(options: dict[str, Any]) -> None:
    """A negative or boolean Retry-After cap, or a strategy that is not callable, is refused."""
    with pytest.raises(ConfigurationError):
        Retry(**options)


@pytest.mark.parametrize("value", [0, -2, True, "3", 1.5])
def test_as_retry_refuses_what_it_cannot_read(value: object) -> None:
    """retry= of zero attempts, a boolean, a string or a float is a ConfigurationError."""
    with pytest.raises(ConfigurationError, match="retry"):
        as_retry(value)


def test_as_retry_keeps_none_and_a_retry() -> None:
    """None means no retries; a Retry is used as it is."""
    policy = Retry()
    assert as_retry(None) is None
    assert as_retry(policy) is policy


def test_next_wait_gives_up_on_an_agent_mistake() -> None:
    """Only harness faults are retried: an agent's failure gets no wait."""
    state, wait = next_wait(Retry(), None, _found("old_string not found in file"), "x")
    assert (state, wait) == (None, None)


def test_next_wait_honours_retry_after_and_the_stop_strategy() -> None:
    """A rate limit waits at least its Retry-After, and the stop strategy ends the retries."""
    policy = Retry(stop=tenacity.stop_after_attempt(3), wait=tenacity.wait_fixed(0.5))
    found = _found("429 Too Many Requests; Retry-After: 7")
    state, wait = next_wait(policy, None, found, ConnectionError("429"))
    assert wait == 7
    state, wait = next_wait(policy, state, found, ConnectionError("429"))
    assert wait == 7
    assert state is not None and state.attempt_number == 3
    assert next_wait(policy, state, found, ConnectionError("429"))[1] is None


def test_next_wait_does_not_wait_beyond_the_cap() -> None:
    """A Retry-After longer than ``max_retry_after`` is not waited for."""
    found = _found("429 Too Many Requests; Retry-After: 3600")
    assert next_wait(Retry(max_retry_after=60), None, found, "429")[1] is None


def test_a_flagged_result_is_carried_as_a_result_failure() -> None:
    """A failed result (no exception) reaches the stop strategy as a ResultFailure."""
    seen: list[BaseException | None] = []

    def stop(state: tenacity.RetryCallState) -> bool:
        assert state.outcome is not None
        seen.append(state.outcome.exception())
        return False

    result = {"error": "503 Service Unavailable"}
    next_wait(Retry(stop=stop), None, _found("503 Service Unavailable"), "503", result)
    (error,) = seen
    assert isinstance(error, ResultFailure)
    assert error.result is result
    assert error.text == "503"


def test_sleeps_use_the_policy_sleep_sync_and_async() -> None:
    """The policy's sleep is called with the wait; an awaitable it returns is awaited."""
    slept: list[float] = []
    sleep_sync(Retry(sleep=slept.append), 1.5)

    async def recorder(seconds: float) -> None:
        slept.append(seconds)

    run(sleep_async(Retry(sleep=recorder), 2.5))
    run(sleep_async(Retry(sleep=slept.append), 3.5))
    assert slept == [1.5, 2.5, 3.5]
