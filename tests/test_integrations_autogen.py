"""AutoGen: AssistantAgent's real tool loop with ReplayChatCompletionClient, under the guard.

The replayed model asks four times in a row for a file that does not exist. Guarded, the
tool body runs once; the model gets the tool's error once, then refusals, all flagged
``is_error=True``, and the run completes.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("autogen_agentchat")
pytest.importorskip("autogen_ext.models.replay")

from autogen_agentchat.agents import AssistantAgent
from autogen_core import FunctionCall
from autogen_core.models import (
    CreateResult,
    FunctionExecutionResultMessage,
    RequestUsage,
    SystemMessage,
)
from autogen_core.tools import FunctionTool, StaticWorkbench
from autogen_ext.models.replay import ReplayChatCompletionClient

from helpers.agent_tools import MISSING, Counter, read_text
from scarguard import FailureMemory, PromptGuard
from scarguard.integrations import guard_tools
from scarguard.integrations.autogen import GuardedModelClient, GuardedWorkbench, guard_tool

pytestmark = pytest.mark.slow  # a framework's real agent loop

MODEL_INFO: Any = {
    "vision": False,
    "function_calling": True,
    "json_output": False,
    "family": "unknown",
    "structured_output": False,
}


def replay() -> ReplayChatCompletionClient:
    calls = [
        CreateResult(
            finish_reason="function_calls",
            content=[
                FunctionCall(id=f"c{n}", name="read_file", arguments=json.dumps({"path": MISSING}))
            ],
            usage=RequestUsage(prompt_tokens=0, completion_tokens=0),
            cached=False,
        )
        for n in range(4)
    ]
    return ReplayChatCompletionClient([*calls, "done"], model_info=MODEL_INFO)


def toolkit_tool(counter: Counter) -> FunctionTool:
    """Build a FunctionTool the way a toolkit does (the user did not write it)."""

    async def read_file(path: str) -> str:
        return read_text(counter, path)

    return FunctionTool(
        read_file, description="Read a text file from the workspace.", name="read_file"
    )


@pytest.fixture
def memory(sqlite_memory: FailureMemory, in_tmp_path: Path) -> FailureMemory:
    """The SQLite memory, the test run from ``tmp_path`` (the framework writes there)."""
    return sqlite_memory


def results(agent_messages: Any) -> list[Any]:
    return [
        r
        for m in agent_messages
        if isinstance(m, FunctionExecutionResultMessage)
        for r in m.content
    ]


def run(agent: AssistantAgent) -> Any:
    return asyncio.run(agent.run(task="read my notes"))


def tool_results(client: ReplayChatCompletionClient) -> list[Any]:
    return results(client.create_calls[-1]["messages"])


def assert_guarded_run(client: ReplayChatCompletionClient, outcome: Any, counter: Counter) -> None:
    replies = tool_results(client)
    assert counter.runs == 1
    assert len(replies) == 4
    assert all(r.is_error for r in replies)
    assert "No such file" in replies[0].content
    assert all("refused" in r.content for r in replies[1:])
    assert outcome.messages[-1].content == "done"


def test_guarded_workbench(memory: FailureMemory) -> None:
    """GuardedWorkbench over StaticWorkbench: body once, then is_error refusals; run ends."""
    counter, client = Counter(), replay()
    agent = AssistantAgent(
        "a",
        model_client=client,
        max_tool_iterations=6,
        workbench=GuardedWorkbench(StaticWorkbench([toolkit_tool(counter)]), memory),
    )
    assert_guarded_run(client, run(agent), counter)


def test_guard_tools_on_tool_object(memory: FailureMemory) -> None:
    """guard_tools() on a FunctionTool, given to AssistantAgent(tools=...)."""
    counter, client = Counter(), replay()
    agent = AssistantAgent(
        "a",
        model_client=client,
        max_tool_iterations=6,
        tools=guard_tools([toolkit_tool(counter)], memory),
    )
    assert_guarded_run(client, run(agent), counter)


def test_unguarded_reruns_the_body(memory: FailureMemory) -> None:
    """Without the guard, the failing body runs every time the model asks."""
    counter, client = Counter(), replay()
    run(
        AssistantAgent(
            "a", model_client=client, max_tool_iterations=6, tools=[toolkit_tool(counter)]
        )
    )
    assert counter.runs == 4


def test_model_client_carries_the_block(memory: FailureMemory) -> None:
    """GuardedModelClient puts the guard block into the system message of each call."""
    counter, client = Counter(), replay()
    agent = AssistantAgent(
        "a",
        model_client=GuardedModelClient(client, memory),
        max_tool_iterations=6,
        system_message="Be careful.",
        tools=[guard_tool(toolkit_tool(counter), memory)],
    )
    run(agent)
    first, last = client.create_calls[0]["messages"][0], client.create_calls[-1]["messages"][0]
    assert isinstance(last, SystemMessage)
    assert first.content == "Be careful."
    block = PromptGuard(memory).block()
    assert MISSING in block
    assert block in last.content and "Be careful." in last.content


def test_schema_identical(memory: FailureMemory) -> None:
    """The model sees the same tool schema with and without the guard."""
    tool = toolkit_tool(Counter())
    assert guard_tool(tool, memory).schema == tool.schema
