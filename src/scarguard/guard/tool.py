"""The drivers behind ``@guarded_tool``: one guard step per call, sync or async.

:class:`ToolGuard` holds what was decided at decoration time (the argument binder, the
validated options, the memory, the counters) and turns each call of the tool into one
:class:`~scarguard.guard.step.Attempt`: bind the arguments, check, run, record, and retry a
harness fault while the step says so. The sync and async drivers differ only in ``await``;
every decision is the step's.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from scarguard.errors import ToolBlocked
from scarguard.guard._report import Reporter
from scarguard.guard.binding import ArgBinder
from scarguard.guard.failure_checks import describe_failure
from scarguard.guard.options import GuardOptions
from scarguard.guard.step import Attempt, quick_decision
from scarguard.guard.tally import Tally, ToolStats
from scarguard.learning.progress import NO_RESULT
from scarguard.memory import FailureMemory, default_memory
from scarguard.model import Call, Decision
from scarguard.telemetry import _unheard

_RECORD = FailureMemory.record
_Allowed = tuple[FailureMemory, str, Mapping[str, Any]]
"""A call allowed on the lean path: its memory, tool and arguments (its Decision, when asked)."""

__all__ = ["ToolGuard", "warning_note"]

_NOTE_LIMIT = 300


def warning_note(decision: Decision) -> str:
    """Return a one-line note of a decision's warnings ("" when it has none)."""
    if not decision.warnings:
        return ""
    text = " ".join(" ".join(v.reason.split()) for v in decision.warnings)
    if len(text) > _NOTE_LIMIT:
        text = text[: _NOTE_LIMIT - 1] + "…"
    return f"[scarguard warning] {text}"


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
        # the lean path (see call_sync) needs no targets resolved and no result inspected
        self._lean = options.targets is None and options.failure_when is None
        self._tally = Tally()
        self._report = Reporter(options.name, fail_closed=options.fail_closed, tally=self._tally)
        # the latest step, not its decision: a fast-path step builds its Decision when asked
        # (a lean call leaves its memory and arguments, see call_sync)
        self._last: contextvars.ContextVar[Attempt | Decision | Call | _Allowed | None] = (
            contextvars.ContextVar(f"scarguard_last_decision_{options.name}", default=None)
        )

    @property
    def memory(self) -> FailureMemory:
        """The memory calls are checked against (the default one, if none was given)."""
        return self.explicit_memory if self.explicit_memory is not None else default_memory()

    @property
    def last_decision(self) -> Decision | None:
        """The latest decision in the current thread or task (``None`` before any)."""
        step = self._last.get()
        if step is None or isinstance(step, Decision):
            return step
        if isinstance(step, Call):  # allowed with nothing to say
            return Decision(True, step)
        if isinstance(step, tuple):
            return quick_decision(*step)
        return None if step.check_error is not None else step.decision

    @property
    def _lock(self) -> threading.Lock:
        """The counters' lock (reset in a forked child)."""
        return self._tally.lock

    def stats(self) -> ToolStats:
        """Return a snapshot of this tool's counters."""
        return self._tally.snapshot()

    # -- the steps around the tool's own code ---------------------------------------------

    def begin(self, instance: object, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Attempt:
        """Return the guard step of one call, its arguments bound by name (not yet checked)."""
        return self._step(self._binder.bind(instance, args, kwargs))

    def _step(self, bound: dict[str, Any]) -> Attempt:
        targets = self._resolve_targets(bound) if self.options.targets is not None else None
        try:
            memory: FailureMemory | None = self.memory
            unavailable = None
        except Exception as exc:  # the default memory could not be opened
            memory, unavailable = None, exc
        return Attempt(
            memory,  # type: ignore[arg-type]  # None only with `unavailable`
            self.name,
            bound,
            targets=targets,
            options=self.options,
            tally=self._tally,
            report=self._report,
            unavailable=unavailable,
        )

    def checked(self, step: Attempt) -> Any:
        """Note the step's decision; return the refusal text, raise it, or return ``None``.

        Raises:
            ToolBlocked: The call is refused and ``on_block="raise"``.
        """
        self._last.set(step)
        if not step.refused:
            return None
        if self.options.on_block == "return":
            return step.message
        raise ToolBlocked(step.decision) from step.check_error

    def returned(self, step: Attempt, result: Any) -> None:
        """Settle a returned result: a success, or a failure that ``failure_when`` sees."""
        predicate = self.options.failure_when
        if predicate is not None:
            try:
                flagged = bool(predicate(result))
                text = describe_failure(result) if flagged else ""
            except Exception as exc:
                self._report("failure_when", exc)
                flagged = False
            if flagged:
                step.settle_failure(text, result)
                return
        step.succeeded(result)

    def deliver(self, step: Attempt, result: Any) -> Any:
        """Return the result, with a note of the decision's warnings if asked for."""
        if self.options.warnings == "append" and isinstance(result, str) and step.message:
            note = warning_note(step.decision)
            if note:
                return f"{result}\n{note}" if result else note
        return result

    def _resolve_targets(self, bound: Mapping[str, Any]) -> Sequence[str] | None:
        spec = self.options.targets
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
            self._report("targets", exc)
            return None

    # -- the two drivers ------------------------------------------------------------------

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
        if not self._lean:
            step = self.begin(instance, args, kwargs)
            step.enter()
            return self._after_check(step, wrapped, args, kwargs)
        # The lean paths: a call is checked, run and its success counted with no step built;
        # a refusal, a warning, a failure, or anything else goes on with a step as if it had
        # been built from the start.
        bound = self._binder.bind(instance, args, kwargs)
        try:
            memory: FailureMemory | None = self.explicit_memory or default_memory()
        except Exception:  # the step reports it
            memory = None
        # a memory whose record() is its own (an instance's or a subclass's) records every
        # outcome through it: the step
        if memory is None or "record" in memory.__dict__ or type(memory).record is not _RECORD:
            step = self._step(bound)
            step.enter()
            return self._after_check(step, wrapped, args, kwargs)
        heard = not _unheard()  # (asked once: the decision's and the outcome's signals)
        try:
            shape = memory._clean_check(self.name, bound, None, False, heard)
        except Exception:  # the full check reports what is wrong
            step = self._step(bound)
            step.enter_full()
            return self._after_check(step, wrapped, args, kwargs)
        if shape is None:  # the index is current: decide on the described call
            return self._described_sync(memory, bound, wrapped, args, kwargs)
        tally = self._tally
        # (the hot paths take their locks by acquire and release: a with block looks its
        # __enter__ and __exit__ up at every call, about twice the cost of the lock here)
        lock = tally.lock
        lock.acquire()
        try:
            tally.counts["calls"] += 1
        finally:
            lock.release()
        self._last.set((memory, self.name, bound))
        started = time.perf_counter()
        try:
            result = wrapped(*args, **kwargs)
        except Exception as exc:
            step = self._resumed(bound, started, None)
            step.failed(exc)
            if not self._retries(step):
                raise
            return self._run_sync(step, wrapped, args, kwargs)
        kept = NO_RESULT if result is None else result
        try:
            counted = memory._count_success(self.name, bound, None, shape, kept, None, False, heard)
        except Exception:  # the step's record reports what is wrong
            counted = False
        if counted:
            lock = tally.lock
            lock.acquire()
            try:
                tally.counts["succeeded"] += 1
            finally:
                lock.release()
            return result
        step = self._resumed(bound, started, None)
        step.succeeded(result)
        step.record()
        return self.deliver(step, result)  # a success is never retried

    def _described_sync(
        self,
        memory: FailureMemory,
        bound: dict[str, Any],
        wrapped: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """The lean path of a call described and checked in full (see :meth:`call_sync`)."""
        try:
            call = memory._describe_args(self.name, bound)  # a tool name and a dict: valid
            decision = memory._check_indexed(call, self.options.enforce)
        except Exception:  # the step checks again, and reports what is wrong
            step = self._step(bound)
            step.enter_full()
            return self._after_check(step, wrapped, args, kwargs)
        if decision is not None and (not decision.allowed or decision.shadow or decision.warnings):
            step = self._step(bound)
            step.adopt_check(call, decision)
            return self._after_check(step, wrapped, args, kwargs)
        tally = self._tally
        lock = tally.lock  # (acquire and release: see call_sync)
        lock.acquire()
        try:
            tally.counts["calls"] += 1
        finally:
            lock.release()
        self._last.set(call if decision is None else decision)
        started = time.perf_counter()
        try:
            result = wrapped(*args, **kwargs)
        except Exception as exc:
            allowed = Decision(True, call) if decision is None else decision
            step = self._resumed(bound, started, (call, allowed))
            step.failed(exc)
            if not self._retries(step):
                raise
            return self._run_sync(step, wrapped, args, kwargs)
        kept = NO_RESULT if result is None else result
        try:
            if memory._shadow:  # a would-be refusal may await this call's outcome
                elapsed = (time.perf_counter() - started) * 1000.0
                memory.record(call, bound, ok=True, duration_ms=elapsed, result=kept)
            else:
                memory._count_described(call, None, kept)
        except Exception as exc:
            self._report("record", exc)
        lock = tally.lock
        lock.acquire()
        try:
            tally.counts["succeeded"] += 1
        finally:
            lock.release()
        return result

    def _resumed(
        self, bound: dict[str, Any], started: float, checked: tuple[Call, Decision] | None
    ) -> Attempt:
        """The step of a lean call allowed at ``started`` (on the fast path: ``checked`` None)."""
        step = self._step(bound)
        if checked is None:
            step.allowed_quickly(started)
        else:
            step.adopt_check(*checked, started=started)
        self._last.set(step)
        return step

    def _retries(self, step: Attempt) -> bool:
        """Record a lean call's failure; return whether to try again (after the pause)."""
        step.record()
        if (wait := step.retry_wait()) is None:
            return False
        step.pause(wait)
        return True

    def _after_check(
        self,
        step: Attempt,
        wrapped: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        if (refusal := self.checked(step)) is not None:
            return refusal
        return self._run_sync(step, wrapped, args, kwargs)

    def _run_sync(
        self,
        step: Attempt,
        wrapped: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        while True:
            try:
                result = wrapped(*args, **kwargs)
            except Exception as exc:
                step.failed(exc)
                step.record()
                if (wait := step.retry_wait()) is None:
                    raise
            else:
                self.returned(step, result)
                step.record()
                if (wait := step.retry_wait()) is None:
                    return self.deliver(step, result)
            step.pause(wait)

    async def call_async(
        self,
        wrapped: Callable[..., Any],
        instance: object,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """Run a coroutine call under guard (the wrapt wrapper); the store stays off the loop."""
        if not self.enabled:
            return await wrapped(*args, **kwargs)
        step = self.begin(instance, args, kwargs)
        await step.enter_async()
        if (refusal := self.checked(step)) is not None:
            return refusal
        while True:
            try:
                result = await wrapped(*args, **kwargs)
            except Exception as exc:
                step.failed(exc)
                await step.record_async()
                if (wait := step.retry_wait()) is None:
                    raise
            else:
                self.returned(step, result)
                await step.record_async()
                if (wait := step.retry_wait()) is None:
                    return self.deliver(step, result)
            await step.pause_async(wait)
