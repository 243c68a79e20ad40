"""Guard AutoGen (autogen-core / autogen-agentchat) tool calls.

* :class:`GuardedWorkbench` wraps any ``Workbench`` (``StaticWorkbench`` over a list of
  tools, ``McpWorkbench`` over an MCP server...) and guards every ``call_tool``:
  ``AssistantAgent(..., workbench=GuardedWorkbench(StaticWorkbench(tools), memory))``.
* :class:`GuardedModelClient` wraps the agent's ``ChatCompletionClient`` and puts the guard
  block into the system message of every model call.
* :func:`guard_tool` for one tool object (``FunctionTool``, any ``BaseTool``): a tool with
  the same name, description and schema.

A refusal reaches the model as a tool result with ``is_error=True`` and the refusal text.
AutoGen already returns a tool's exception to the model as an error result; the guard
records it. ``dump_component()`` of a guarded workbench or tool is not supported, and a
``FunctionTool``'s component config carries the original function's source: a tool loaded
from it is unguarded.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from typing import Any

from autogen_core import CancellationToken
from autogen_core.models import ChatCompletionClient, SystemMessage
from autogen_core.tools import (
    BaseTool,
    FunctionTool,
    ImageResultContent,
    StaticWorkbench,
    TextResultContent,
    ToolResult,
    Workbench,
)

from scarguard.integrations._driver import CallPlan, GuardSettings, raise_blocked, run_async
from scarguard.model import Decision
from scarguard.prompt import PromptGuard

__all__ = ["GuardedModelClient", "GuardedWorkbench", "guard_tool", "tool_from_function"]


class _GuardedTool(BaseTool[Any, Any]):
    """A tool object that runs another one under guard."""

    def __init__(self, inner: BaseTool[Any, Any], settings: GuardSettings) -> None:
        super().__init__(
            inner.args_type(),
            inner.return_type(),
            inner.name,
            inner.description,
            strict=bool(inner.schema.get("strict", False)),
        )
        self.inner = inner
        self._settings = settings
        self._plan = CallPlan(refuse=raise_blocked)

    async def run(self, args: Any, cancellation_token: CancellationToken) -> Any:
        """Run the wrapped tool (``run_json`` has already guarded the call)."""
        return await self.inner.run(args, cancellation_token)

    async def run_json(
        self,
        args: Mapping[str, Any],
        cancellation_token: CancellationToken,
        call_id: str | None = None,
    ) -> Any:
        """Check, run and record one call with the model's arguments."""
        return await run_async(
            self._settings,
            self.name,
            dict(args),
            lambda: super(_GuardedTool, self).run_json(args, cancellation_token, call_id=call_id),
            self._plan,
        )

    def return_value_as_string(self, value: Any) -> str:
        """Format the result the way the wrapped tool does."""
        return self.inner.return_value_as_string(value)

    async def save_state_json(self) -> Mapping[str, Any]:
        """Save the wrapped tool's state."""
        return await self.inner.save_state_json()

    async def load_state_json(self, state: Mapping[str, Any]) -> None:
        """Load the wrapped tool's state."""
        await self.inner.load_state_json(state)


def guard_tool(
    tool: BaseTool[Any, Any], memory: Any, *, targets: Any = None, handle_errors: bool = True
) -> BaseTool[Any, Any]:
    """Return a guarded AutoGen tool with the same name, description and schema.

    Args:
        tool: The tool object (``FunctionTool``, any ``BaseTool``).
        memory: The :class:`~scarguard.FailureMemory`.
        targets: Argument names whose values are the call's targets, or a callable.
        handle_errors: Accepted for symmetry; AutoGen already reports a tool's exception
            to the model as an error result.

    Returns:
        The guarded tool.
    """
    if not isinstance(tool, BaseTool):
        raise TypeError(f"guard_tool takes an AutoGen BaseTool, got {type(tool).__name__}")
    if isinstance(tool, _GuardedTool):
        return tool
    return _GuardedTool(
        tool, GuardSettings.build(memory, targets=targets, handle_errors=handle_errors)
    )


def tool_from_function(func: Callable[..., Any]) -> BaseTool[Any, Any]:
    """Build a ``FunctionTool`` from ``func``, described by its docstring."""
    return FunctionTool(func, description=(func.__doc__ or func.__name__).strip())


def _result_failure(result: Any) -> str | None:
    if isinstance(result, ToolResult) and result.is_error:
        return result.to_text() or "tool error"
    return None


