"""CrewAI: a real Crew run driven by a BaseLLM subclass, in native and ReAct modes.

The scripted LLM asks four times in a row for a file that does not exist. Guarded, the tool
body runs once; the model sees the tool's error once, then refusals, and the crew finishes.
CrewAI pins an older openai than openai-agents accepts, so this module runs in an
environment of its own (see .ci/run); elsewhere it is skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("crewai")

from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from crewai.tools import BaseTool, tool

from helpers.agent_tools import MISSING, Counter, read_text
from scarguard import FailureMemory, PromptGuard
from scarguard.integrations import guard_tools
from scarguard.integrations.crewai import guard_agent, guard_tool

pytestmark = pytest.mark.slow  # a framework's real agent loop


class ScriptedLLM(BaseLLM):
    """Four identical read_file calls, then a final answer; keeps what it was sent."""

    native: bool = True
    turn: int = 0
    seen: list[Any] = []  # noqa: RUF012 (a pydantic field: copied per instance)

    def supports_function_calling(self) -> bool:
        return self.native

    def supports_stop_words(self) -> bool:
        return False

    def get_context_window_size(self) -> int:
        return 100_000

    def call(self, messages: Any, tools: Any = None, *args: Any, **kwargs: Any) -> Any:
        self.seen.append([dict(m) for m in messages] if isinstance(messages, list) else messages)
        self.turn += 1
        if self.turn > 4:
            return "done" if self.native else "Thought: I now know the answer\nFinal Answer: done"
        if self.native:
            arguments = json.dumps({"path": MISSING})
            return [
                {
                    "id": f"c{self.turn}",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": arguments},
                }
            ]
        return (
            "Thought: I should read the notes.\nAction: read_file\n"
            f'Action Input: {{"path": "{MISSING}"}}'
        )


def toolkit_tool(counter: Counter) -> BaseTool:
    """Build a tool the way a toolkit does (the user did not write it)."""

    @tool("read_file")
    def read_file(path: str) -> str:
        """Read a text file from the workspace."""
        return read_text(counter, path)

    return read_file


@pytest.fixture
def memory(
    sqlite_memory: FailureMemory, in_tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> FailureMemory:
    """The SQLite memory, the test run from ``tmp_path`` (the framework writes there)."""
    monkeypatch.setenv("HOME", str(in_tmp_path))
    monkeypatch.setenv("CREWAI_DISABLE_TELEMETRY", "true")  # .ci/run also sets it at start
    return sqlite_memory


def tool_texts(llm: ScriptedLLM) -> list[str]:
    """What the model got back for its tool calls, from the last conversation it was sent."""
    last = llm.seen[-1]
    if llm.native:
        return [str(m.get("content")) for m in last if m.get("role") == "tool"]
    return [
        str(m.get("content")).split("Observation:", 1)[1]
        for m in last
        if m.get("role") == "assistant" and "Observation:" in str(m.get("content"))
    ]


def crew(agent_tools: list[Any], llm: ScriptedLLM, prepare: Any = None) -> tuple[Crew, Any]:
    agent = Agent(
        role="reader",
        goal="read notes",
        backstory="careful",
        llm=llm,
        tools=agent_tools,
        max_iter=8,
        verbose=False,
    )
    prepared = prepare(agent) if prepare else agent
    task = Task(description="Read my notes.", expected_output="the notes", agent=agent)
    return Crew(agents=[agent], tasks=[task], verbose=False), prepared


REPEATED = "I tried reusing the same input"  # CrewAI's own repeated-call check (ReAct mode)


def assert_guarded(llm: ScriptedLLM, output: Any, counter: Counter) -> None:
    """Body once, its error once; then refusals (native), or CrewAI's own repeat message."""
    texts = tool_texts(llm)
    assert str(output) == "done"
    assert counter.runs == 1
    assert len(texts) == 4, texts
    assert "No such file" in texts[0]
    answer = "refused" if llm.native else REPEATED
    assert all(answer in t for t in texts[1:]), texts


def test_guard_tools_native(memory: FailureMemory) -> None:
    """guard_tools() on a CrewAI tool: the body runs once, then refusals; the crew ends."""
    counter, llm = Counter(), ScriptedLLM(model="scripted", native=True, seen=[])
    team, _ = crew(guard_tools([toolkit_tool(counter)], memory), llm)
    assert_guarded(llm, team.kickoff(), counter)


@pytest.mark.parametrize("native", [True, False], ids=["native", "react"])
def test_guard_agent(memory: FailureMemory, native: bool) -> None:
    """guard_agent(): guarded tools, and the guard block in the system message."""
    counter, llm = Counter(), ScriptedLLM(model="scripted", native=native, seen=[])
    team, hooks = crew([toolkit_tool(counter)], llm, lambda agent: guard_agent(agent, memory))
    try:
        output = team.kickoff()
    finally:
        hooks.remove()
    assert_guarded(llm, output, counter)
    system = next(m for m in llm.seen[-1] if m.get("role") == "system")
    block = PromptGuard(memory).block()
    assert MISSING in block
    assert block in system["content"]


def test_guard_tools_react(memory: FailureMemory) -> None:
    """ReAct mode: body once, error once, CrewAI's repeat check; the next crew is refused."""
    counter = Counter()
    tools = guard_tools([toolkit_tool(counter)], memory)
    first = ScriptedLLM(model="scripted", native=False, seen=[])
    assert_guarded(first, crew(tools, first)[0].kickoff(), counter)
    again = ScriptedLLM(model="scripted", native=False, seen=[])
    crew(tools, again)[0].kickoff()
    texts = tool_texts(again)
    assert counter.runs == 1
    assert "refused" in texts[0] and "No such file" not in texts[0]


@pytest.mark.parametrize("native", [True, False], ids=["native", "react"])
def test_unguarded_reruns_the_body(memory: FailureMemory, native: bool) -> None:
    """Without the guard the failing body runs at least once per model call."""
    counter, llm = Counter(), ScriptedLLM(model="scripted", native=native, seen=[])
    team, _ = crew([toolkit_tool(counter)], llm)
    team.kickoff()
    assert counter.runs >= 4


def test_schema_identical(memory: FailureMemory) -> None:
    """The model sees the same tool name, description and argument schema."""
    original = toolkit_tool(Counter())
    guarded = guard_tool(original, memory)
    assert type(guarded) is type(original)
    assert guarded.name == original.name and guarded.description == original.description
    assert guarded.args_schema.model_json_schema() == original.args_schema.model_json_schema()


def test_hooks_guard_tools_added_at_run_time(memory: FailureMemory) -> None:
    """A tool the agent gets after guard_agent() (as MCP tools are) is guarded by the hooks."""
    counter, llm = Counter(), ScriptedLLM(model="scripted", native=True, seen=[])

    def late_tool(agent: Any) -> Any:
        hooks = guard_agent(agent, memory)
        agent.tools = [*agent.tools, toolkit_tool(counter)]  # not guarded by itself
        return hooks

    team, hooks = crew([], llm, late_tool)
    try:
        output = team.kickoff()
    finally:
        hooks.remove()
    assert_guarded(llm, output, counter)
