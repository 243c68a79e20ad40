"""LangChain create_agent with ScarguardMiddleware, offline: a fake chat model asks four
times for a file that does not exist; the tool runs once, then the calls are refused.

Run: python examples/frameworks/langchain_agent.py   (needs scarguard[langchain])
"""

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from scarguard import FailureMemory
from scarguard.integrations.langchain import ScarguardMiddleware


class ToolCallingFake(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):  # the fake model ignores the schemas
        return self


@tool
def read_file(path: str) -> str:
    """Read a text file from the workspace."""
    with open(path, encoding="utf-8") as handle:
        return handle.read()


call = {"name": "read_file", "args": {"path": "notes/missing.txt"}}
script = [AIMessage("", tool_calls=[{**call, "id": f"c{n}"}]) for n in range(4)]
model = ToolCallingFake(messages=iter([*script, AIMessage("I could not read the notes.")]))
memory = FailureMemory(":memory:")
agent = create_agent(model, tools=[read_file], middleware=[ScarguardMiddleware(memory)])

for message in agent.invoke({"messages": [("user", "Read my notes.")]})["messages"]:
    if isinstance(message, ToolMessage):
        print(f"tool [{message.status}]: {str(message.content).splitlines()[0]}")
    elif isinstance(message, AIMessage) and message.content:
        print(f"model: {message.content}")
