"""Guard CrewAI tool calls.

* :func:`guard_agent` guards one ``Agent``: its tools are replaced by guarded copies, a
  ``crewai.hooks`` before/after tool-call pair guards the calls of that agent to any other
  tool (tools CrewAI adds at run time: MCP servers, apps, delegation), and a before-LLM-call
  hook puts the guard block into the agent's system message before every model call. The
  hooks are process-wide in CrewAI; these act only for the guarded agent. ``remove()`` on
  the returned handle unregisters them.
* :func:`guard_tool` for one tool object (``@tool``, any ``BaseTool`` subclass, a
  crewai-tools tool): a copy with the same name, description and argument schema.

A guarded tool reports a refusal as CrewAI's own ``ToolFailure`` (the call did not
succeed; the agent sees the refusal text), and with ``handle_errors=True`` (the default)
its own exception too. An exception would make CrewAI's ReAct (text) mode run the tool
again inside the same step, up to three times, and show the model only the last error;
a ``ToolFailure`` reaches the model once, as it is. The hooks can only see a result's
text: a call blocked by a hook is shown to the model with the refusal text.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import Any

import attrs
from crewai.hooks import (
    register_after_tool_call_hook,
    register_before_llm_call_hook,
    register_before_tool_call_hook,
    unregister_after_tool_call_hook,
    unregister_before_llm_call_hook,
    unregister_before_tool_call_hook,
)
from crewai.tools import BaseTool, tool
from crewai.tools.base_tool import Tool
from crewai.tools.tool_failure import ToolFailure, ToolFailureReason
from crewai.utilities.string_utils import sanitize_tool_name

from scarguard.integrations._driver import CallPlan, GuardSettings, error_text, run_async, run_sync
from scarguard.model import Decision
from scarguard.prompt import PromptGuard

__all__ = ["GuardedAgent", "guard_agent", "guard_tool", "tool_from_function"]

_GUARDED_MARK = "__scarguard_guarded__"
REFUSED_CODE = "scarguard_refused"
"""The ``ToolFailure.code`` of a refused call."""


def _refusal(decision: Decision) -> ToolFailure:
    return ToolFailure(
        message=decision.message, reason=ToolFailureReason.REPEATED_CALL, code=REFUSED_CODE
    )


def _declared_failure(result: Any) -> str | None:
    if isinstance(result, ToolFailure):
        return str(result.as_agent_message())
    return None


_PLAN = CallPlan(refuse=_refusal, failure_in=_declared_failure)


def _exception_failure(exc: Exception) -> ToolFailure:
    return ToolFailure(
        message=error_text(exc), reason=ToolFailureReason.EXCEPTION, code=type(exc).__name__
    )


def guard_tool(
    tool: BaseTool, memory: Any, *, targets: Any = None, handle_errors: bool = True
) -> BaseTool:
    """Return a guarded copy of a CrewAI tool (same class, name and argument schema).

    Args:
        tool: The tool object.
        memory: The :class:`~scarguard.FailureMemory`.
        targets: Argument names whose values are the call's targets, or a callable.
        handle_errors: Report the tool's own exception as a ``ToolFailure`` (the model
            sees it once) instead of raising it into CrewAI (it is recorded either way).

    Returns:
        The guarded copy.
    """
    if not isinstance(tool, BaseTool):
        raise TypeError(f"guard_tool takes a CrewAI BaseTool, got {type(tool).__name__}")
    if getattr(tool, "__dict__", {}).get(_GUARDED_MARK):
        return tool
    settings = GuardSettings.build(memory, targets=targets, handle_errors=handle_errors)
    name = tool.name

    def guard_sync(body: Callable[..., Any]) -> Callable[..., Any]:
        def guarded_body(*args: Any, **kwargs: Any) -> Any:
            try:
                return run_sync(settings, name, kwargs, lambda: body(*args, **kwargs), _PLAN)
            except Exception as exc:
                if not settings.handle_errors:
                    raise
                return _exception_failure(exc)

        return guarded_body

    def guard_async(body: Callable[..., Any]) -> Callable[..., Any]:
        async def guarded_body(*args: Any, **kwargs: Any) -> Any:
            try:
                return await run_async(settings, name, kwargs, lambda: body(*args, **kwargs), _PLAN)
            except NotImplementedError:
                raise  # the tool has no async form: CrewAI falls back to _run
            except Exception as exc:
                if not settings.handle_errors:
                    raise
                return _exception_failure(exc)

        return guarded_body

    func = getattr(tool, "func", None)
    if isinstance(tool, Tool) and callable(func):
        # @tool builds a Tool whose run(), _run() and arun() all call self.func
        wrap = guard_async if inspect.iscoroutinefunction(func) else guard_sync
        guarded = tool.model_copy(update={"func": wrap(func)})
    else:
        # BaseTool subclasses: run() calls self._run, arun() self._arun, and
        # to_structured_tool() passes func=self._run; the copy's own attributes win
        guarded = tool.model_copy()
        object.__setattr__(guarded, "_run", guard_sync(guarded._run))
        object.__setattr__(guarded, "_arun", guard_async(guarded._arun))
    object.__setattr__(guarded, _GUARDED_MARK, True)
    return guarded


def tool_from_function(func: Callable[..., Any]) -> BaseTool:
    """Build the tool CrewAI's ``@tool`` builds from ``func`` (it needs a docstring)."""
    built: BaseTool = tool(func)
    return built


