"""smolagents ToolCallingAgent with guard_agent, offline: a scripted Model asks four times
for the built-in Python interpreter to run code that does not parse; it runs once, then
the calls are refused.

Run: python examples/frameworks/smolagents_agent.py   (needs scarguard[smolagents])
"""

from smolagents import ChatMessage, Model, ToolCallingAgent
from smolagents.default_tools import PythonInterpreterTool
from smolagents.models import ChatMessageToolCall, ChatMessageToolCallFunction

from scarguard import FailureMemory
from scarguard.integrations.smolagents import guard_agent


def call(name, arguments):
    function = ChatMessageToolCallFunction(name=name, arguments=arguments)
    return ChatMessage(
        role="assistant",
        content="",
        tool_calls=[ChatMessageToolCall(function=function, id=name, type="function")],
    )


class Scripted(Model):
    replies = [call("python_interpreter", {"code": "def ("})] * 4 + [
        call("final_answer", {"answer": "The code does not parse."})
    ]

    def generate(self, messages, *args, **kwargs):
        return self.replies.pop(0)


memory = FailureMemory(":memory:")
agent = guard_agent(
    ToolCallingAgent(
        tools=[PythonInterpreterTool()], model=Scripted(model_id="scripted"), verbosity_level=-1
    ),
    memory,
)
answer = agent.run("Run my code.", max_steps=8)
for step in agent.memory.steps:
    if getattr(step, "error", None):
        print(f"tool error: {str(step.error).splitlines()[0]}")
print(f"model: {answer}")
