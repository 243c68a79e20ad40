"""``@guarded_tool``: refuse tool calls known to fail again, and record every outcome.

The decorator is thin (as ``tenacity.retry`` is over ``Retrying``): it validates its options
once (:class:`~scarguard.guard.options.GuardOptions`), builds a
:class:`~scarguard.guard.tool.ToolGuard` (whose drivers run one
:class:`~scarguard.guard.step.Attempt` per call) and wraps the function in a wrapt
proxy, choosing the sync or the async wrapper at decoration time. The proxy keeps the
function's ``__name__``, ``__qualname__``, ``__doc__``, ``__wrapped__``, signature, type
hints and ``inspect.iscoroutinefunction``, so agent frameworks build the same tool schema
from it. Put ``@guarded_tool`` *under* the framework's decorator::

    @tool                      # LangChain, CrewAI, smolagents, @function_tool, ...
    @guarded_tool(memory)
    def edit_file(path: str, old: str, new: str) -> str: ...

A guarded function copies and deep-copies as itself (functions do), and pickles by reference
to its module-level name; in another process it uses that process's memory (the same file
for a memory with a path, the default memory re-created lazily).
"""

from __future__ import annotations

import inspect
import pickle
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, Protocol, TypeVar, overload

import attrs
import wrapt

from scarguard.errors import ConfigurationError
from scarguard.frameworks import framework_tool_name
from scarguard.guard._pickling import MemoryRef, load, lookup, memory_ref, reopen
from scarguard.guard.binding import ArgBinder
from scarguard.guard.failure_checks import FailurePredicate
from scarguard.guard.options import GuardOptions
from scarguard.guard.retrying import Retry
from scarguard.guard.tally import ToolStats
from scarguard.guard.tool import ToolGuard
from scarguard.memory import FailureMemory
from scarguard.model import Decision

__all__ = ["GuardedCallable", "GuardedTool", "guarded_tool"]

F = TypeVar("F", bound=Callable[..., Any])
P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")
R_co = TypeVar("R_co", covariant=True)


class GuardedCallable(Protocol[P, R_co]):
    """What ``@guarded_tool`` returns, as a type checker sees it.

    The function's own parameters and return type (with ``on_block="return"`` the return
    type also admits the refusal text, ``str``), plus the attributes the guard adds.
    Methods keep their return type; their parameters are not checked through the
    instance (``__get__``).
    """

    enabled: bool
    """Whether the guard is on; when off, the tool is a pure pass-through."""
    __name__: str
    __qualname__: str
    __wrapped__: Any

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R_co:
        """Call the tool under guard."""
        ...

    def __get__(
        self, instance: object, owner: type[Any] | None = None, /
    ) -> GuardedCallable[..., R_co]: ...

    @property
    def stats(self) -> ToolStats:
        """A snapshot of this tool's counters in this process."""
        ...

    @property
    def last_decision(self) -> Decision | None:
        """The latest decision for this tool in the current thread or task."""
        ...

    @property
    def memory(self) -> FailureMemory:
        """The memory this tool is checked against."""
        ...

    @property
    def guard(self) -> ToolGuard:
        """The engine object behind this tool."""
        ...


class _Decorator(Protocol):
    def __call__(self, func: Callable[P, R], /) -> GuardedCallable[P, R]: ...


class _ReturningDecorator(Protocol):
    @overload
    def __call__(
        self, func: Callable[P, Coroutine[Any, Any, T]], /
    ) -> GuardedCallable[P, Coroutine[Any, Any, T | str]]: ...

    @overload
    def __call__(self, func: Callable[P, T], /) -> GuardedCallable[P, T | str]: ...

if TYPE_CHECKING:
    _FunctionWrapper = wrapt.FunctionWrapper[..., Any]
    _BoundFunctionWrapper = wrapt.BoundFunctionWrapper[..., Any]
else:  # the runtime classes are not subscriptable
    _FunctionWrapper = wrapt.FunctionWrapper
    _BoundFunctionWrapper = wrapt.BoundFunctionWrapper


class _GuardedAccess:
    """The attributes a guarded tool adds: ``memory``, ``stats``, ``enabled``, ``last_decision``."""

    # No class-level annotations here: they would shadow the function's ``__annotations__``.

    @property
    def guard(self) -> ToolGuard:
        """The engine object behind this tool."""
        guard: ToolGuard = object.__getattribute__(self, "_self_wrapper").__self__
        return guard

    @property
    def memory(self) -> FailureMemory:
        """The memory this tool is checked against (resolved now, if it is the default)."""
        return self.guard.memory

    @property
    def stats(self) -> ToolStats:
        """A snapshot of this tool's counters in this process."""
        return self.guard.stats()

    @property
    def enabled(self) -> bool:
        """Whether the guard is on; when off, the tool is a pure pass-through."""
        return self.guard.enabled

    @enabled.setter
    def enabled(self, value: bool) -> None:
        self.guard.enabled = bool(value)

    @property
    def last_decision(self) -> Decision | None:
        """The latest decision for this tool in the current thread or task.

        Warnings (an allowed call the memory has doubts about) are visible here and in
        ``memory.check()``; they reach a string result only with ``warnings="append"``.
        """
        return self.guard.last_decision


