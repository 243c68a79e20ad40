"""smolagents: ToolCallingAgent and CodeAgent driven by a scripted Model, under the guard.

The scripted model makes the same failing call four times in a row: the built-in
``PythonInterpreterTool`` with code that does not parse (ToolCallingAgent), or a tool built
by another module reading a file that does not exist (CodeAgent). Guarded, the body runs
once; the model sees the tool's error once, then refusals, as step errors; the run ends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("smolagents")

from smolagents import ChatMessage, CodeAgent, Model, Tool, ToolCallingAgent, tool
from smolagents.default_tools import PythonInterpreterTool
from smolagents.models import ChatMessageToolCall, ChatMessageToolCallFunction

from helpers.agent_tools import MISSING, Counter, read_text
from scarguard import FailureMemory, PromptGuard
from scarguard.integrations import guard_tools
from scarguard.integrations.smolagents import guard_agent, guard_tool

pytestmark = pytest.mark.slow  # a framework's real agent loop

BAD_CODE = "def ("


class ScriptedModel(Model):
    """Replays a list of assistant messages; keeps what it was sent."""

    def __init__(self, replies: list[ChatMessage]) -> None:
        super().__init__(model_id="scripted")
        self.replies = replies
        self.seen: list[list[Any]] = []

    def generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> ChatMessage:
        self.seen.append(list(messages))
        return self.replies[len(self.seen) - 1]


def tool_call(name: str, arguments: dict[str, Any], n: int) -> ChatMessage:
    call = ChatMessageToolCall(
        function=ChatMessageToolCallFunction(name=name, arguments=arguments),
        id=f"c{n}",
        type="function",
    )
    return ChatMessage(role="assistant", content="", tool_calls=[call])


def calling_script() -> ScriptedModel:
    calls = [tool_call("python_interpreter", {"code": BAD_CODE}, n) for n in range(4)]
    return ScriptedModel([*calls, tool_call("final_answer", {"answer": "done"}, 9)])


def code_script() -> ScriptedModel:
    step = ChatMessage(
        role="assistant", content=f'Thought: read.\n<code>\nread_file(path="{MISSING}")\n</code>'
    )
    final = ChatMessage(
        role="assistant", content='Thought: stop.\n<code>\nfinal_answer("done")\n</code>'
    )
    return ScriptedModel([step, step, step, step, final])


def interpreter(counter: Counter) -> Tool:
    """The built-in Python interpreter tool, with a counter on its evaluator."""
    built = PythonInterpreterTool()
    evaluate = built.python_evaluator

    def counting(*args: Any, **kwargs: Any) -> Any:
        counter.runs += 1
        return evaluate(*args, **kwargs)

    built.python_evaluator = counting
    return built


def toolkit_tool(counter: Counter) -> Tool:
    """Build a Tool the way a toolkit does (the user did not write it)."""

    @tool
    def read_file(path: str) -> str:
        """Read a text file from the workspace.

        Args:
            path: The file to read.
        """
        return read_text(counter, path)

    return read_file


@pytest.fixture
def memory(sqlite_memory: FailureMemory, in_tmp_path: Path) -> FailureMemory:
    """The SQLite memory, the test run from ``tmp_path`` (the framework writes there)."""
    return sqlite_memory


def errors(agent: Any) -> list[str]:
    return [str(step.error) for step in agent.memory.steps if getattr(step, "error", None)]


def assert_guarded_run(agent: Any, output: Any, counter: Counter, first_error: str) -> None:
    seen = errors(agent)
    assert output == "done"
    assert counter.runs == 1
    assert len(seen) == 4
    assert first_error in seen[0]
    assert all("refused" in e for e in seen[1:])


def test_tool_calling_agent_builtin_tool(memory: FailureMemory) -> None:
    """guard_agent(ToolCallingAgent) with the built-in interpreter: body once, then refusals."""
    counter, model = Counter(), calling_script()
    agent = guard_agent(
        ToolCallingAgent(tools=[interpreter(counter)], model=model, verbosity_level=-1), memory
    )
    output = agent.run("compute", max_steps=8)
    assert_guarded_run(agent, output, counter, "SyntaxError")
    system = model.seen[-1][0]
    block = PromptGuard(memory).block()
    assert "python_interpreter" in block
    assert block in "".join(part["text"] for part in system.content)


def test_tool_calling_agent_guarded_tool(memory: FailureMemory) -> None:
    """guard_tools() on the built-in interpreter tool, without guard_agent."""
    counter = Counter()
    agent = ToolCallingAgent(
        tools=guard_tools([interpreter(counter)], memory),
        model=calling_script(),
        verbosity_level=-1,
    )
    assert_guarded_run(agent, agent.run("compute", max_steps=8), counter, "SyntaxError")


def test_code_agent(memory: FailureMemory) -> None:
    """guard_agent(CodeAgent): the code's tool calls are guarded per tool."""
    counter = Counter()
    agent = guard_agent(
        CodeAgent(tools=[toolkit_tool(counter)], model=code_script(), verbosity_level=-1), memory
    )
    assert_guarded_run(agent, agent.run("read my notes", max_steps=8), counter, "No such file")


def test_unguarded_reruns_the_body() -> None:
    """Without the guard, the failing body runs every time the model asks."""
    counter = Counter()
    ToolCallingAgent(tools=[interpreter(counter)], model=calling_script(), verbosity_level=-1).run(
        "compute", max_steps=8
    )
    assert counter.runs == 4


def test_schema_identical(memory: FailureMemory) -> None:
    """The model sees the same tool description and inputs with and without the guard."""
    for original in (interpreter(Counter()), toolkit_tool(Counter())):
        guarded = guard_tool(original, memory)
        assert guarded.to_tool_calling_prompt() == original.to_tool_calling_prompt()
        assert guarded.to_code_prompt() == original.to_code_prompt()
        assert (guarded.name, guarded.inputs, guarded.output_type) == (
            original.name,
            original.inputs,
            original.output_type,
        )
