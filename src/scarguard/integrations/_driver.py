"""Drive one framework tool call through :meth:`FailureMemory.attempt`.

Every integration is a thin adapter between a framework's hook and this module: it says how
to run the call, how to read a failure the framework reports in a result (an error
``ToolMessage``, ``is_error=True``), which of the framework's exceptions are control flow
(an interrupt, a deferral) rather than a failure, and how a refusal reaches the model. The
check, the record and the learning all happen in ``memory.attempt``; nothing here repeats
them.
"""

from __future__ import annotations

import contextvars
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from scarguard.errors import ConfigurationError, ScarguardWarning, ToolBlocked

if TYPE_CHECKING:
    from scarguard.memory import FailureMemory
    from scarguard.model import Decision

__all__ = ["CallPlan", "GuardSettings", "error_text", "raise_blocked", "run_async", "run_sync"]

T = TypeVar("T")

TargetsOption = Callable[[Mapping[str, Any]], Sequence[str]] | Sequence[str] | None


@attrs.frozen
class GuardSettings:
    """What every framework helper is told (validated once, shared by its hooks).

    Attributes:
        memory: The memory calls are checked against and recorded in.
        targets: Argument names whose values are the call's targets, or a callable
            receiving the arguments (default: the memory's adapter extracts them).
        handle_errors: Turn the tool's own exception into the framework's error message
            for the model instead of letting it end the run (it is recorded either way).
    """

    memory: FailureMemory
    targets: TargetsOption = None
    handle_errors: bool = True

    @classmethod
    def build(
        cls, memory: object, *, targets: object = None, handle_errors: object = True
    ) -> GuardSettings:
        """Validate the options every integration takes.

        Raises:
            ConfigurationError: An option has the wrong type.
        """
        from scarguard.memory import FailureMemory

        if not isinstance(memory, FailureMemory):
            raise ConfigurationError(f"expected a FailureMemory, got {type(memory).__name__}")
        if targets is not None and not callable(targets):
            names = (targets,) if isinstance(targets, str) else targets
            if not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names):
                raise ConfigurationError(
                    f"targets= takes argument names or a callable(args) -> targets, got {targets!r}"
                )
            targets = tuple(names)
        if not isinstance(handle_errors, bool):
            raise ConfigurationError(f"handle_errors must be True or False, got {handle_errors!r}")
        return cls(memory, targets, handle_errors)

    def targets_of(self, args: Mapping[str, Any]) -> Sequence[str] | None:
        """Return the call's targets by the ``targets`` option (``None``: let the adapter).

        A ``targets`` callable that raises is warned about and the adapter decides: the
        call itself is never broken by it.
        """
        spec = self.targets
        if spec is None:
            return None
        if callable(spec):
            try:
                found = spec(args)
                return None if found is None else tuple(str(t) for t in found)
            except Exception as exc:
                warnings.warn(
                    f"scarguard could not compute the targets (the call was checked without"
                    f" them): {error_text(exc)}",
                    ScarguardWarning,
                    stacklevel=3,
                )
                return None
        out: list[str] = []
        for name in spec:
            value = args.get(name)
            if isinstance(value, (list, tuple, set, frozenset)):
                out.extend(str(v) for v in value)
            elif value is not None:
                out.append(str(value))
        return tuple(out)


@attrs.frozen
class CallPlan:
    """How one framework runs, reads and refuses a tool call.

    Attributes:
        refuse: Build what the framework returns for a refused call (or raise it), from
            the refusing :class:`~scarguard.Decision`; its ``message`` is for the model.
        failure_in: Return the error text of a result the framework flags as failed, else
            ``None`` (``ToolMessage(status="error")``, ``ToolResult(is_error=True)``).
        passthrough: Exception types that are the framework's control flow (interrupts,
            deferrals): they leave unrecorded and unchanged.
    """

    refuse: Callable[[Decision], Any]
    failure_in: Callable[[Any], str | None] = lambda result: None
    passthrough: tuple[type[BaseException], ...] = ()


_active: contextvars.ContextVar[tuple[int, str] | None] = contextvars.ContextVar(
    "scarguard_active_call", default=None
)
"""The call being guarded in this context: a hook and a guarded tool object under it (or a
framework running a sync body in a worker thread) must make one guarded call, not two."""


def raise_blocked(decision: Decision) -> Any:
    """Refuse by raising :class:`~scarguard.ToolBlocked`.

    For frameworks that report a tool's exception to the model as an error result.
    """
    raise ToolBlocked(decision)


class _Passthrough(BaseException):
    """Carries a control-flow exception out of the attempt, which records no outcome for it."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


def _settle(attempt: Any, plan: CallPlan, result: Any) -> None:
    failure = plan.failure_in(result)
    if failure is None:
        attempt.succeeded(result)
    else:
        attempt.failed(failure)


def _reraise(carrier: _Passthrough) -> Any:
    error = carrier.error
    raise error.with_traceback(error.__traceback__) from error.__cause__


def run_sync(
    settings: GuardSettings,
    tool: str,
    args: Mapping[str, Any],
    run: Callable[[], T],
    plan: CallPlan,
) -> T | Any:
    """Check, run and record one call; return the result or the framework's refusal.

    The tool's own exception is recorded and propagates unchanged (the caller converts it
    when ``handle_errors`` is on).
    """
    key = (id(settings.memory), tool)
    if _active.get() == key:
        return run()
    token = _active.set(key)
    try:
        with settings.memory.attempt(tool, args, targets=settings.targets_of(args)) as attempt:
            if attempt.refused:
                return plan.refuse(attempt.decision)
            try:
                result = run()
            except plan.passthrough as exc:
                raise _Passthrough(exc) from None
            _settle(attempt, plan, result)
            return result
    except _Passthrough as carrier:
        return _reraise(carrier)
    finally:
        _active.reset(token)


async def run_async(
    settings: GuardSettings,
    tool: str,
    args: Mapping[str, Any],
    run: Callable[[], Awaitable[T]],
    plan: CallPlan,
) -> T | Any:
    """Check, run and record one call of an async tool (see :func:`run_sync`)."""
    key = (id(settings.memory), tool)
    if _active.get() == key:
        return await run()
    token = _active.set(key)
    try:
        async with settings.memory.attempt(
            tool, args, targets=settings.targets_of(args)
        ) as attempt:
            if attempt.refused:
                return plan.refuse(attempt.decision)
            try:
                result = await run()
            except plan.passthrough as exc:
                raise _Passthrough(exc) from None
            _settle(attempt, plan, result)
            return result
    except _Passthrough as carrier:
        return _reraise(carrier)
    finally:
        _active.reset(token)


def error_text(exc: BaseException) -> str:
    """Return ``"TypeName: message"`` for the model, bounded, even if ``__str__`` raises."""
    try:
        message = str(exc)
    except Exception:
        message = "<unprintable>"
    if len(message) > 2000:
        message = message[:2000] + "…"
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