class BoundGuardedTool(_BoundFunctionWrapper, _GuardedAccess):
    """A guarded method, bound to its instance or class."""

    def __reduce_ex__(self, protocol: Any) -> Any:
        holder = self._self_instance
        if holder is None:
            holder = self._self_owner  # accessed on the class
        if holder is None:
            return self._self_parent.__reduce_ex__(protocol)
        return (getattr, (holder, self.__name__))

    def __copy__(self) -> BoundGuardedTool:
        return self

    def __deepcopy__(self, memo: Any) -> BoundGuardedTool:
        return self


class GuardedTool(_FunctionWrapper, _GuardedAccess):
    """A tool function under guard (what ``@guarded_tool`` returns)."""

    __bound_function_wrapper__ = BoundGuardedTool

    def __reduce_ex__(self, protocol: Any) -> Any:
        module, qualname = self.__module__, self.__qualname__
        if lookup(module, qualname) is self:
            return (load, (module, qualname))
        guard = self.guard
        wrapped = self.__wrapped__
        raw = getattr(wrapped, "__func__", wrapped)
        if lookup(getattr(raw, "__module__", ""), getattr(raw, "__qualname__", "")) is not raw:
            raise pickle.PicklingError(
                f"cannot pickle guarded tool {qualname!r}: neither it nor the function it wraps"
                f" is reachable as {module}.{qualname}; define the tool at module level"
            )
        return (_rebuild, (wrapped, memory_ref(guard), guard.options, guard.enabled))

    def __copy__(self) -> GuardedTool:
        return self

    def __deepcopy__(self, memo: Any) -> GuardedTool:
        return self


def _rebuild(
    wrapped: Any, ref: MemoryRef | None, options: GuardOptions, enabled: bool
) -> GuardedTool:
    tool = _wrap(wrapped, None if ref is None else reopen(ref), options)
    tool.guard.enabled = enabled
    return tool


def _wrap(
    func: Any, memory: FailureMemory | None, options: GuardOptions, binder: ArgBinder | None = None
) -> GuardedTool:
    binder = binder or ArgBinder(func, ignore=options.ignore_args)
    guard = ToolGuard(memory, options, binder)
    wrapper = guard.call_async if _is_async(func) else guard.call_sync
    return GuardedTool(func, wrapper)


def _is_async(func: Any) -> bool:
    raw = func.__func__ if isinstance(func, (classmethod, staticmethod)) else func
    if inspect.iscoroutinefunction(raw):
        return True
    if inspect.isroutine(raw) or inspect.isclass(raw):
        return False
    call = inspect.getattr_static(type(raw), "__call__", None)  # an async __call__
    return inspect.iscoroutinefunction(call)


def _check_func(func: object) -> None:
    framework = framework_tool_name(func)
    if framework is not None:
        raise TypeError(
            f"guarded_tool got a {framework} tool object: guard tool objects with"
            " scarguard.integrations.guard_tools([tool], memory), which keeps their name and"
            " schema and refuses through the framework's error channel; or put @guarded_tool"
            " under the framework's decorator, on the plain function"
        )
    if isinstance(func, GuardedTool):
        raise ConfigurationError(f"{func.__qualname__!r} is already guarded")
    if not (callable(func) or isinstance(func, (classmethod, staticmethod))):
        raise TypeError(f"guarded_tool decorates functions and methods, got {func!r}")
    raw = getattr(func, "__func__", func)
    if inspect.isgeneratorfunction(raw) or inspect.isasyncgenfunction(raw):
        raise ConfigurationError(
            f"guarded_tool cannot guard the generator function {raw.__qualname__!r}: a failure"
            " while it is being iterated would go unrecorded. Guard a function that returns the"
            " collected results (a list, a string) instead"
        )


def _targets_option(value: object, binder: ArgBinder) -> Any:
    if value is None or callable(value):
        return value
    names = (value,) if isinstance(value, str) else value
    if not isinstance(names, Iterable) or not all(isinstance(n, str) for n in names):
        return value  # GuardOptions says what is wrong with it
    names = tuple(names)
    unknown = [n for n in names if n not in binder.names()]
    if unknown and not binder.accepts_any_keyword():
        raise ConfigurationError(f"targets= names unknown arguments: {', '.join(unknown)}")
    return names


@overload
def guarded_tool(memory: Callable[P, R], /) -> GuardedCallable[P, R]: ...