class GuardedWorkbench(Workbench):
    """A workbench that guards every tool call of the workbench it wraps.

    Args:
        workbench: The workbench to guard, or a list of tools (a ``StaticWorkbench`` is
            made of them).
        memory: The :class:`~scarguard.FailureMemory`.
        targets: Argument names whose values are a call's targets, or a callable.
    """

    def __init__(
        self,
        workbench: Workbench | Sequence[BaseTool[Any, Any]],
        memory: Any,
        *,
        targets: Any = None,
    ) -> None:
        self.inner = (
            workbench if isinstance(workbench, Workbench) else StaticWorkbench(list(workbench))
        )
        self._settings = GuardSettings.build(memory, targets=targets)

    async def list_tools(self) -> list[Any]:
        """List the wrapped workbench's tools, unchanged."""
        return list(await self.inner.list_tools())

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        cancellation_token: CancellationToken | None = None,
        call_id: str | None = None,
    ) -> ToolResult:
        """Check, run (in the wrapped workbench) and record one tool call."""

        def refuse(decision: Decision) -> ToolResult:
            content: list[TextResultContent | ImageResultContent] = [
                TextResultContent(content=decision.message)
            ]
            return ToolResult(name=name, result=content, is_error=True)

        result: ToolResult = await run_async(
            self._settings,
            name,
            dict(arguments or {}),
            lambda: self.inner.call_tool(name, arguments, cancellation_token, call_id),
            CallPlan(refuse=refuse, failure_in=_result_failure),
        )
        return result

    async def start(self) -> None:
        """Start the wrapped workbench."""
        await self.inner.start()

    async def stop(self) -> None:
        """Stop the wrapped workbench."""
        await self.inner.stop()

    async def reset(self) -> None:
        """Reset the wrapped workbench."""
        await self.inner.reset()

    async def save_state(self) -> Mapping[str, Any]:
        """Save the wrapped workbench's state."""
        return await self.inner.save_state()

    async def load_state(self, state: Mapping[str, Any]) -> None:
        """Load the wrapped workbench's state."""
        await self.inner.load_state(state)


class GuardedModelClient(ChatCompletionClient):
    """A model client that puts the guard block into the system message of every call.

    Args:
        client: The model client to wrap.
        memory: The :class:`~scarguard.FailureMemory` (or pass ``prompt=``).
        prompt: The :class:`~scarguard.PromptGuard` to render (default: one over ``memory``).
    """

    def __init__(
        self, client: ChatCompletionClient, memory: Any = None, *, prompt: PromptGuard | None = None
    ) -> None:
        if prompt is None:
            prompt = PromptGuard(GuardSettings.build(memory).memory)
        self.inner = client
        self.prompt = prompt

    def _messages(self, messages: Sequence[Any]) -> list[Any]:
        out = list(messages)
        for index, message in enumerate(out):
            if isinstance(message, SystemMessage):
                out[index] = SystemMessage(content=self.prompt.inject(message.content))
                return out
        block = self.prompt.inject("")
        return [SystemMessage(content=block), *out] if block else out

    async def create(self, messages: Sequence[Any], **kwargs: Any) -> Any:
        """Call the wrapped client with the block in the system message."""
        return await self.inner.create(self._messages(messages), **kwargs)

    def create_stream(self, messages: Sequence[Any], **kwargs: Any) -> AsyncGenerator[Any, None]:
        """Stream from the wrapped client with the block in the system message."""
        return self.inner.create_stream(self._messages(messages), **kwargs)

    async def close(self) -> None:
        """Close the wrapped client."""
        await self.inner.close()

    def actual_usage(self) -> Any:
        """Return the wrapped client's usage."""
        return self.inner.actual_usage()

    def total_usage(self) -> Any:
        """Return the wrapped client's total usage."""
        return self.inner.total_usage()

    def count_tokens(self, messages: Sequence[Any], **kwargs: Any) -> int:
        """Count tokens with the wrapped client."""
        return self.inner.count_tokens(self._messages(messages), **kwargs)

    def remaining_tokens(self, messages: Sequence[Any], **kwargs: Any) -> int:
        """Return the wrapped client's remaining tokens."""
        return self.inner.remaining_tokens(self._messages(messages), **kwargs)

    @property
    def capabilities(self) -> Any:
        """The wrapped client's capabilities."""
        return self.inner.capabilities

    @property
    def model_info(self) -> Any:
        """The wrapped client's model info."""
        return self.inner.model_info
