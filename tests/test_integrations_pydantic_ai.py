"""pydantic-ai: the real agent loop (FunctionModel) under ScarguardCapability and guard_tool.

A scripted model asks four times in a row for a file that does not exist. Guarded, the tool
body runs once; the model gets the tool's error once, then refusals, all as failed tool
results, and the run completes. Unguarded, the run crashes on the tool's first exception.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent, Tool
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from helpers.agent_tools import MISSING, Counter, read_text
from scarguard import FailureMemory, PromptGuard
from scarguard.integrations import guard_tools
from scarguard.integrations.pydantic_ai import ScarguardCapability, guard_tool

pytestmark = pytest.mark.slow  # a framework's real agent loop


class Script:
    """Four identical read_file calls, then a final answer; keeps what the model was sent."""

    def __init__(self) -> None:
        self.turn = 0
        self.results: list[Any] = []
        self.instructions: list[str | None] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.instructions.append(info.instructions)
        self.results.extend(
            part for part in messages[-1].parts if getattr(part, "tool_name", None) == "read_file"
        )
        self.turn += 1
        if self.turn <= 4:
            call = ToolCallPart("read_file", {"path": MISSING}, tool_call_id=f"c{self.turn}")
            return ModelResponse(parts=[call])
        return ModelResponse(parts=[TextPart("done")])


def toolkit_tool(counter: Counter, *, is_async: bool = False) -> Tool[Any]:
    """Build a Tool the way a toolkit does (the user did not write it)."""

    def read_file(path: str) -> str:
        """Read a text file from the workspace."""
        return read_text(counter, path)

    async def aread_file(path: str) -> str:
        """Read a text file from the workspace."""
        return read_text(counter, path)

    return Tool(aread_file if is_async else read_file, name="read_file")


@pytest.fixture
def memory(sqlite_memory: FailureMemory, in_tmp_path: Path) -> FailureMemory:
    """The SQLite memory, the test run from ``tmp_path`` (the framework writes there)."""
    return sqlite_memory


def assert_guarded_run(script: Script, output: str, counter: Counter) -> None:
    assert output == "done"
    assert counter.runs == 1
    assert len(script.results) == 4
    assert all(getattr(r, "outcome", "retried") == "failed" for r in script.results)
    assert "FileNotFoundError" in str(script.results[0].content)
    assert all("refused" in str(r.content) for r in script.results[1:])


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_capability_guards_every_call(memory: FailureMemory, is_async: bool) -> None:
    """ScarguardCapability: body once, the error once, then refusals as failed results."""
    counter, script = Counter(), Script()
    agent = Agent(
        FunctionModel(script),
        tools=[toolkit_tool(counter, is_async=is_async)],
        capabilities=[ScarguardCapability(memory)],
    )
    result = asyncio.run(agent.run("read my notes"))
    assert_guarded_run(script, result.output, counter)
    block = PromptGuard(memory).block()
    assert MISSING in block
    assert block in (script.instructions[-1] or "")
    assert not script.instructions[0]  # nothing known yet: no block


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_guard_tools_on_tool_object(memory: FailureMemory, is_async: bool) -> None:
    """guard_tools() on a Tool object: the same run, without the capability."""
    counter, script = Counter(), Script()
    tools = guard_tools([toolkit_tool(counter, is_async=is_async)], memory)
    result = Agent(FunctionModel(script), tools=tools).run_sync("read my notes")
    assert_guarded_run(script, result.output, counter)


def test_unguarded_run_crashes() -> None:
    """Without the guard the tool's first exception ends the run (why handle_errors exists)."""
    counter = Counter()
    agent = Agent(FunctionModel(Script()), tools=[toolkit_tool(counter)])
    with pytest.raises(FileNotFoundError):
        agent.run_sync("read my notes")


def test_capability_and_guarded_tool_guard_once(memory: FailureMemory) -> None:
    """A guarded Tool under the capability is checked and recorded once per call."""
    counter, script = Counter(), Script()
    agent = Agent(
        FunctionModel(script),
        tools=[guard_tool(toolkit_tool(counter), memory)],
        capabilities=[ScarguardCapability(memory)],
    )
    agent.run_sync("read my notes")
    assert counter.runs == 1
    assert len(memory.recent_failures(limit=50)) == 1


def test_handle_errors_off_propagates(memory: FailureMemory) -> None:
    """handle_errors=False lets the tool's own exception end the run, recorded."""
    agent = Agent(
        FunctionModel(Script()),
        tools=[toolkit_tool(Counter())],
        capabilities=[ScarguardCapability(memory, handle_errors=False)],
    )
    with pytest.raises(FileNotFoundError):
        agent.run_sync("read my notes")
    assert memory.recent_failures()[0].tool == "read_file"


def test_schema_identical(memory: FailureMemory) -> None:
    """The model sees the same tool definition with and without the guard."""
    tool = toolkit_tool(Counter())
    assert guard_tool(tool, memory).tool_def == tool.tool_def
