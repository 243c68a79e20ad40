"""OpenAI Agents SDK with guard_agent, offline: a scripted Model asks four times for a file
that does not exist; the tool runs once, then the calls are refused.

Run: python examples/frameworks/openai_agents_agent.py   (needs scarguard[openai-agents])
"""

import asyncio
import json

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from scarguard import FailureMemory
from scarguard.integrations.openai_agents import guard_agent


class Scripted(Model):
    turn = 0

    async def get_response(self, system_instructions, input, *args, **kwargs):
        for item in input if isinstance(input, list) else []:
            last = isinstance(item, dict) and item.get("call_id") == f"c{self.turn}"
            if last and item.get("type") == "function_call_output":
                print(f"tool: {str(item['output']).splitlines()[0]}")
        self.turn += 1
        if self.turn <= 4:
            arguments = json.dumps({"path": "notes/missing.txt"})
            item = ResponseFunctionToolCall(
                type="function_call", call_id=f"c{self.turn}", name="read_file", arguments=arguments
            )
        else:
            text = ResponseOutputText(
                type="output_text", text="I could not read the notes.", annotations=[]
            )
            item = ResponseOutputMessage(
                id="m", type="message", role="assistant", status="completed", content=[text]
            )
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


@function_tool
def read_file(path: str) -> str:
    """Read a text file from the workspace."""
    with open(path, encoding="utf-8") as handle:
        return handle.read()


set_tracing_disabled(True)
memory = FailureMemory(":memory:")
agent = guard_agent(Agent(name="reader", model=Scripted(), tools=[read_file]), memory)
print(f"model: {asyncio.run(Runner.run(agent, 'Read my notes.')).final_output}")
