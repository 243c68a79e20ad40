"""pydantic-ai with ScarguardCapability, offline: a FunctionModel asks four times for a
file that does not exist; the tool runs once, then the calls are refused (ToolFailed).

Run: python examples/frameworks/pydantic_ai_agent.py   (needs scarguard[pydantic-ai])
"""

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel

from scarguard import FailureMemory
from scarguard.integrations.pydantic_ai import ScarguardCapability


def read_file(path: str) -> str:
    """Read a text file from the workspace."""
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def scripted(messages, info):
    for part in messages[-1].parts:
        if isinstance(part, ToolReturnPart):
            print(f"tool [{part.outcome}]: {str(part.content).splitlines()[0]}")
    if len(messages) < 9:  # four calls, each a response and a request
        return ModelResponse(parts=[ToolCallPart("read_file", {"path": "notes/missing.txt"})])
    return ModelResponse(parts=[TextPart("I could not read the notes.")])


memory = FailureMemory(":memory:")
agent = Agent(
    FunctionModel(scripted), tools=[read_file], capabilities=[ScarguardCapability(memory)]
)
print(f"model: {agent.run_sync('Read my notes.').output}")
