"""AutoGen AssistantAgent with GuardedWorkbench, offline: a ReplayChatCompletionClient asks
four times for a file that does not exist; the tool runs once, then the calls are refused.

Run: python examples/frameworks/autogen_agent.py   (needs scarguard[autogen])
"""

import asyncio
import json

from autogen_agentchat.agents import AssistantAgent
from autogen_core import FunctionCall
from autogen_core.models import CreateResult, RequestUsage
from autogen_core.tools import FunctionTool, StaticWorkbench
from autogen_ext.models.replay import ReplayChatCompletionClient

from scarguard import FailureMemory
from scarguard.integrations.autogen import GuardedWorkbench


async def read_file(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


call = FunctionCall(id="c", name="read_file", arguments=json.dumps({"path": "notes/missing.txt"}))
usage = RequestUsage(prompt_tokens=0, completion_tokens=0)
script = [
    CreateResult(finish_reason="function_calls", content=[call], usage=usage, cached=False)
] * 4
info = {
    "vision": False,
    "function_calling": True,
    "json_output": False,
    "family": "unknown",
    "structured_output": False,
}
client = ReplayChatCompletionClient([*script, "I could not read the notes."], model_info=info)
memory = FailureMemory(":memory:")
tools = StaticWorkbench(
    [FunctionTool(read_file, description="Read a text file from the workspace.")]
)
agent = AssistantAgent(
    "reader", model_client=client, max_tool_iterations=5, workbench=GuardedWorkbench(tools, memory)
)

for message in asyncio.run(agent.run(task="Read my notes.")).messages:
    for result in (
        getattr(message, "content", []) if message.type == "ToolCallExecutionEvent" else []
    ):
        print(f"tool [is_error={result.is_error}]: {result.content.splitlines()[0]}")
    if message.type == "TextMessage" and message.source == "reader":
        print(f"model: {message.content}")