# -- one agent: its tools, hooks for the tools it gets at run time, the guard block ---------


def _is_error_text(result: Any) -> str | None:
    if isinstance(result, ToolFailure):
        return str(result.as_agent_message())
    if isinstance(result, str) and result.startswith(("Error executing tool", "\nError")):
        return result
    return None


@attrs.define
class GuardedAgent:
    """The hooks :func:`guard_agent` registered for one agent; ``remove()`` unregisters them.

    Attributes:
        agent: The guarded agent.
    """

    agent: Any
    _settings: GuardSettings
    _prompt: PromptGuard | None
    _guarded_names: frozenset[str]
    _open: dict[int, Any] = attrs.field(factory=dict)
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    def _mine(self, context: Any) -> bool:
        return context.agent is self.agent

    def before_tool_call(self, context: Any) -> bool | None:
        """Check a call of this agent to a tool that is not guarded by itself."""
        if not self._mine(context) or sanitize_tool_name(context.tool_name) in self._guarded_names:
            return None
        args = dict(context.tool_input or {})
        attempt = self._settings.memory.attempt(
            context.tool_name, args, targets=self._settings.targets_of(args)
        )
        attempt.__enter__()
        with self._lock:
            self._open[id(context.tool_input)] = attempt
        return False if attempt.refused else None

    def after_tool_call(self, context: Any) -> str | None:
        """Record the call's outcome; show a refused call's refusal text."""
        with self._lock:
            attempt = self._open.pop(id(context.tool_input), None)
        if attempt is None:
            return None
        if attempt.refused:
            attempt.__exit__(None, None, None)
            message: str = attempt.message
            return message
        failure = _is_error_text(context.raw_tool_result)
        if failure is None:
            attempt.succeeded(context.raw_tool_result)
        else:
            attempt.failed(failure)
        attempt.__exit__(None, None, None)
        return None

    def before_llm_call(self, context: Any) -> None:
        """Put the guard block into this agent's system message (in place)."""
        if self._prompt is None or not self._mine(context):
            return
        messages = context.messages
        for index, message in enumerate(messages):
            if isinstance(message, dict) and message.get("role") == "system":
                messages[index] = self._prompt.inject_messages([message])[0]
                return
        block = self._prompt.inject_messages([])
        if block:
            messages.insert(0, block[0])

    def register(self) -> GuardedAgent:
        """Register the hooks with CrewAI."""
        register_before_tool_call_hook(self.before_tool_call)
        register_after_tool_call_hook(self.after_tool_call)
        register_before_llm_call_hook(self.before_llm_call)
        return self

    def remove(self) -> None:
        """Unregister the hooks (the agent keeps its guarded tools)."""
        unregister_before_tool_call_hook(self.before_tool_call)
        unregister_after_tool_call_hook(self.after_tool_call)
        unregister_before_llm_call_hook(self.before_llm_call)


def guard_agent(
    agent: Any,
    memory: Any,
    *,
    targets: Any = None,
    handle_errors: bool = True,
    prompt: PromptGuard | bool = True,
) -> GuardedAgent:
    """Guard a CrewAI agent's tool calls and show it the guard block.

    Args:
        agent: The ``crewai.Agent``.
        memory: The :class:`~scarguard.FailureMemory`.
        targets: Argument names whose values are a call's targets, or a callable.
        handle_errors: Report a tool's own exception as a ``ToolFailure`` instead of
            raising it into CrewAI.
        prompt: The :class:`~scarguard.PromptGuard` whose block goes into the system
            message before each model call (default: one over ``memory``); ``False``
            adds none.

    Returns:
        The registered hooks; ``remove()`` unregisters them.
    """
    settings = GuardSettings.build(memory, targets=targets, handle_errors=handle_errors)
    tools = [
        guard_tool(t, memory, targets=targets, handle_errors=handle_errors)
        for t in (agent.tools or [])
    ]
    agent.tools = tools
    if prompt is True:
        prompt = PromptGuard(settings.memory)
    names = frozenset(sanitize_tool_name(t.name) for t in tools)
    guarded = GuardedAgent(agent, settings, prompt or None, names)
    return guarded.register()
