r"""The one guard step: check a call, let it run, record what it did, retry harness faults.

:class:`Attempt` is what :meth:`FailureMemory.attempt <scarguard.FailureMemory.attempt>`
returns and what every entry point drives: ``@guarded_tool``, the framework integrations,
the MCP proxy and agent CLI hooks. It is a small state machine::

    created --enter: check--> refused            (nothing runs, nothing is recorded)
                          \\-> open --succeeded()/failed()/exception/exit--> settled
    settled --record--> recorded --retryable harness fault, retries left--> open again

Entering checks the call; leaving the block (``with`` or ``async with``) records the settled
outcome. Under ``async with`` the check reads only state held in memory when it can, and
every store round trip (a reload, a record, a flush) runs on the memory's worker thread, so
the event loop never waits on the store. Bookkeeping trouble is warned about and never
changes what the block returns or raises.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from scarguard._results import RecordResult
from scarguard.errors import ConfigurationError
from scarguard.guard._outcome import FAILED, OK, OPEN, OutcomeMixin
from scarguard.guard._report import Reporter
from scarguard.learning.progress import NO_RESULT
from scarguard.model import Call, Decision

if TYPE_CHECKING:
    from scarguard.guard.options import GuardOptions
    from scarguard.guard.retrying import Retry
    from scarguard.guard.tally import Tally
    from scarguard.memory import FailureMemory

__all__ = ["Attempt", "quick_decision"]

def _described(
    memory: FailureMemory, tool: str, args: Mapping[str, Any], targets: Sequence[str] | None
) -> Call:
    try:
        return memory.describe(tool, args, targets=targets)
    except Exception:  # an adapter that raises: the call as given (it was allowed)
        return Call(tool, args, targets or ())


def quick_decision(memory: FailureMemory, tool: str, args: Mapping[str, Any]) -> Decision:
    """The :class:`Decision` of a call allowed on the fast path, built when someone asks."""
    return Decision(True, _described(memory, tool, args, None))


class Attempt(OutcomeMixin):
    """One guarded call, as a context manager for ``with`` and ``async with``.

    Entering the block checks the call: :attr:`refused`, :attr:`decision` and
    :attr:`message` tell the outcome. Inside, :meth:`succeeded` and :meth:`failed` settle
    what the call did (for tools that report failure in their result); an exception leaving
    the block is recorded as a failure and propagates unchanged, with its traceback; a block
    that leaves with neither call and no exception is recorded as a success. A refused
    attempt records nothing. Build one with :meth:`FailureMemory.attempt`.

    Attributes:
        memory: The memory the call is checked against.
        tool: The tool's name.
        recorded: What the record did (``None`` until recorded, when refused, or when the
            store could not record it).
        check_error: The exception that kept the memory from checking the call (the call is
            then allowed: scarguard fails open), or ``None``.
    """

    __slots__ = (
        "_args",
        "_call",
        "_decision",
        "_options",
        "_quick",
        "_report",
        "_tally",
        "_targets",
        "_unavailable",
        "check_error",
        "memory",
        "tool",
    )

    def __init__(
        self,
        memory: FailureMemory,
        tool: str,
        args: Mapping[str, Any] | None = None,
        *,
        targets: Sequence[str] | None = None,
        options: GuardOptions | None = None,
        tally: Tally | None = None,
        report: Reporter | None = None,
        unavailable: Exception | None = None,
    ) -> None:
        if not isinstance(tool, str) or not tool:
            raise ConfigurationError(f"tool must be a non-empty string, got {tool!r}")
        if args is not None and type(args) is not dict and not isinstance(args, Mapping):
            raise ConfigurationError(
                f"args of {tool!r} must be a mapping of argument names, got {type(args).__name__}"
            )
        self.memory = memory
        self.tool = tool
        self._args: Mapping[str, Any] = args if args is not None else {}
        self._targets = (targets,) if isinstance(targets, str) else targets
        self._options = options
        self._tally = tally
        self._report = report or Reporter(tool)
        self._call: Call | None = None
        self._decision: Decision | None = None
        self._quick = False  # allowed on the fast path: the Decision is built when asked
        self._state = OPEN
        self._done = False
        self._error: BaseException | str | None = None
        self._status: int | None = None
        self._result: object = NO_RESULT
        self._started = 0.0
        self._retry_state: Any = None
        self.recorded: RecordResult | None = None
        self.check_error: Exception | None = None
        self._unavailable = unavailable

    def __repr__(self) -> str:
        if self._quick:
            verdict = "allowed"
        elif self._decision is None:
            verdict = "unchecked"
        else:
            verdict = "allowed" if self._decision.allowed else "refused"
        return f"<Attempt {self.tool!r} {verdict} {self._state}{' recorded' * self._done}>"

    # -- what the check said ---------------------------------------------------------------

    @property
    def decision(self) -> Decision:
        """The check's :class:`~scarguard.Decision` (available once the block is entered).

        Raises:
            ConfigurationError: The attempt was not entered yet.
        """
        if self._decision is None:
            if self._quick:
                self._decision = Decision(True, self._quick_call())
                return self._decision
            raise ConfigurationError(
                f"the attempt of {self.tool!r} has not been checked: use it in a with block"
            )
        return self._decision

    @property
    def refused(self) -> bool:
        """Whether the call must not run (the block should return :attr:`message`)."""
        return not self._quick and not self.decision.allowed

    @property
    def message(self) -> str:
        """The text for the model: why it is refused, or warnings; empty when nothing to say."""
        return "" if self._quick else self.decision.message

    def _quick_call(self) -> Call:
        """The :class:`Call` of a fast-path attempt, described only when someone asks."""
        return _described(self.memory, self.tool, self._args, self._targets)

    def adopt_check(self, call: Call, decision: Decision, *, started: float | None = None) -> None:
        """Take the check its driver made of the call, as entering the block would have.

        Args:
            call: The call the memory described.
            decision: What the memory decided.
            started: When the call, allowed and counted by the driver, started running
                (``None``: count the decision now, as entering does).
        """
        self._call = call
        if started is None:
            self._checked(decision)
        else:
            self._decision, self._started = decision, started

    def allowed_quickly(self, started: float) -> None:
        """Take the fast path's verdict its driver reached (calls counted, started then)."""
        self._quick = True
        self._started = started

    # -- settling the outcome --------------------------------------------------------------

    def succeeded(self, result: object = None) -> None:
        """Settle the call as a success; ``result`` is what the tool returned.

        Raises:
            ConfigurationError: The call was refused, or its outcome is already settled.
        """
        self._settle(OK, None, None, result)

    def failed(self, error: str | BaseException, *, status_code: int | None = None) -> None:
        """Settle the call as a failure (for tools that report failure in their result).

        Args:
            error: The error text, or the exception the tool raised.
            status_code: An HTTP-like status code, if the tool reports one.

        Raises:
            ConfigurationError: The call was refused, or its outcome is already settled.
        """
        if not isinstance(error, (str, BaseException)):
            raise ConfigurationError(
                f"failed() takes the error text or an exception, got {type(error).__name__}"
            )
        self._settle(FAILED, error, status_code, None)

    def settle_failure(self, text: str, result: object) -> None:
        """Settle the call as failed by its result (``failure_when``): text and result kept."""
        self._settle(FAILED, text, None, result)

    def _settle(
        self, state: str, error: BaseException | str | None, status: int | None, result: object
    ) -> None:
        if self.refused:
            raise ConfigurationError(
                f"the call of {self.tool!r} was refused: it must not run, so it has no outcome"
            )
        if self._state != OPEN:
            raise ConfigurationError(f"the outcome of this {self.tool!r} call is already settled")
        # None says nothing about progress (most tools that return nothing are commands)
        kept = NO_RESULT if result is None else result
        self._state, self._error, self._status, self._result = state, error, status, kept

    def _settle_on_exit(self, exc: BaseException | None) -> bool:
        """Settle what leaving the block means; return whether there is anything to record."""
        if self._done or not (self._quick or (self._decision and self._decision.allowed)):
            return False
        if self._state == OPEN:
            if exc is None:
                self._state = OK
            elif isinstance(exc, Exception):
                self._state, self._error = FAILED, exc
            else:
                return False  # cancelled or interrupted: the call did not finish either way
        return True

    # -- the steps -------------------------------------------------------------------------

    @property
    def retry(self) -> Retry | None:
        """How harness faults are retried (``None``: they are not)."""
        return self._options.retry if self._options is not None else None

    def _describe(self) -> Call | None:
        if self._unavailable is not None:
            self._cannot_check(self._unavailable)
            return None
        try:
            self._call = self.memory.describe(self.tool, self._args, targets=self._targets)
        except Exception as exc:  # an adapter that raises must not break the call
            self._cannot_check(exc)
            return None
        return self._call

    def _cannot_check(self, exc: Exception) -> None:
        """Decide without the memory: allow (fail open) or, with ``fail_closed``, refuse."""
        self.check_error = exc
        self._report("check", exc)
        call = Call(self.tool, self._args, self._targets or ())
        if self._options is not None and self._options.fail_closed:
            from scarguard.guard.options import MEMORY_UNAVAILABLE

            refusal = MEMORY_UNAVAILABLE.format(tool=self.tool)
            self._decision = Decision(False, call, message=refusal)
        else:
            self._decision = Decision(True, call)

    def _checked(self, decision: Decision) -> None:
        self._decision = decision
        tally = self._tally
        if tally is not None:
            tally.bump("calls")
            if not decision.allowed:
                tally.bump("blocked")
            elif decision.shadow:
                tally.bump("would_block")
        self._started = time.perf_counter()

    @property
    def _enforce(self) -> bool | None:
        """The tool's ``enforce`` option (``None``: as the memory's)."""
        return self._options.enforce if self._options is not None else None

    def _check_sync(self, call: Call) -> Decision:
        return self.memory._check_described(call, self._enforce)

    def _try_quick(self, nowait: bool) -> bool:
        """Allow the call on the fast path if nothing known applies to it (no Call built).

        The fast branch of the check step (see :meth:`FailureMemory._quick_check`): a call
        of a tool that never failed, that no constraint or loop can concern, is allowed
        without computing its fingerprint; anything else goes through the full check.
        """
        if self._unavailable is not None:
            return False
        try:
            quick = self.memory._quick_check(self.tool, self._args, self._targets, nowait)
        except Exception:  # the full check reports what is wrong
            return False
        if quick:
            self._quick = True
            if self._tally is not None:
                self._tally.bump("calls")
            self._started = time.perf_counter()
        return quick

    def enter(self) -> None:
        """Check the call now, as entering a ``with`` block does (see :meth:`check`)."""
        if not self._try_quick(False):
            self._check_full()

    def enter_full(self) -> None:
        """Check the call by the full path (for a driver that found the fast one closed)."""
        self._check_full()

    async def enter_async(self) -> None:
        """Check the call without waiting on the store on the event loop."""
        if not self._try_quick(True):
            await self._check_async_full()

    def check(self) -> Decision:
        """Check the call now (what entering a ``with`` block does); return the decision."""
        self.enter()
        return self.decision

    def _check_full(self) -> Decision:
        call = self._describe()
        if call is not None:
            try:
                decision = self.memory._check_described(call, self._enforce)
            except Exception as exc:
                self._cannot_check(exc)
                decision = self._decision  # type: ignore[assignment]
        else:
            decision = self._decision  # type: ignore[assignment]
        self._checked(decision)
        return decision

    async def check_async(self) -> Decision:
        """Check the call without waiting on the store on the event loop; return it."""
        await self.enter_async()
        return self.decision

    async def _check_async_full(self) -> Decision:
        call = self._describe()
        if call is not None:
            try:
                decision = self.memory._check_nowait(call, self._enforce)
                if decision is None:
                    decision = await self.memory._off_loop(self._check_sync, call)
            except Exception as exc:
                self._cannot_check(exc)
                decision = self._decision
        else:
            decision = self._decision
        assert decision is not None
        self._checked(decision)
        return decision

    # -- the context manager protocol -----------------------------------------------------

    def __enter__(self) -> Attempt:
        self.enter()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._settle_on_exit(exc):
            self.record()

    async def __aenter__(self) -> Attempt:
        await self.enter_async()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._settle_on_exit(exc):
            await self.record_async()
