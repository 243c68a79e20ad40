"""Guard pydantic-ai tool calls.

* :class:`ScarguardCapability` (``Agent(..., capabilities=[ScarguardCapability(memory)])``):
  its ``wrap_tool_execute`` sees every tool call of the agent, from every toolset (function
  tools, MCP servers, wrapped toolsets), and its instructions carry the guard block, read
  again before each model request.
* :func:`guard_tool` for one ``Tool`` object: a copy with the same name, description and
  schema.

A refusal reaches the model as ``ToolFailed`` (a failed tool result, ``outcome="failed"``,
which does not use up the tool's retries). With ``handle_errors=True`` (the default) the
tool's own exception becomes ``ToolFailed`` too, instead of ending the run; it is recorded
either way. pydantic-ai's control flow (deferral, approval, skipping) passes through
unrecorded; a ``ModelRetry`` or ``ToolFailed`` the tool raises itself is recorded as a
failure and propagates unchanged.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext, Tool
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import (
    ApprovalRequired,
    CallDeferred,
    ModelRetry,
    SkipToolExecution,
    ToolFailed,
    ToolFailedError,
    ToolRetryError,
)

from scarguard.integrations._driver import CallPlan, GuardSettings, error_text, run_async
from scarguard.model import Decision
from scarguard.prompt import PromptGuard

__all__ = ["ScarguardCapability", "guard_tool", "tool_from_function"]

_CONTROL = (ApprovalRequired, CallDeferred, SkipToolExecution)
_REPORTED = (ModelRetry, ToolFailed, ToolFailedError, ToolRetryError)
_GUARDED_MARK = "__scarguard_guarded__"


def _refuse(decision: Decision) -> Any:
    raise ToolFailed(decision.message)


_PLAN = CallPlan(refuse=_refuse, passthrough=_CONTROL)


async def _guarded(
    settings: GuardSettings, tool: str, args: dict[str, Any], run: Callable[[], Awaitable[Any]]
) -> Any:
    try:
        return await run_async(settings, tool, args, run, _PLAN)
    except _CONTROL + _REPORTED:
        raise
    except Exception as exc:
        if not settings.handle_errors:
            raise
        raise ToolFailed(error_text(exc)) from exc


def guard_tool(
    tool: Tool[Any], memory: Any, *, targets: Any = None, handle_errors: bool = True
) -> Tool[Any]:
    """Return a guarded copy of a pydantic-ai ``Tool`` (same name, description, schema).

    Args:
        tool: The ``Tool`` object.
        memory: The :class:`~scarguard.FailureMemory`.
        targets: Argument names whose values are the call's targets, or a callable.
        handle_errors: Report the tool's own exception to the model as ``ToolFailed``
            instead of ending the run (it is recorded either way).

    Returns:
        The guarded copy.
    """
    if not isinstance(tool, Tool):
        raise TypeError(f"guard_tool takes a pydantic-ai Tool, got {type(tool).__name__}")
    if getattr(tool, _GUARDED_MARK, False):
        return tool
    settings = GuardSettings.build(memory, targets=targets, handle_errors=handle_errors)
    guarded = copy.copy(tool)
    schema = copy.copy(tool.function_schema)
    original = tool.function_schema.call
    name = tool.name

    async def call(args_dict: dict[str, Any], ctx: RunContext[Any]) -> Any:
        return await _guarded(settings, name, args_dict, lambda: original(args_dict, ctx))

    # FunctionToolset runs a Tool through ``tool.function_schema.call``.
    object.__setattr__(schema, "call", call)
    guarded.function_schema = schema
    setattr(guarded, _GUARDED_MARK, True)
    return guarded


def tool_from_function(func: Callable[..., Any]) -> Tool[Any]:
    """Build the ``Tool`` pydantic-ai builds from ``func`` (``RunContext`` first is detected)."""
    return Tool(func)


@dataclass(init=False)
class ScarguardCapability(AbstractCapability[Any]):
    """Guard every tool call of a pydantic-ai agent, and show the guard block.

    Args:
        memory: The :class:`~scarguard.FailureMemory`.
        targets: Argument names whose values are the call's targets, or a callable.
        handle_errors: Report the tool's own exception to the model as ``ToolFailed``
            instead of ending the run (it is recorded either way).
        prompt: The :class:`~scarguard.PromptGuard` whose block joins the agent's
            instructions (default: one over ``memory``); ``False`` adds none.
    """

    settings: GuardSettings
    prompt: PromptGuard | None

    def __init__(
        self,
        memory: Any,
        *,
        targets: Any = None,
        handle_errors: bool = True,
        prompt: PromptGuard | bool = True,
    ) -> None:
        self.settings = GuardSettings.build(memory, targets=targets, handle_errors=handle_errors)
        if prompt is True:
            prompt = PromptGuard(self.settings.memory)
        self.prompt = prompt or None
        self.id = None
        self.description = None
        self.defer_loading = False

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """Return ``None``: the capability holds a live memory and is not part of specs."""
        return None

    def get_instructions(self) -> Any:
        """Return a callable giving the guard block before each model request."""
        prompt = self.prompt
        if prompt is None:
            return None

        def guard_block(ctx: RunContext[Any]) -> str:
            return prompt.block()

        return guard_block

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: Any,
        tool_def: Any,
        args: dict[str, Any],
        handler: Callable[[dict[str, Any]], Awaitable[Any]],
    ) -> Any:
        """Check, run (through ``handler``) and record one tool call."""
        return await _guarded(self.settings, call.tool_name, dict(args), lambda: handler(args))
