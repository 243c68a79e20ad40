"""CrewAI with guard_agent, offline: a BaseLLM subclass asks four times (native function
calling) for a file that does not exist; the tool runs once, then the calls are refused.

Run: python examples/frameworks/crewai_agent.py   (needs scarguard[crewai])
"""

import json
import os

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from crewai.tools import tool

from scarguard import FailureMemory
from scarguard.integrations.crewai import guard_agent


class Scripted(BaseLLM):
    turn: int = 0

    def supports_function_calling(self):
        return True

    def call(self, messages, tools=None, *args, **kwargs):
        if self.turn and messages[-1].get("role") == "tool":
            print(f"tool: {str(messages[-1]['content']).splitlines()[0]}")
        self.turn += 1
        if self.turn > 4:
            return "I could not read the notes."
        arguments = json.dumps({"path": "notes/missing.txt"})
        return [
            {
                "id": f"c{self.turn}",
                "type": "function",
                "function": {"name": "read_file", "arguments": arguments},
            }
        ]


@tool("read_file")
def read_file(path: str) -> str:
    """Read a text file from the workspace."""
    with open(path, encoding="utf-8") as handle:
        return handle.read()


memory = FailureMemory(":memory:")
agent = Agent(
    role="reader",
    goal="read notes",
    backstory="careful",
    llm=Scripted(model="scripted"),
    tools=[read_file],
)
hooks = guard_agent(agent, memory)
task = Task(description="Read my notes.", expected_output="the notes", agent=agent)
print(f"model: {Crew(agents=[agent], tasks=[task]).kickoff()}")
hooks.remove()
