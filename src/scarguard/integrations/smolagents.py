"""Guard smolagents tool calls.

* :func:`guard_agent` guards an agent in place and returns it: a ``ToolCallingAgent``'s
  ``execute_tool_call`` (every tool call the model makes) is checked and recorded; a
  ``CodeAgent``'s tools are replaced by guarded copies (its code calls them directly). The
  guard block joins the system message of every model call.
* :func:`guard_tool` for one ``Tool`` (a built-in such as ``PythonInterpreterTool``, a
  ``@tool`` function, a Hub tool): a copy with the same name, description and inputs.

A refusal raises :class:`~scarguard.ToolBlocked`, which smolagents reports to the model as
the step's error, like the tool's own exceptions (which it already turns into errors; the
guard records them). ``Tool.to_dict()``/``save()``/``push_to_hub()`` serialise the original
tool's source: a tool loaded from them is unguarded.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from smolagents import ChatMessage, CodeAgent, MultiStepAgent, Tool, tool
from smolagents.utils import AgentToolExecutionError

from scarguard.integrations._driver import CallPlan, GuardSettings, raise_blocked, run_sync
from scarguard.model import Decision
from scarguard.prompt import PromptGuard

__all__ = ["guard_agent", "guard_tool", "tool_from_function"]

_GUARDED_MARK = "_scarguard_guarded"
_UNGUARDED = frozenset({"final_answer"})
_PLAN = CallPlan(refuse=raise_blocked)


def guard_tool(tool: Tool, memory: Any, *, targets: Any = None, handle_errors: bool = True) -> Tool:
    """Return a guarded copy of a smolagents ``Tool`` (same name, description, inputs).

    Args:
        tool: The ``Tool``.
        memory: The :class:`~scarguard.FailureMemory`.
        targets: Argument names whose values are the call's targets, or a callable.
        handle_errors: Accepted for symmetry; smolagents already reports a tool's
            exception to the model as the step's error.

    Returns:
        The guarded copy.
    """
    if not isinstance(tool, Tool):
        raise TypeError(f"guard_tool takes a smolagents Tool, got {type(tool).__name__}")
    if getattr(tool, _GUARDED_MARK, False):
        return tool
    settings = GuardSettings.build(memory, targets=targets, handle_errors=handle_errors)
    guarded = copy.copy(tool)
    forward = tool.forward
    names = list(tool.inputs)

    def guarded_forward(*args: Any, **kwargs: Any) -> Any:
        call_args = {**dict(zip(names, args, strict=False)), **kwargs}
        return run_sync(settings, tool.name, call_args, lambda: forward(*args, **kwargs), _PLAN)

    # Tool.__call__ runs self.forward: the copy's own attribute takes the class's place.
    guarded.forward = guarded_forward
    setattr(guarded, _GUARDED_MARK, True)
    return guarded


def tool_from_function(func: Callable[..., Any]) -> Tool:
    """Build the ``Tool`` that smolagents' ``@tool`` builds (it needs a docstring with Args)."""
    built: Tool = tool(func)
    return built


def _refused_as_error(agent: MultiStepAgent, decision: Decision) -> Any:
    raise AgentToolExecutionError(decision.message, agent.logger)


def guard_agent(
    agent: MultiStepAgent,
    memory: Any,
    *,
    targets: Any = None,
    prompt: PromptGuard | bool = True,
) -> MultiStepAgent:
    """Guard every tool call of a smolagents agent, in place, and return it.

    Args:
        agent: A ``ToolCallingAgent`` or a ``CodeAgent``.
        memory: The :class:`~scarguard.FailureMemory`.
        targets: Argument names whose values are a call's targets, or a callable.
        prompt: The :class:`~scarguard.PromptGuard` whose block joins the system message
            of every model call (default: one over ``memory``); ``False`` adds none.

    Returns:
        ``agent``, guarded.
    """
    settings = GuardSettings.build(memory, targets=targets)
    if getattr(agent, _GUARDED_MARK, False):
        return agent
    if isinstance(agent, CodeAgent):
        for name, item in list(agent.tools.items()):
            if name not in _UNGUARDED:
                agent.tools[name] = guard_tool(item, memory, targets=targets)
    else:
        execute = agent.execute_tool_call
        plan = CallPlan(refuse=lambda decision: _refused_as_error(agent, decision))

        def execute_tool_call(tool_name: str, arguments: Any) -> Any:
            if tool_name in _UNGUARDED:
                return execute(tool_name, arguments)
            args = arguments if isinstance(arguments, dict) else {"input": arguments}
            return run_sync(settings, tool_name, args, lambda: execute(tool_name, arguments), plan)

        agent.execute_tool_call = execute_tool_call
    if prompt is True:
        prompt = PromptGuard(settings.memory)
    if prompt:
        _inject_each_turn(agent, prompt)
    setattr(agent, _GUARDED_MARK, True)
    return agent


def _inject_each_turn(agent: MultiStepAgent, guard: PromptGuard) -> None:
    write = agent.write_memory_to_messages

    def write_memory_to_messages(summary_mode: bool = False) -> list[ChatMessage]:
        messages: list[Any] = write(summary_mode=summary_mode)
        if not messages or getattr(messages[0].role, "value", messages[0].role) != "system":
            return messages
        first = messages[0]
        injected = guard.inject_messages([{"role": "system", "content": first.content}])
        if injected:
            messages[0] = ChatMessage(role=first.role, content=injected[0]["content"])
        return messages

    agent.write_memory_to_messages = write_memory_to_messages
