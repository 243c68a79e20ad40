"""Drivers that put a failure memory where agents already call tools.

Every driver here is a thin layer over :meth:`FailureMemory.attempt
<scarguard.FailureMemory.attempt>`; nothing in this package is imported by ``import
scarguard``.

* Agent frameworks: :func:`guard_tools` takes a list mixing plain functions and tool objects
  of LangChain, CrewAI, AutoGen, the OpenAI Agents SDK, pydantic-ai and smolagents, and
  returns guarded equivalents with the same name, description and argument schema. Each
  framework also has a module with the hook that guards every tool call of an agent at once
  (:mod:`scarguard.integrations.langchain`, ``.crewai``, ``.autogen``, ``.openai_agents``,
  ``.pydantic_ai``, ``.smolagents``). Objects are recognised by the names in their class's
  MRO, so this package imports no framework; a framework module is imported only for an
  object of that framework (which means the framework is already imported).
* The MCP proxy (:mod:`scarguard.integrations.mcp_proxy`, needs the ``mcp`` extra) and the
  agent CLI hooks (:mod:`scarguard.integrations.claude_code`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any

from scarguard.errors import ConfigurationError

__all__ = ["FRAMEWORKS", "framework_of", "guard_tools"]

_OPENAI_AGENTS_TOOLS = (
    "FunctionTool",
    "CustomTool",
    "ShellTool",
    "LocalShellTool",
    "ApplyPatchTool",
    # hosted tools (and the computer tool): recognised, returned unchanged
    "WebSearchTool",
    "FileSearchTool",
    "HostedMCPTool",
    "CodeInterpreterTool",
    "ImageGenerationTool",
    "ToolSearchTool",
    "ProgrammaticToolCallingTool",
    "ComputerTool",
)
_TOOL_TYPES: tuple[tuple[str, str, str], ...] = (
    ("langchain_core.tools", "BaseTool", "langchain"),
    ("crewai.tools", "BaseTool", "crewai"),
    ("autogen_core.tools", "BaseTool", "autogen"),
    *(("agents.tool", name, "openai_agents") for name in _OPENAI_AGENTS_TOOLS),
    ("pydantic_ai.tools", "Tool", "pydantic_ai"),
    ("smolagents.tools", "Tool", "smolagents"),
)
FRAMEWORKS: tuple[str, ...] = tuple(sorted({name for _, _, name in _TOOL_TYPES}))
"""The frameworks :func:`guard_tools` knows, by their integration module's name."""


def framework_of(obj: object) -> str | None:
    """Return the integration module name for a framework tool object, else ``None``.

    Only the MRO of ``type(obj)`` is read; no framework is imported.
    """
    for cls in type(obj).__mro__:
        module = getattr(cls, "__module__", "") or ""
        for prefix, name, framework in _TOOL_TYPES:
            if cls.__name__ == name and (module == prefix or module.startswith(prefix + ".")):
                return framework
    return None


def _known(framework: str) -> str:
    if framework not in FRAMEWORKS:
        raise ConfigurationError(f"unknown framework {framework!r}; known: {', '.join(FRAMEWORKS)}")
    return framework


def _module(framework: str) -> Any:
    return importlib.import_module(f"scarguard.integrations.{_known(framework)}")


def guard_tools(
    tools: Iterable[Any],
    memory: Any,
    *,
    framework: str | None = None,
    targets: Any = None,
    handle_errors: bool = True,
) -> list[Any]:
    """Return guarded equivalents of a list of tools, in the same order.

    Each framework tool object becomes a guarded tool object of the same framework and
    kind, with the same name, description and argument schema; a refused call reaches the
    model through the framework's error channel. A plain function becomes that
    framework's tool object (built the way the framework's own decorator builds it), then
    guarded. The framework for plain functions is ``framework=``, or else the one of the
    tool objects in the list. A tool the framework's ``guard_agent`` leaves alone is
    returned unchanged: an OpenAI Agents hosted tool (web or file search, code
    interpreter, hosted MCP, a ``ShellTool`` in OpenAI's container...), which runs on
    OpenAI's side, or a ``ComputerTool`` (screen actions).

    Args:
        tools: Plain functions and framework tool objects, mixed.
        memory: The :class:`~scarguard.FailureMemory`.
        framework: The framework plain functions are for (``"langchain"``, ``"crewai"``,
            ``"autogen"``, ``"openai_agents"``, ``"pydantic_ai"``, ``"smolagents"``).
        targets: Argument names whose values are a call's targets, or a callable
            receiving the arguments (default: the memory's adapter extracts them).
        handle_errors: Send a tool's own exception to the model as the framework's error
            message instead of ending the run (it is recorded either way).

    Returns:
        The guarded tools.

    Raises:
        ConfigurationError: A plain function was given and no framework is known, the
            list mixes tool objects of several frameworks with plain functions, or an
            option is invalid.
        TypeError: An item is neither callable nor a known framework tool object.
    """
    items = list(tools)
    found = {f for f in map(framework_of, items) if f is not None}
    if framework is not None:
        _known(framework)
    plain = [t for t in items if framework_of(t) is None]
    for item in plain:
        if not callable(item):
            raise TypeError(f"guard_tools takes functions and framework tool objects, got {item!r}")
    target = framework
    if plain and target is None:
        if len(found) != 1:
            raise ConfigurationError(
                "guard_tools cannot tell which framework the plain functions are for: pass"
                f" framework= (one of {', '.join(FRAMEWORKS)})"
            )
        target = next(iter(found))
    options: dict[str, Any] = {"targets": targets, "handle_errors": handle_errors}
    guarded: list[Any] = []
    for item in items:
        kind = framework_of(item)
        module = _module(kind or target)  # type: ignore[arg-type]
        if kind is not None and not getattr(module, "guardable", _always)(item):
            guarded.append(item)  # a hosted tool: the framework's guard_agent leaves it alone
            continue
        obj = item if kind is not None else module.tool_from_function(item)
        guard: Callable[..., Any] = module.guard_tool
        guarded.append(guard(obj, memory, **options))
    return guarded


def _always(obj: object) -> bool:
    """Guard every tool object (a framework module without ``guardable`` guards them all)."""
    return True