@overload
def guarded_tool(
    memory: FailureMemory | None = None,
    /,
    *,
    name: str | None = None,
    targets: Callable[[Mapping[str, Any]], Sequence[str]] | Sequence[str] | None = None,
    on_block: Literal["raise"] = "raise",
    failure_when: FailurePredicate | None = None,
    retry: Retry | int | object | None = None,
    fail_closed: bool = False,
    enabled: bool = True,
    ignore_args: Sequence[str] = (),
    agent: str | None = None,
    provider: str | None = None,
    warnings: str | None = None,
    enforce: bool | None = None,
) -> _Decorator: ...


@overload
def guarded_tool(
    memory: FailureMemory | None = None,
    /,
    *,
    name: str | None = None,
    targets: Callable[[Mapping[str, Any]], Sequence[str]] | Sequence[str] | None = None,
    on_block: str,
    failure_when: FailurePredicate | None = None,
    retry: Retry | int | object | None = None,
    fail_closed: bool = False,
    enabled: bool = True,
    ignore_args: Sequence[str] = (),
    agent: str | None = None,
    provider: str | None = None,
    warnings: str | None = None,
    enforce: bool | None = None,
) -> _ReturningDecorator: ...


def guarded_tool(
    memory: Any = None,
    /,
    *,
    name: str | None = None,
    targets: Callable[[Mapping[str, Any]], Sequence[str]] | Sequence[str] | None = None,
    on_block: str = "raise",
    failure_when: FailurePredicate | None = None,
    retry: Retry | int | object | None = None,
    fail_closed: bool = False,
    enabled: bool = True,
    ignore_args: Sequence[str] = (),
    agent: str | None = None,
    provider: str | None = None,
    warnings: str | None = None,
    enforce: bool | None = None,
) -> Any:
    """Guard a tool: refuse calls known to fail again, record every outcome.

    Use bare (``@guarded_tool``, the default memory, opened at the first call) or with a
    memory and options. Works on functions, ``async def`` functions, methods, classmethods
    and staticmethods (either order with ``@classmethod``/``@staticmethod``).

    Args:
        memory: The :class:`~scarguard.FailureMemory` (``None``: the default memory).
        name: The tool's name in the memory (default: the function's ``__name__``).
        targets: What the call touches: argument names whose values are targets, or a
            callable receiving the bound arguments (default: the adapter extracts them).
        on_block: ``"raise"`` a :class:`~scarguard.ToolBlocked`, or ``"return"`` its message
            as the tool's result (the body does not run either way).
        failure_when: A ``result -> bool`` predicate for tools that report failure by value
            (see :data:`~scarguard.failure_when`); the result still reaches
            the caller, and ``str(result)`` (bounded) is recorded as the error.
        retry: Retry retryable harness faults (never agent mistakes): a :class:`Retry`, a
            number of attempts, or a tenacity stop strategy.
        fail_closed: Refuse calls while the memory cannot be checked (default: run them
            unguarded, with a warning).
        enabled: Start enabled; ``tool.enabled = False`` makes it a pure pass-through.
        ignore_args: Parameter names left out of the call's arguments, besides ``self``,
            ``cls`` and framework-injected context (:data:`CONTEXT_TYPE_NAMES`,
            :data:`CONTEXT_PARAM_NAMES`).
        agent: Recorded with each failure: which agent made the call.
        provider: Recorded with each failure: which model provider the agent used.
        warnings: ``"append"``: when the decision carries warnings (allowed, with doubts),
            append a one-line note of them to a string result, so the model reads them;
            ``None`` (default): results are returned untouched.
        enforce: ``False``: shadow mode for this tool: every call runs, and the ones that
            would have been refused are counted with their real outcome (``scarguard
            stats``); ``True``: refuse even when the memory is in shadow mode; ``None``
            (default): as the memory's ``enforce``.

    Returns:
        The guarded tool, or a decorator making one.

    Raises:
        ConfigurationError: An option is invalid (raised at decoration time).
        TypeError: What is decorated is a framework tool object or not callable.
    """
    if memory is not None and not isinstance(memory, FailureMemory):
        if callable(memory) or isinstance(memory, (classmethod, staticmethod)):
            return guarded_tool()(memory)
        raise ConfigurationError(f"guarded_tool takes a FailureMemory, got {memory!r}")
    settings: dict[str, Any] = {
        "on_block": on_block,
        "failure_when": failure_when,
        "retry": retry,
        "fail_closed": fail_closed,
        "ignore_args": ignore_args,
        "agent": agent,
        "provider": provider,
        "warnings": warnings,
        "enforce": enforce,
    }
    checked = GuardOptions(name=name if name is not None else "-", **settings)

    def decorate(func: F) -> F:
        _check_func(func)
        binder = ArgBinder(func, ignore=checked.ignore_args)
        raw = getattr(func, "__func__", func)
        options = attrs.evolve(
            checked,
            name=name or getattr(raw, "__name__", None) or type(raw).__name__,
            targets=_targets_option(targets, binder),
            retry=checked.retry,
        )
        tool = _wrap(func, memory, options, binder)
        tool.guard.enabled = bool(enabled)
        return tool  # type: ignore[return-value]

    return decorate
