"""Guard LangChain and LangGraph tool calls.

Three ways in, all driving :meth:`FailureMemory.attempt <scarguard.FailureMemory.attempt>`:

* :class:`ScarguardMiddleware` for ``langchain.agents.create_agent``: its ``wrap_tool_call``
  / ``awrap_tool_call`` see every tool call of the agent, and ``wrap_model_call`` puts the
  guard block into the system message before each model call. Its two tool-call methods
  also fit LangGraph's ``ToolNode(wrap_tool_call=..., awrap_tool_call=...)``.
* :func:`guard_tool` for one tool object (a toolkit's tool, a ``StructuredTool``): a copy
  of the same class with the same name, description and argument schema.

A refusal reaches the model as ``ToolMessage(status="error")`` with the refusal text. With
``handle_errors=True`` (the default) the tool's own exception becomes an error
``ToolMessage`` too, instead of ending the run (the default ``ToolNode`` re-raises it);
it is recorded either way. LangGraph interrupts pass through unrecorded.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, ToolException
from langgraph.errors import GraphBubbleUp

from scarguard.integrations._driver import CallPlan, GuardSettings, error_text, run_async, run_sync
from scarguard.model import Decision
from scarguard.prompt import PromptGuard

__all__ = ["ScarguardMiddleware", "guard_tool", "tool_from_function"]

_GUARDED_MARK = "__scarguard_guarded__"


class _Refused(ToolException):
    """A refusal, raised inside the tool so LangChain reports it as an error result."""


class _ToolFailed(ToolException):
    """The tool's own exception, as the error result ``handle_errors=True`` asks for."""


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(part.get("text", "")) if isinstance(part, Mapping) else str(part)
            for part in content
        )
    return str(content)


def _message_failure(result: Any) -> str | None:
    if isinstance(result, ToolMessage) and result.status == "error":
        return _content_text(result.content) or "tool error"
    return None


def _is_guarded(tool: Any) -> bool:
    return bool(getattr(tool, "__dict__", {}).get(_GUARDED_MARK))


# -- one tool object -------------------------------------------------------------------------


def _model_arg_names(tool: BaseTool) -> list[str]:
    schema: Any = tool.tool_call_schema
    if isinstance(schema, Mapping):
        return list(schema.get("properties", {}))
    return list(getattr(schema, "model_fields", {}))


def _handler(original: Any) -> Callable[[ToolException], Any]:
    def handle(exc: ToolException) -> Any:
        if isinstance(exc, (_Refused, _ToolFailed)) or original is True:
            return exc.args[0] if exc.args else "Tool execution error"
        if isinstance(original, str):
            return original
        if callable(original):
            return original(exc)
        raise exc  # the tool did not handle its own ToolException: neither do we

    return handle


