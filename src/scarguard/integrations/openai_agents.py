"""Guard OpenAI Agents SDK tool calls.

* :func:`guard_agent` returns a clone of an ``Agent`` whose function tools are guarded and
  whose instructions carry the guard block, rendered again for each model call.
* :func:`guard_tool` for one ``FunctionTool`` (``@function_tool``, a tool another module
  built): a copy with the same name, description and JSON schema.

The SDK sends a function tool's output string back to the model; a failed call has no flag
of its own, so a refused call's output is the refusal text (what to do instead). The SDK's
default ``failure_error_function`` hides the tool's error ("An error occurred while running
the tool"); with ``handle_errors=True`` (the default) the model gets the exception's type
and message instead, so it can correct itself. With ``handle_errors=False`` the tool's own
``failure_error_function`` applies, as without the guard. Either way the exception is
recorded. Tools of MCP servers (``Agent(mcp_servers=...)``) are listed by the SDK at run
time and are not covered; guard them with the scarguard MCP proxy.
"""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Callable
from typing import Any

from agents import Agent, FunctionTool, function_tool
from agents.tool import (
    resolve_function_tool_failure_error_function,
    set_function_tool_failure_error_function,
)

from scarguard.integrations._driver import CallPlan, GuardSettings, error_text, run_async
from scarguard.prompt import PromptGuard

__all__ = ["guard_agent", "guard_tool", "tool_from_function"]

_GUARDED_MARK = "_scarguard_guarded"
_PLAN = CallPlan(refuse=lambda decision: decision.message)


def _arguments(raw: str) -> dict[str, Any]:
    try:
        parsed = json.loads(raw) if raw else {}
    except ValueError:
        return {"input": raw}
    return parsed if isinstance(parsed, dict) else {"input": parsed}


def guard_tool(
    tool: FunctionTool, memory: Any, *, targets: Any = None, handle_errors: bool = True
) -> FunctionTool:
    """Return a guarded copy of a ``FunctionTool`` (same name, description, schema).

    Args:
        tool: The ``FunctionTool``.
        memory: The :class:`~scarguard.FailureMemory`.
        targets: Argument names whose values are the call's targets, or a callable.
        handle_errors: Show the model the tool's exception (type and message) instead of
            the SDK's generic error text.

    Returns:
        The guarded copy.
    """
    if not isinstance(tool, FunctionTool):
        raise TypeError(
            f"guard_tool takes an OpenAI Agents FunctionTool, got {type(tool).__name__}"
        )
    if getattr(tool, _GUARDED_MARK, False):
        return tool
    settings = GuardSettings.build(memory, targets=targets, handle_errors=handle_errors)
    raising = copy.copy(tool)  # the same invoker, rebound, with no error formatter: it raises
    set_function_tool_failure_error_function(raising, None)

    async def on_invoke_tool(ctx: Any, input: str) -> Any:
        try:
            return await run_async(
                settings,
                tool.name,
                _arguments(input),
                lambda: raising.on_invoke_tool(ctx, input),
                _PLAN,
            )
        except Exception as exc:
            if settings.handle_errors:
                return f"The tool failed: {error_text(exc)}"
            formatter = resolve_function_tool_failure_error_function(tool, ctx)
            if formatter is None:
                raise
            text = formatter(ctx, exc)
            return await text if inspect.isawaitable(text) else text

    guarded = copy.copy(tool)
    guarded.on_invoke_tool = on_invoke_tool
    setattr(guarded, _GUARDED_MARK, True)
    return guarded


def tool_from_function(func: Callable[..., Any]) -> FunctionTool:
    """Build the ``FunctionTool`` that ``@function_tool`` builds from ``func``."""
    return function_tool(func)


def guard_agent(
    agent: Agent[Any],
    memory: Any,
    *,
    targets: Any = None,
    handle_errors: bool = True,
    prompt: PromptGuard | bool = True,
) -> Agent[Any]:
    """Return a clone of ``agent`` with guarded function tools and the guard block.

    Args:
        agent: The agent.
        memory: The :class:`~scarguard.FailureMemory`.
        targets: Argument names whose values are a call's targets, or a callable.
        handle_errors: Show the model the tool's exception instead of the SDK's generic
            error text.
        prompt: The :class:`~scarguard.PromptGuard` whose block goes in front of the
            instructions for each model call (default: one over ``memory``); ``False``
            leaves the instructions alone.

    Returns:
        The guarded clone (``agent`` itself is unchanged).
    """
    tools = [
        guard_tool(t, memory, targets=targets, handle_errors=handle_errors)
        if isinstance(t, FunctionTool)
        else t
        for t in agent.tools
    ]
    if prompt is True:
        prompt = PromptGuard(memory)
    if not prompt:
        return agent.clone(tools=tools)
    guard: PromptGuard = prompt
    original = agent.instructions

    async def instructions(ctx: Any, current: Agent[Any]) -> str:
        base: Any = original
        if callable(original):
            base = original(ctx, current)
            if inspect.isawaitable(base):
                base = await base
        return guard.inject(base or "")

    return agent.clone(tools=tools, instructions=instructions)
