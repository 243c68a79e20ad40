"""The engine half of ``@guarded_tool``: check, run, record, retry for one tool.

:class:`ToolGuard` holds everything decided at decoration time (the bound-argument recipe,
the options, the memory) and exposes one wrapt wrapper per calling convention; the decorator
in :mod:`scarguard.decorators` only picks the sync or async one and delegates. Bookkeeping
trouble (a store that is down, a predicate that raises) is reported once per tool and kind
with a :class:`~scarguard.ScarguardWarning` and never changes what the tool returns or
raises.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import attrs

from scarguard._warnings import warn
from scarguard.binding import ArgBinder
from scarguard.errors import ScarguardWarning, ToolBlocked
from scarguard.failure_checks import FailurePredicate, describe_failure
from scarguard.memory import FailureMemory, default_memory
from scarguard.model import Blame, Call, Decision, RecordResult
from scarguard.retrying import ResultFailure, Retry, retry_async, retry_sync

__all__ = ["MEMORY_UNAVAILABLE", "GuardOptions", "ToolGuard", "ToolStats"]

_GUARDS: weakref.WeakSet[ToolGuard] = weakref.WeakSet()
"""Every guard, so a forked child can give each a fresh stats lock."""


def _reset_after_fork() -> None:
    # a lock held by another thread at fork time would stay held forever in the child
    for guard in list(_GUARDS):
        guard._lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)

MEMORY_UNAVAILABLE = (
    "scarguard refused this {tool} call: the failure memory that guards it is unavailable and"
    " the tool is configured to fail closed. The call was not run. Retrying will not help until"
    " the memory is back; tell the operator."
)
"""The message of a call refused with ``fail_closed=True`` because the memory failed."""

TargetsOption = Callable[[Mapping[str, Any]], Sequence[str]] | tuple[str, ...] | None


@attrs.frozen
class ToolStats:
    """What one guarded tool has seen in this process.

    Attributes:
        calls: Calls made while the guard was enabled (refused ones included).
        blocked: Calls refused without running the tool.
        succeeded: Calls that ran and succeeded (retried ones count once).
        agent_failures: Failed attempts blamed on the agent.
        harness_failures: Failed attempts blamed on the infrastructure.
        unknown_failures: Failed attempts of unclear blame (or not recorded).
        constraints_created: Constraints learned from this tool's failures.
        retries: Extra attempts made after harness faults.
        bookkeeping_errors: Checks or records that failed (each also warned about once).
    """

    calls: int = 0
    blocked: int = 0
    succeeded: int = 0
    agent_failures: int = 0
    harness_failures: int = 0
    unknown_failures: int = 0
    constraints_created: int = 0
    retries: int = 0
    bookkeeping_errors: int = 0

    @property
    def failures(self) -> int:
        """Failed attempts, whoever is to blame."""
        return self.agent_failures + self.harness_failures + self.unknown_failures


@attrs.frozen
class GuardOptions:
    """Everything ``guarded_tool`` was told, validated (see its docstring)."""

    name: str
    targets: TargetsOption = None
    on_block: str = "raise"
    failure_when: FailurePredicate | None = None
    retry: Retry | None = None
    fail_closed: bool = False
    ignore_args: tuple[str, ...] = ()
    agent: str | None = None
    provider: str | None = None


_Prepared = tuple[Call | str, dict[str, Any], "Sequence[str] | None"]
_TROUBLE = {
    "check": "check the call (it ran unguarded)",
    "refused": "check the call (it was refused: fail_closed=True)",
    "record": "record the outcome (the result went to the caller unchanged)",
    "failure_when": "apply failure_when (the result was taken as a success)",
    "targets": "compute the targets (the call was checked without them)",
}
_BLAME_FIELD = {
    Blame.AGENT: "agent_failures",
    Blame.HARNESS: "harness_failures",
    Blame.UNKNOWN: "unknown_failures",
}


def _exception_text(exc: BaseException) -> str:
    """Return ``"TypeName: message"``, even for an exception whose ``__str__`` raises."""
    try:
        message = str(exc)
    except Exception:
        message = "<unprintable>"
    if len(message) > 500:
        message = message[:500] + "…"
    return f"{type(exc).__name__}: {message}"


class ToolGuard:
    """Check, run and record the calls of one tool.

    Args:
        memory: The memory, or ``None`` for :func:`~scarguard.memory.default_memory`
            resolved at each call.
        options: The validated options.
        binder: The argument binder built from ``func``'s signature.
    """

    def __init__(
        self, memory: FailureMemory | None, options: GuardOptions, binder: ArgBinder
    ) -> None:
        self.options = options
        self.name = options.name
        self.enabled = True
        self.explicit_memory = memory
        self._binder = binder
        self._targets = options.targets
        self._failure_when = options.failure_when
        self._lock = threading.Lock()
        _GUARDS.add(self)
        self._counts = dict.fromkeys(attrs.fields_dict(ToolStats), 0)
        self._warned: set[tuple[str, str]] = set()
        self._last: contextvars.ContextVar[Decision | None] = contextvars.ContextVar(
            f"scarguard_last_decision_{options.name}", default=None
        )

    @property
    def memory(self) -> FailureMemory:
        """The memory calls are checked against (the default one, if none was given)."""
        return self.explicit_memory if self.explicit_memory is not None else default_memory()

    @property
    def last_decision(self) -> Decision | None:
        """The latest decision in the current thread or task (``None`` before any)."""
        return self._last.get()

    def stats(self) -> ToolStats:
        """Return a snapshot of this tool's counters."""
        with self._lock:
            return ToolStats(**self._counts)

    def _bump(self, field: str, by: int = 1) -> None:
        with self._lock:
            self._counts[field] += by

    def _warn(self, phase: str, exc: BaseException) -> None:
        self._bump("bookkeeping_errors")
        key = (phase, type(exc).__name__)
        if key in self._warned:
            return
        self._warned.add(key)
        what = _TROUBLE["refused" if phase == "check" and self.options.fail_closed else phase]
        message = f"scarguard could not {what} of tool {self.name!r}: {_exception_text(exc)}"
        # never raised, even under -W error: a warning must not replace the call or its result
        warn(message, ScarguardWarning, stacklevel=4)

    # -- before the call -----------------------------------------------------------------

    def prepare(
        self, instance: object, args: tuple[Any, ...], kwargs: Mapping[str, Any]
    ) -> _Prepared | str:
        """Bind and check a call; return what recording needs, or the refusal message.

        Raises:
            ToolBlocked: The call is refused and ``on_block="raise"``.
        """
        bound = self._binder.bind(instance, args, kwargs)
        targets = self._resolve_targets(bound) if self._targets is not None else None
        self._bump("calls")
        try:
            decision = self.memory.check(self.name, bound, targets=targets)
        except Exception as exc:
            self._warn("check", exc)
            self._last.set(None)
            if not self.options.fail_closed:
                return (self.name, bound, targets)
            refused = Decision(
                False,
                Call(self.name, bound, targets or ()),
                message=MEMORY_UNAVAILABLE.format(tool=self.name),
            )
            self._bump("blocked")
            if self.options.on_block == "return":
                return refused.message
            raise ToolBlocked(refused) from exc
        self._last.set(decision)
        if decision.allowed:
            return (decision.call, bound, targets)
        self._bump("blocked")
        if self.options.on_block == "return":
            return decision.message
        raise ToolBlocked(decision)

    def _resolve_targets(self, bound: Mapping[str, Any]) -> Sequence[str] | None:
        spec = self._targets
        try:
            if callable(spec):
                found = spec(bound)
                return None if found is None else tuple(str(t) for t in found)
            targets: list[str] = []
            for name in spec or ():
                value = bound.get(name)
                if isinstance(value, (list, tuple, set, frozenset)):
                    targets.extend(str(v) for v in value)
                elif value is not None:
                    targets.append(str(value))
            return tuple(targets)
        except Exception as exc:
            self._warn("targets", exc)
            return None

    # -- after the call ------------------------------------------------------------------

    def _record(
        self, prepared: _Prepared, started: float, error: BaseException | str | None
    ) -> RecordResult | None:
        subject, bound, targets = prepared
        elapsed = (time.perf_counter() - started) * 1000.0
        try:
            if error is None:
                return self.memory.record(
                    subject, bound, ok=True, duration_ms=elapsed, targets=targets
                )
            return self.memory.record(
                subject,
                bound,
                ok=False,
                error=error,
                duration_ms=elapsed,
                targets=targets,
                agent=self.options.agent,
                provider=self.options.provider,
            )
        except Exception as exc:
            self._warn("record", exc)
            return None

    def flagged(self, result: Any) -> ResultFailure | None:
        """Return the failure ``failure_when`` sees in ``result``, if any."""
        if self._failure_when is None:
            return None
        try:
            if not self._failure_when(result):
                return None
            text = describe_failure(result)
        except Exception as exc:
            self._warn("failure_when", exc)
            return None
        return ResultFailure(result, text)

    def succeeded(self, prepared: _Prepared, started: float) -> None:
        """Record a success."""
        self._bump("succeeded")
        self._record(prepared, started, None)

    def failed(
        self, prepared: _Prepared, started: float, exc: BaseException
    ) -> tuple[bool, float | None] | None:
        """Record a failure; return the retry verdict when a retry may follow, else ``None``."""
        error = exc.text if isinstance(exc, ResultFailure) else exc
        outcome = self._record(prepared, started, error)
        blame = outcome.blame if outcome is not None else None
        self._bump(_BLAME_FIELD[blame or Blame.UNKNOWN])
        if outcome is not None and outcome.new_constraints:
            self._bump("constraints_created", len(outcome.new_constraints))
        if self.options.retry is None or blame is Blame.AGENT:
            return None
        verdict = self.judge(exc)
        return verdict if verdict[0] else None

    def judge(self, exc: BaseException) -> tuple[bool, float | None]:
        """Return whether a failure may be retried (a retryable harness fault) and its wait."""
        try:
            error = exc.text if isinstance(exc, ResultFailure) else exc
            found = self.memory.classify(error)
        except Exception:
            return (False, None)
        retryable = found.blame is Blame.HARNESS and bool(found.signature.retryable)
        return (retryable, found.retry_after)

    # -- the two wrappers ----------------------------------------------------------------

    def call_sync(
        self,
        wrapped: Callable[..., Any],
        instance: object,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """Run a synchronous call under guard (the wrapt wrapper)."""
        if not self.enabled:
            return wrapped(*args, **kwargs)
        prepared = self.prepare(instance, args, kwargs)
        if isinstance(prepared, str):
            return prepared
        started = time.perf_counter()
        try:
            result = wrapped(*args, **kwargs)
        except Exception as exc:
            verdict = self.failed(prepared, started, exc)
            retry = self.options.retry
            if verdict is None or retry is None:
                raise
            again = partial(self._attempt_sync, wrapped, args, kwargs, prepared)
            return retry_sync(retry, exc, verdict, again, self.judge)
        flagged = self.flagged(result) if self._failure_when is not None else None
        if flagged is None:
            self.succeeded(prepared, started)
            return result
        verdict = self.failed(prepared, started, flagged)
        retry = self.options.retry
        if verdict is None or retry is None:
            return result
        again = partial(self._attempt_sync, wrapped, args, kwargs, prepared)
        return retry_sync(retry, flagged, verdict, again, self.judge)

    def _attempt_sync(
        self,
        wrapped: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        prepared: _Prepared,
    ) -> Any:
        self._bump("retries")
        started = time.perf_counter()
        try:
            result = wrapped(*args, **kwargs)
        except Exception as exc:
            self.failed(prepared, started, exc)
            raise
        flagged = self.flagged(result)
        if flagged is not None:
            self.failed(prepared, started, flagged)
            raise flagged
        self.succeeded(prepared, started)
        return result

    async def call_async(
        self,
        wrapped: Callable[..., Any],
        instance: object,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """Run a coroutine call under guard (the wrapt wrapper)."""
        if not self.enabled:
            return await wrapped(*args, **kwargs)
        prepared = self.prepare(instance, args, kwargs)
        if isinstance(prepared, str):
            return prepared
        started = time.perf_counter()
        try:
            result = await wrapped(*args, **kwargs)
        except Exception as exc:
            verdict = self.failed(prepared, started, exc)
            retry = self.options.retry
            if verdict is None or retry is None:
                raise
            again = partial(self._attempt_async, wrapped, args, kwargs, prepared)
            return await retry_async(retry, exc, verdict, again, self.judge)
        flagged = self.flagged(result)
        if flagged is None:
            self.succeeded(prepared, started)
            return result
        verdict = self.failed(prepared, started, flagged)
        retry = self.options.retry
        if verdict is None or retry is None:
            return result
        again = partial(self._attempt_async, wrapped, args, kwargs, prepared)
        return await retry_async(retry, flagged, verdict, again, self.judge)

    async def _attempt_async(
        self,
        wrapped: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        prepared: _Prepared,
    ) -> Any:
        self._bump("retries")
        started = time.perf_counter()
        try:
            result = await wrapped(*args, **kwargs)
        except Exception as exc:
            self.failed(prepared, started, exc)
            raise
        flagged = self.flagged(result)
        if flagged is not None:
            self.failed(prepared, started, flagged)
            raise flagged
        self.succeeded(prepared, started)
        return result