def guard_tool(
    tool: BaseTool,
    memory: Any,
    *,
    targets: Any = None,
    handle_errors: bool = True,
) -> BaseTool:
    """Return a guarded copy of a LangChain tool object (same class, name and schema).

    Args:
        tool: Any ``BaseTool`` (``@tool``, ``StructuredTool``, a toolkit's tool).
        memory: The :class:`~scarguard.FailureMemory`.
        targets: Argument names whose values are the call's targets, or a callable.
        handle_errors: Return the tool's own exception to the model as an error result
            instead of raising it (it is recorded either way).

    Returns:
        A copy whose calls are checked and recorded; a refused call returns an error
        ``ToolMessage`` (or the refusal text when invoked without a tool call id).
    """
    if not isinstance(tool, BaseTool):
        raise TypeError(f"guard_tool takes a LangChain BaseTool, got {type(tool).__name__}")
    if _is_guarded(tool):
        return tool
    settings = GuardSettings.build(memory, targets=targets, handle_errors=handle_errors)
    guarded: BaseTool = tool.model_copy()
    names = _model_arg_names(tool)
    plan = CallPlan(refuse=_raise_refused)

    def call_args(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        bound = dict(zip(names, args, strict=False))
        bound.update((k, v) for k, v in kwargs.items() if k in names)
        return bound

    @contextlib.contextmanager
    def converting() -> Iterator[None]:
        """Turn the tool's own exception into an error result, as ``handle_errors`` asks."""
        try:
            yield
        except ToolException:
            raise
        except Exception as exc:
            if not settings.handle_errors:
                raise
            raise _ToolFailed(error_text(exc)) from exc

    original_run = guarded._run
    original_arun = guarded._arun

    @functools.wraps(original_run)
    def _run(*args: Any, **kwargs: Any) -> Any:
        with converting():
            return run_sync(
                settings,
                guarded.name,
                call_args(args, kwargs),
                lambda: original_run(*args, **kwargs),
                plan,
            )

    @functools.wraps(original_arun)
    async def _arun(*args: Any, **kwargs: Any) -> Any:
        with converting():
            return await run_async(
                settings,
                guarded.name,
                call_args(args, kwargs),
                lambda: original_arun(*args, **kwargs),
                plan,
            )

    # Instance attributes shadow the class's methods; BaseTool.run/arun call self._run/_arun.
    object.__setattr__(guarded, "_run", _run)
    object.__setattr__(guarded, "_arun", _arun)
    object.__setattr__(guarded, _GUARDED_MARK, True)
    object.__setattr__(guarded, "handle_tool_error", _handler(tool.handle_tool_error))
    return guarded


def tool_from_function(func: Callable[..., Any]) -> BaseTool:
    """Build the tool LangChain's ``@tool`` builds from ``func``."""
    from langchain_core.tools import tool

    built: BaseTool = tool(func)
    return built


def _raise_refused(decision: Decision) -> Any:
    raise _Refused(decision.message)


# -- every tool call of an agent ---------------------------------------------------------------


class ScarguardMiddleware(AgentMiddleware):
    """Guard every tool call of a ``create_agent`` agent, and show the guard block.

    ``wrap_tool_call`` and ``awrap_tool_call`` also fit LangGraph's ``ToolNode``::

        guard = ScarguardMiddleware(memory)
        ToolNode(tools, wrap_tool_call=guard.wrap_tool_call, awrap_tool_call=guard.awrap_tool_call)

    Args:
        memory: The :class:`~scarguard.FailureMemory`.
        targets: Argument names whose values are the call's targets, or a callable.
        handle_errors: Send the tool's own exception to the model as an error
            ``ToolMessage`` instead of ending the run (it is recorded either way).
        prompt: The :class:`~scarguard.PromptGuard` whose block goes into the system
            message before each model call (default: one over ``memory``); ``False``
            leaves the system message alone.
    """

    def __init__(
        self,
        memory: Any,
        *,
        targets: Any = None,
        handle_errors: bool = True,
        prompt: PromptGuard | bool = True,
    ) -> None:
        super().__init__()
        self.settings = GuardSettings.build(memory, targets=targets, handle_errors=handle_errors)
        if prompt is True:
            prompt = PromptGuard(self.settings.memory)
        self.prompt: PromptGuard | None = prompt or None

    # -- tools ---------------------------------------------------------------------------

    def _plan(self, call: Mapping[str, Any]) -> CallPlan:
        def refuse(decision: Decision) -> ToolMessage:
            return ToolMessage(
                content=decision.message, name=call["name"], tool_call_id=call["id"], status="error"
            )

        return CallPlan(refuse=refuse, failure_in=_message_failure, passthrough=(GraphBubbleUp,))

    def _error_message(self, call: Mapping[str, Any], exc: Exception) -> ToolMessage:
        if isinstance(exc, GraphBubbleUp) or not self.settings.handle_errors:
            raise exc
        return ToolMessage(
            content=error_text(exc), name=call["name"], tool_call_id=call["id"], status="error"
        )

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """Check, run (through ``handler``) and record one tool call."""
        call = request.tool_call
        try:
            return run_sync(
                self.settings,
                call["name"],
                dict(call.get("args") or {}),
                lambda: handler(request),
                self._plan(call),
            )
        except Exception as exc:
            return self._error_message(call, exc)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        """Check, run (through ``handler``) and record one tool call, asynchronously."""
        call = request.tool_call
        try:
            return await run_async(
                self.settings,
                call["name"],
                dict(call.get("args") or {}),
                lambda: handler(request),
                self._plan(call),
            )
        except Exception as exc:
            return self._error_message(call, exc)

    # -- the system message ----------------------------------------------------------------

    def _with_block(self, request: Any) -> Any:
        if self.prompt is None:
            return request
        system = request.system_message
        content: Any = system.content if system is not None else ""
        injected = self.prompt.inject_messages([{"role": "system", "content": content}])
        new = injected[0]["content"] if injected else ""
        if new == content:
            return request
        return request.override(system_message=SystemMessage(content=new) if new else None)

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """Put the guard block (what failed, what is refused) into the system message."""
        return handler(self._with_block(request))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        """Put the guard block into the system message (async agents)."""
        return await handler(self._with_block(request))
