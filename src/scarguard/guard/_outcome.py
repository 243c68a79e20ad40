"""What an :class:`~scarguard.guard.Attempt` does once its call ran: record it, retry it.

Recording the settled outcome (in the caller's thread, or off the event loop under ``async
with``), counting it in the guard's tally, and, for a retryable harness fault with retries
left, opening the attempt again after the retry policy's wait. A mixin of
:class:`~scarguard.guard.Attempt` (:mod:`scarguard.guard.step`), which holds the state.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from scarguard._results import RecordResult
from scarguard.guard._report import Reporter
from scarguard.learning.progress import NO_RESULT
from scarguard.model import Blame, Call

if TYPE_CHECKING:
    from scarguard.guard.options import GuardOptions
    from scarguard.guard.retrying import Retry
    from scarguard.guard.tally import Tally
    from scarguard.memory import FailureMemory

__all__ = ["FAILED", "OK", "OPEN", "OutcomeMixin"]

OPEN, OK, FAILED = "open", "ok", "failed"
"""An attempt's states: its call open (running or not run yet), succeeded, failed."""
_BLAME_FIELD = {
    Blame.AGENT: "agent_failures",
    Blame.HARNESS: "harness_failures",
    Blame.UNKNOWN: "unknown_failures",
}


class OutcomeMixin:
    """Recording an attempt's settled outcome, and retrying a harness fault."""

    # the state this side sets (Attempt's own slots hold the rest)
    __slots__ = (
        "_done",
        "_error",
        "_result",
        "_retry_state",
        "_started",
        "_state",
        "_status",
        "recorded",
    )

    memory: FailureMemory
    tool: str
    recorded: RecordResult | None
    _args: Mapping[str, Any]
    _targets: Sequence[str] | None
    _options: GuardOptions | None
    _tally: Tally | None
    _report: Reporter
    _call: Call | None
    _state: str
    _done: bool
    _error: BaseException | str | None
    _status: int | None
    _result: object
    _started: float
    _retry_state: Any
    _unavailable: Exception | None

    if TYPE_CHECKING:  # provided by Attempt

        @property
        def retry(self) -> Retry | None:
            """The retry policy of harness faults, or ``None``."""

    def _record_kwargs(self) -> dict[str, Any]:
        elapsed = (time.perf_counter() - self._started) * 1000.0
        kwargs = self._outcome_kwargs(elapsed)
        if self._call is None:  # not described (the fast path): the memory needs the targets
            kwargs["targets"] = self._targets
        return kwargs

    def _outcome_kwargs(self, elapsed: float) -> dict[str, Any]:
        if self._state == OK:
            return {"ok": True, "duration_ms": elapsed, "result": self._result}
        options = self._options
        return {
            "ok": False,
            "error": self._error,
            "status_code": self._status,
            "duration_ms": elapsed,
            "agent": options.agent if options is not None else None,
            "provider": options.provider if options is not None else None,
            "result": self._result,
            # a retry the guard makes inside this one decision counts with its first try
            "retry": self._retry_state is not None,
        }

    def record(self) -> RecordResult | None:
        """Record the settled outcome now (what leaving a ``with`` block does)."""
        kwargs = self._record_kwargs()
        return self._recorded(self._safely(kwargs), kwargs)

    async def record_async(self) -> RecordResult | None:
        """Record the settled outcome off the event loop."""
        kwargs = self._record_kwargs()
        memory = self.memory
        call = self._call or self.tool
        done: RecordResult | None = None
        if self._unavailable is not None:
            return self._recorded(self._safely(kwargs), kwargs)
        try:
            if kwargs["ok"]:
                done = memory._record_success_nowait(
                    call, kwargs["duration_ms"], self._result, self._args, self._targets
                )
            if done is None:
                done = await memory._off_loop(self._safely, kwargs)
        except Exception as exc:  # the worker itself could not be reached
            self._report("record", exc)
        return self._recorded(done, kwargs)

    def _safely(self, kwargs: dict[str, Any]) -> RecordResult | None:
        if self._unavailable is not None:  # no memory to record in: say why, as the check did
            self._report("record", self._unavailable)
            return None
        try:
            done = self.memory.record(self._call or self.tool, self._args, **kwargs)
        except Exception as exc:
            self._report("record", exc)
            return None
        return done

    def _recorded(self, done: RecordResult | None, kwargs: dict[str, Any]) -> RecordResult | None:
        self.recorded = done
        self._done = True
        ok = kwargs["ok"]
        tally = self._tally
        if tally is not None:
            if ok:
                tally.bump("succeeded")
            else:
                tally.bump(_BLAME_FIELD[(done.blame if done else None) or Blame.UNKNOWN])
                if done is not None and done.new_constraints:
                    tally.bump("constraints_created", len(done.new_constraints))
        return done

    # -- retrying harness faults ------------------------------------------------------------

    def retry_wait(self) -> float | None:
        """Return how long to wait before trying a recorded failure again, or ``None``.

        Only a retryable harness fault is retried (never an agent mistake), while the retry
        policy's stop strategy allows, and not when the error asks to wait longer than
        ``max_retry_after``. The classification made while recording decides; the error is
        classified afresh only when it could not be recorded. On a retry the attempt is open
        again: the same decision, one more try.
        """
        retry = self.retry
        if retry is None or self._state != FAILED or not self._done:
            return None
        from scarguard.guard.retrying import next_wait

        done = self.recorded
        try:
            found = done.classification if done is not None else None
            if found is None:
                found = self.memory.classify(self._error)
        except Exception:
            return None
        self._retry_state, wait = next_wait(
            retry, self._retry_state, found, self._error, self._result
        )
        if wait is None:
            return None
        self._state, self._error, self._status, self._result = OPEN, None, None, NO_RESULT
        self._done, self.recorded = False, None
        if self._tally is not None:
            self._tally.bump("retries")
        self._started = time.perf_counter()
        return wait

    def pause(self, seconds: float) -> None:
        """Sleep before the next try, with the retry policy's ``sleep``."""
        from scarguard.guard.retrying import sleep_sync

        if self.retry is not None:
            sleep_sync(self.retry, seconds)

    async def pause_async(self, seconds: float) -> None:
        """Sleep before the next try without blocking the event loop."""
        from scarguard.guard.retrying import sleep_async

        if self.retry is not None:
            await sleep_async(self.retry, seconds)
