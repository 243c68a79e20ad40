"""Recognise agent-framework objects without importing any framework.

Two jobs for :func:`~scarguard.guarded_tool`:

* refuse a framework *tool object* (a LangChain ``StructuredTool``, a pydantic-ai ``Tool``...):
  the decorator guards plain functions (under the framework's decorator), and
  :func:`scarguard.integrations.guard_tools` guards tool objects;
* recognise the context parameters frameworks inject into a tool function (pydantic-ai's
  ``ctx: RunContext``, LangChain's ``run_manager``...), which are not part of what the agent
  chose and so are left out of the call's arguments and fingerprint.

Types are recognised by the ``(module, name)`` pairs of their MRO, so nothing is imported
and a framework that is not installed costs nothing.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

__all__ = [
    "CONTEXT_PARAM_NAMES",
    "CONTEXT_TYPE_NAMES",
    "FRAMEWORK_TOOL_TYPES",
    "context_params",
    "framework_tool_name",
]

FRAMEWORK_TOOL_TYPES: tuple[tuple[str, str], ...] = (
    ("langchain_core.tools", "BaseTool"),  # @tool, StructuredTool, Tool
    ("langchain.tools", "BaseTool"),
    ("crewai.tools", "BaseTool"),  # @tool, BaseTool subclasses
    ("smolagents", "Tool"),  # @tool, Tool subclasses
    ("autogen_core.tools", "BaseTool"),  # FunctionTool
    ("autogen_core.tools", "Tool"),
    ("agents.tool", "FunctionTool"),  # OpenAI Agents SDK @function_tool
    ("pydantic_ai.tools", "Tool"),  # Tool(func), @agent.tool builds these
    ("llama_index.core.tools", "BaseTool"),  # FunctionTool
    ("haystack.tools", "Tool"),
    ("google.adk.tools", "BaseTool"),
)
"""``(module prefix, class name)`` of framework tool classes (matched anywhere in the MRO)."""

CONTEXT_TYPE_NAMES: tuple[str, ...] = (
    "RunContext",  # pydantic-ai
    "RunContextWrapper",  # OpenAI Agents SDK
    "ToolContext",  # OpenAI Agents SDK, Google ADK
    "CallbackManagerForToolRun",  # LangChain
    "AsyncCallbackManagerForToolRun",  # LangChain
    "RunnableConfig",  # LangChain (``config: RunnableConfig``)
    "InjectedToolArg",  # LangChain (``Annotated[..., InjectedToolArg]`` and friends)
    "InjectedState",
    "InjectedStore",
    "InjectedToolCallId",
    "ToolRuntime",  # LangChain 1.x
    "CancellationToken",  # AutoGen
)
"""Annotation names of parameters a framework injects; such parameters are left out of args."""

CONTEXT_PARAM_NAMES: tuple[str, ...] = ("ctx", "context", "run_manager", "callbacks")
"""Parameter names left out of args (``ctx``/``context`` only when not plain data).

A ``context: int = 3`` (lines of context, say) is agent data and stays; an unannotated
``ctx`` or a ``context: Context`` is treated as injected. Anything else is left out with
``guarded_tool(ignore_args=...)``.
"""
_AMBIGUOUS_NAMES = ("ctx", "context")

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLAIN_TOKENS = frozenset(
    {
        "str",
        "int",
        "float",
        "bool",
        "bytes",
        "list",
        "dict",
        "tuple",
        "set",
        "frozenset",
        "None",
        "NoneType",
        "Optional",
        "Union",
        "Any",
        "Literal",
        "typing",
        "builtins",
        "class",
        "Sequence",
        "Mapping",
        "List",
        "Dict",
        "Tuple",
    }
)
_PLAIN_DEFAULTS = (str, int, float, bool, bytes)


def _tokens(annotation: Any) -> set[str]:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return set(_TOKEN.findall(text))


def _is_context(param: inspect.Parameter) -> bool:
    annotation = param.annotation
    if annotation is not inspect.Parameter.empty:
        tokens = _tokens(annotation)
        if tokens.intersection(CONTEXT_TYPE_NAMES):
            return True
    if param.name not in CONTEXT_PARAM_NAMES:
        return False
    if param.name not in _AMBIGUOUS_NAMES:
        return True
    if annotation is not inspect.Parameter.empty and _tokens(annotation) <= _PLAIN_TOKENS:
        return False
    return not isinstance(param.default, _PLAIN_DEFAULTS)


def context_params(signature: inspect.Signature) -> tuple[str, ...]:
    """Return the names of the parameters of ``signature`` a framework injects."""
    return tuple(
        p.name
        for p in signature.parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and _is_context(p)
    )


def framework_tool_name(obj: object) -> str | None:
    """Return ``module.Class`` of ``obj`` if it is a framework tool object, else ``None``.

    Only the MRO of ``type(obj)`` is read; no framework is imported.
    """
    for cls in type(obj).__mro__:
        module = getattr(cls, "__module__", "") or ""
        for prefix, name in FRAMEWORK_TOOL_TYPES:
            if cls.__name__ == name and (module == prefix or module.startswith(prefix + ".")):
                return f"{type(obj).__module__}.{type(obj).__qualname__}"
    return None
