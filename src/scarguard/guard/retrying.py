"""Retry infrastructure faults, and nothing else, with tenacity.

``guarded_tool(retry=...)`` retries a failure only when the memory blames the harness and the
failure kind is retryable (a rate limit, a timeout, a 503), never an agent mistake. The wait
is the strategy's, or the ``Retry-After`` the error asked for when that is longer. The
retries belong to one decision of the agent: the guard step (:mod:`scarguard.guard.step`)
records each try and asks :func:`next_wait` whether to go again; tenacity's own call state
and strategies decide. No tenacity object exists until a call has failed once.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import tenacity
from tenacity.stop import stop_base

from scarguard.errors import ConfigurationError
from scarguard.model import Blame

if TYPE_CHECKING:
    from scarguard.naming.classify import Classification

__all__ = ["ResultFailure", "Retry", "as_retry", "next_wait", "sleep_async", "sleep_sync"]


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


def _retrying(retry: Retry) -> tenacity.Retrying:
    return tenacity.Retrying(stop=retry.stop, wait=retry.wait, reraise=True)


def next_wait(
    retry: Retry,
    state: tenacity.RetryCallState | None,
    found: Classification,
    error: BaseException | str | None,
    result: object = None,
) -> tuple[tenacity.RetryCallState | None, float | None]:
    """Return the retry state after a recorded failure and how long to wait before the next try.

    The wait is ``None`` (give up) unless the failure is a retryable harness fault whose
    ``Retry-After`` (if any) is at most ``retry.max_retry_after`` and the stop strategy
    allows another attempt. The state is tenacity's own: the stop and wait strategies see
    the attempt number, the time since the first try and the failure, as under ``@retry``.

    Args:
        retry: The retry policy.
        state: The state after the previous failure of this decision (``None`` at the first).
        found: The failure's classification, made when it was recorded.
        error: The failure: the exception raised, or the error text of a flagged result.
        result: The flagged result, when the failure is one.
    """
    if found.blame is not Blame.HARNESS or not found.signature.retryable:
        return state, None
    after = found.retry_after
    if after is not None and after > retry.max_retry_after:
        return state, None
    if state is None:
        state = tenacity.RetryCallState(_retrying(retry), fn=None, args=(), kwargs={})
    exc = error if isinstance(error, BaseException) else ResultFailure(result, str(error))
    state.set_exception((type(exc), exc, exc.__traceback__))
    if retry.stop(state):
        return state, None
    seconds = float(retry.wait(state))
    if after:
        seconds = max(seconds, after)
    state.upcoming_sleep = seconds
    state.idle_for += seconds
    state.prepare_for_next_attempt()
    return state, seconds


def sleep_sync(retry: Retry, seconds: float) -> None:
    """Sleep before a retry with the policy's ``sleep`` (default ``time.sleep``)."""
    (retry.sleep or time.sleep)(seconds)


async def sleep_async(retry: Retry, seconds: float) -> None:
    """Sleep before a retry with the policy's ``sleep`` (default ``asyncio.sleep``)."""
    if retry.sleep is None:
        import asyncio

        await asyncio.sleep(seconds)
        return
    outcome = retry.sleep(seconds)
    if inspect.isawaitable(outcome):
        await outcome
