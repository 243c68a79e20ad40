"""OpenAI Agents SDK: the real Runner loop with a scripted Model, under the guard.

A scripted model asks four times in a row for a file that does not exist. Guarded, the tool
body runs once; the model gets the tool's error (its text, not the SDK's generic message)
once, then refusals, and the run completes.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, FunctionTool, Runner, function_tool

from helpers.agent_tools import MISSING, Counter, read_text
from helpers.openai_agents_model import ScriptedModel
from scarguard import FailureMemory, PromptGuard
from scarguard.integrations import guard_tools
from scarguard.integrations.openai_agents import guard_agent, guard_tool

pytestmark = pytest.mark.slow  # a framework's real agent loop


def read_file_script() -> ScriptedModel:
    """Four identical read_file calls for the missing file, then a final message."""
    return ScriptedModel([("read_file", {"path": MISSING})] * 4)


def toolkit_tool(counter: Counter, *, is_async: bool = False) -> FunctionTool:
    """Build a FunctionTool the way a toolkit does (the user did not write it)."""

    def read_file(path: str) -> str:
        """Read a text file from the workspace.

        Args:
            path: The file to read.
        """
        return read_text(counter, path)

    async def aread_file(path: str) -> str:
        """Read a text file from the workspace.

        Args:
            path: The file to read.
        """
        return read_text(counter, path)

    return function_tool(aread_file if is_async else read_file, name_override="read_file")


@pytest.fixture
def memory(
    sqlite_memory: FailureMemory, in_tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> FailureMemory:
    """The SQLite memory, the test run from ``tmp_path`` (the framework writes there)."""
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    return sqlite_memory


def run(agent: Agent[Any]) -> Any:
    return asyncio.run(Runner.run(agent, "read my notes"))


def assert_guarded_run(model: ScriptedModel, output: str, counter: Counter) -> None:
    assert output == "done"
    assert counter.runs == 1
    assert len(model.outputs) == 4
    assert "FileNotFoundError" in model.outputs[0]
    assert all("refused" in o for o in model.outputs[1:])


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_guard_agent(memory: FailureMemory, is_async: bool) -> None:
    """guard_agent(): body once, its error text once, then refusals; block in instructions."""
    counter, model = Counter(), read_file_script()
    agent = Agent(
        name="a",
        instructions="Be careful.",
        model=model,
        tools=[toolkit_tool(counter, is_async=is_async)],
    )
    result = run(guard_agent(agent, memory))
    assert_guarded_run(model, result.final_output, counter)
    assert model.instructions[0] == "Be careful."
    block = PromptGuard(memory).block()
    assert MISSING in block
    assert block in (model.instructions[-1] or "")
    assert "Be careful." in (model.instructions[-1] or "")


def test_guard_tools_on_tool_object(memory: FailureMemory) -> None:
    """guard_tools() on a FunctionTool gives the same run."""
    counter, model = Counter(), read_file_script()
    agent = Agent(name="a", model=model, tools=guard_tools([toolkit_tool(counter)], memory))
    assert_guarded_run(model, run(agent).final_output, counter)


def test_unguarded_hides_the_error(memory: FailureMemory) -> None:
    """Without the guard the body runs four times and the model never sees the error's text."""
    counter, model = Counter(), read_file_script()
    run(Agent(name="a", model=model, tools=[toolkit_tool(counter)]))
    assert counter.runs == 4
    assert not any("FileNotFoundError" in o for o in model.outputs)


def test_handle_errors_off_keeps_the_sdk_formatter(memory: FailureMemory) -> None:
    """handle_errors=False: the SDK's own failure text for the error, refusals still refused."""
    counter, model = Counter(), read_file_script()
    tool = guard_tool(toolkit_tool(counter), memory, handle_errors=False)
    run(Agent(name="a", model=model, tools=[tool]))
    assert counter.runs == 1
    assert "An error occurred while running the tool" in model.outputs[0]
    assert all("refused" in o for o in model.outputs[1:])


def test_schema_identical(memory: FailureMemory) -> None:
    """The model sees the same name, description and JSON schema."""
    tool = toolkit_tool(Counter())
    guarded = guard_tool(tool, memory)
    assert (guarded.name, guarded.description, guarded.params_json_schema) == (
        tool.name,
        tool.description,
        tool.params_json_schema,
    )
    assert guarded.strict_json_schema == tool.strict_json_schema
