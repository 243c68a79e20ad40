"""Retry infrastructure faults, and nothing else, with tenacity.

``guarded_tool(retry=...)`` retries a failure only when the memory blames the harness and the
failure kind is retryable (a rate limit, a timeout, a 503), never an agent mistake. The wait
is the strategy's, or the ``Retry-After`` the error asked for when that is longer. No
tenacity object exists until a call has failed once.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import tenacity
from tenacity.stop import stop_base

from scarguard.errors import ConfigurationError

__all__ = ["Judge", "ResultFailure", "Retry", "as_retry", "retry_async", "retry_sync"]

Judge = Callable[[BaseException], "tuple[bool, float | None]"]
"""Tells whether a failure may be retried, and the wait it asked for (``Retry-After``)."""


def _default_wait() -> Callable[[tenacity.RetryCallState], float]:
    return tenacity.wait_exponential(multiplier=0.5, max=30.0) + tenacity.wait_random(0, 0.5)


def _check_max(instance: Retry, attribute: attrs.Attribute[float], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ConfigurationError(f"Retry.max_retry_after must be a number >= 0, got {value!r}")


def _check_callable(instance: Retry, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not callable(value):
        raise ConfigurationError(f"Retry.{attribute.name} must be callable, got {value!r}")


@attrs.frozen
class Retry:
    """How a guarded tool retries harness faults.

    Attributes:
        stop: A tenacity stop strategy (or ``RetryCallState -> bool``); attempts count the
            first call, so ``stop_after_attempt(3)`` means up to two retries.
        wait: A tenacity wait strategy (or ``RetryCallState -> float``) in seconds.
        sleep: Sleeps that many seconds (default ``time.sleep``, ``asyncio.sleep`` for async
            tools; may return an awaitable). Inject a recorder in tests.
        max_retry_after: A ``Retry-After`` longer than this many seconds is not waited for:
            the failure goes to the caller instead.
    """

    stop: Callable[[tenacity.RetryCallState], bool] = attrs.field(
        factory=lambda: tenacity.stop_after_attempt(3), validator=_check_callable
    )
    wait: Callable[[tenacity.RetryCallState], float] = attrs.field(
        factory=_default_wait, validator=_check_callable
    )
    sleep: Callable[[float], Any] | None = attrs.field(default=None, validator=_check_callable)
    max_retry_after: float = attrs.field(default=60.0, validator=_check_max)


def as_retry(value: object) -> Retry | None:
    """Return the :class:`Retry` that ``guarded_tool(retry=value)`` means.

    ``None`` (no retries), a :class:`Retry`, a number of attempts (``3``), or a tenacity stop
    strategy (``tenacity.stop_after_attempt(3)``) with the default wait.

    Raises:
        ConfigurationError: ``value`` is none of these.
    """
    if value is None or isinstance(value, Retry):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise ConfigurationError(f"retry= attempts must be >= 1, got {value}")
        return Retry(stop=tenacity.stop_after_attempt(value))
    if isinstance(value, stop_base):
        return Retry(stop=value)
    raise ConfigurationError(
        "retry= takes a scarguard Retry, a number of attempts or a tenacity stop strategy,"
        f" got {value!r}"
    )


class ResultFailure(Exception):
    """A result that ``failure_when`` flagged, carried through tenacity as an exception.

    Attributes:
        result: The tool's result (returned to the caller if no retry succeeds).
        text: The error text taken from it.
    """

    def __init__(self, result: Any, text: str) -> None:
        super().__init__(text)
        self.result = result
        self.text = text


@attrs.define
class _Hint:
    """What the latest failure asked for, shared by the retry predicate and the wait."""

    first: BaseException
    first_verdict: tuple[bool, float | None]
    judge: Judge
    limit: float
    retry_after: float | None = None

    def should_retry(self, exc: BaseException) -> bool:
        retryable, after = self.first_verdict if exc is self.first else self.judge(exc)
        self.retry_after = after
        return retryable and (after is None or after <= self.limit)


def _controller(
    retry: Retry, first: BaseException, verdict: tuple[bool, float | None], judge: Judge
) -> dict[str, Any]:
    hint = _Hint(first, verdict, judge, retry.max_retry_after)
    base_wait = retry.wait

    def wait(state: tenacity.RetryCallState) -> float:
        seconds = float(base_wait(state))
        return max(seconds, hint.retry_after) if hint.retry_after else seconds

    options = {
        "stop": retry.stop,
        "wait": wait,
        "retry": tenacity.retry_if_exception(hint.should_retry),
        "reraise": True,
    }
    return options


def retry_sync(
    retry: Retry,
    first: BaseException,
    verdict: tuple[bool, float | None],
    attempt: Callable[[], Any],
    judge: Judge,
) -> Any:
    """Retry ``attempt`` after the first failure ``first``, while failures are retryable.

    Returns:
        The first successful result, or the result of the last flagged attempt.

    Raises:
        BaseException: The last attempt's exception, when retries run out or stop applying.
    """
    options = _controller(retry, first, verdict, judge)
    retrying = tenacity.Retrying(sleep=retry.sleep or time.sleep, **options)
    result: Any = None
    try:
        for state in retrying:
            if state.retry_state.attempt_number == 1:
                state.retry_state.set_exception((type(first), first, first.__traceback__))
                continue
            with state:
                result = attempt()
    except ResultFailure as flagged:
        return flagged.result
    return result


def _async_sleep(sleep: Callable[[float], Any] | None) -> Callable[[float], Awaitable[None]]:
    if sleep is None:
        return asyncio.sleep

    async def call_sleep(seconds: float) -> None:
        outcome = sleep(seconds)
        if inspect.isawaitable(outcome):
            await outcome

    return call_sleep


async def retry_async(
    retry: Retry,
    first: BaseException,
    verdict: tuple[bool, float | None],
    attempt: Callable[[], Awaitable[Any]],
    judge: Judge,
) -> Any:
    """Do what :func:`retry_sync` does, for a coroutine function."""
    options = _controller(retry, first, verdict, judge)
    retrying = tenacity.AsyncRetrying(sleep=_async_sleep(retry.sleep), **options)
    result: Any = None
    try:
        async for state in retrying:
            if state.retry_state.attempt_number == 1:
                state.retry_state.set_exception((type(first), first, first.__traceback__))
                continue
            with state:
                result = await attempt()
    except ResultFailure as flagged:
        return flagged.result
    return result
