"""LangChain / LangGraph: the real agent loops (create_agent, ToolNode) under the guard.

A scripted chat model asks four times in a row for the same file, which does not exist.
Guarded, the tool body runs once; the model gets the tool's error once, then refusals, all
as ``ToolMessage(status="error")``, and the run completes. Unguarded, the run crashes on
the first exception (LangGraph's default ``ToolNode`` re-raises it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")
pytest.importorskip("langgraph")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from helpers.agent_tools import MISSING, Counter, read_text
from scarguard import FailureMemory, PromptGuard
from scarguard.integrations import guard_tools
from scarguard.integrations.langchain import ScarguardMiddleware, guard_tool

pytestmark = pytest.mark.slow  # a framework's real agent loop


class ScriptedChat(GenericFakeChatModel):
    """A fake chat model that binds tools and keeps what it was sent."""

    seen: list[list[BaseMessage]] = []  # noqa: RUF012 (a pydantic field: copied per instance)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def scripted(calls: int = 4) -> ScriptedChat:
    replies = [
        AIMessage(
            content="",
            tool_calls=[{"name": "read_file", "args": {"path": MISSING}, "id": f"call-{n}"}],
        )
        for n in range(calls)
    ]
    return ScriptedChat(messages=iter([*replies, AIMessage(content="done")]), seen=[])


def toolkit_tool(counter: Counter, *, is_async: bool = False) -> BaseTool:
    """Build a tool the way a toolkit does (the user did not write it)."""

    def read_file(path: str) -> str:
        return read_text(counter, path)

    async def aread_file(path: str) -> str:
        return read_text(counter, path)

    return StructuredTool.from_function(
        func=None if is_async else read_file,
        coroutine=aread_file if is_async else None,
        name="read_file",
        description="Read a text file from the workspace.",
    )


@pytest.fixture
def memory(sqlite_memory: FailureMemory, in_tmp_path: Path) -> FailureMemory:
    """The SQLite memory, the test run from ``tmp_path`` (the framework writes there)."""
    return sqlite_memory


def tool_messages(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def assert_guarded_run(messages: Sequence[BaseMessage], counter: Counter) -> None:
    replies = tool_messages(messages)
    assert counter.runs == 1
    assert len(replies) == 4
    assert all(r.status == "error" for r in replies)
    assert "FileNotFoundError" in str(replies[0].content)
    assert all("refused" in str(r.content) for r in replies[1:])
    assert isinstance(messages[-1], AIMessage) and messages[-1].content == "done"


def test_create_agent_with_guarded_toolkit_tool(memory: FailureMemory) -> None:
    """create_agent over guard_tools(): the body runs once, then error refusals; run ends."""
    counter = Counter()
    agent = create_agent(scripted(), tools=guard_tools([toolkit_tool(counter)], memory))
    result = agent.invoke({"messages": [("user", "read my notes")]})
    assert_guarded_run(result["messages"], counter)


def test_create_agent_with_middleware(memory: FailureMemory) -> None:
    """ScarguardMiddleware guards every tool call and puts the block into the system message."""
    counter = Counter()
    model = scripted()
    agent = create_agent(
        model, tools=[toolkit_tool(counter)], middleware=[ScarguardMiddleware(memory)]
    )
    result = agent.invoke({"messages": [("user", "read my notes")]})
    assert_guarded_run(result["messages"], counter)
    last_system = model.seen[-1][0]
    assert last_system.type == "system"
    block = PromptGuard(memory).block()
    assert MISSING in block
    assert block in str(last_system.content)
    assert model.seen[0][0].type != "system"  # nothing known yet: no block, no empty message


def test_create_agent_async_tool_with_middleware(memory: FailureMemory) -> None:
    """The async path (ainvoke, awrap_tool_call, a coroutine tool) is guarded the same way."""
    counter = Counter()
    agent = create_agent(
        scripted(),
        tools=[toolkit_tool(counter, is_async=True)],
        middleware=[ScarguardMiddleware(memory)],
    )
    result = asyncio.run(agent.ainvoke({"messages": [("user", "read my notes")]}))
    assert_guarded_run(result["messages"], counter)


def test_create_agent_async_guarded_tool(memory: FailureMemory) -> None:
    """guard_tool() on a coroutine tool, run by ainvoke."""
    counter = Counter()
    tool = guard_tool(toolkit_tool(counter, is_async=True), memory)
    agent = create_agent(scripted(), tools=[tool])
    result = asyncio.run(agent.ainvoke({"messages": [("user", "read my notes")]}))
    assert_guarded_run(result["messages"], counter)


def _graph(model: ScriptedChat, node: ToolNode) -> Any:
    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", call_model)
    graph.add_node("tools", node)
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition, ["tools", END])
    graph.add_edge("tools", "model")
    return graph.compile()


def test_tool_node_wrap_tool_call(memory: FailureMemory) -> None:
    """A hand-built LangGraph graph: ToolNode(wrap_tool_call=..., awrap_tool_call=...)."""
    counter = Counter()
    guard = ScarguardMiddleware(memory)
    node = ToolNode(
        [toolkit_tool(counter)],
        wrap_tool_call=guard.wrap_tool_call,
        awrap_tool_call=guard.awrap_tool_call,
    )
    result = _graph(scripted(), node).invoke({"messages": [("user", "read my notes")]})
    assert_guarded_run(result["messages"], counter)


def test_unguarded_tool_node_crashes(memory: FailureMemory) -> None:
    """Unguarded, the default ToolNode re-raises the tool's exception: the run crashes."""
    counter = Counter()
    graph = _graph(scripted(), ToolNode([toolkit_tool(counter)]))
    with pytest.raises(FileNotFoundError):
        graph.invoke({"messages": [("user", "read my notes")]})


def test_handle_errors_off_propagates(memory: FailureMemory) -> None:
    """handle_errors=False lets the tool's own exception propagate unchanged (still recorded)."""
    counter = Counter()
    tool = guard_tool(toolkit_tool(counter), memory, handle_errors=False)
    with pytest.raises(FileNotFoundError):
        tool.invoke({"path": MISSING})
    assert memory.recent_failures()[0].tool == "read_file"
    refusal = tool.invoke(
        {"type": "tool_call", "name": "read_file", "args": {"path": MISSING}, "id": "c"}
    )
    assert refusal.status == "error" and "refused" in refusal.content
    assert counter.runs == 1


def test_schema_identical(memory: FailureMemory) -> None:
    """The model sees the same tool schema with and without the guard."""
    tool = toolkit_tool(Counter())
    guarded = guard_tool(tool, memory)
    assert type(guarded) is type(tool)
    assert convert_to_openai_tool(guarded) == convert_to_openai_tool(tool)
    assert guarded.name == tool.name and guarded.description == tool.description


def test_guarding_twice_is_one_guard(memory: FailureMemory) -> None:
    """A tool guarded by guard_tool and run under the middleware is checked and recorded once."""
    counter = Counter()
    agent = create_agent(
        scripted(),
        tools=[guard_tool(toolkit_tool(counter), memory)],
        middleware=[ScarguardMiddleware(memory)],
    )
    agent.invoke({"messages": [("user", "read my notes")]})
    assert counter.runs == 1
    assert len(memory.recent_failures(limit=50)) == 1
