"""guard_tools(): dispatch on the tool object's type, plain functions, bad input, imports.

Tests that build a framework's tool objects import the framework: they are marked slow.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scarguard import ConfigurationError, FailureMemory
from scarguard.integrations import FRAMEWORKS, framework_of, guard_tools

FRAMEWORK_MODULES = (
    "langchain_core",
    "langchain",
    "langgraph",
    "crewai",
    "autogen_core",
    "autogen_agentchat",
    "agents",
    "pydantic_ai",
    "smolagents",
)


def read_lines(path: str, count: int = 3) -> str:
    """Read the first lines of a file.

    Args:
        path: The file to read.
        count: How many lines.
    """
    raise FileNotFoundError(path)


@pytest.fixture
def memory() -> FailureMemory:
    return FailureMemory(":memory:")


@pytest.mark.slow
def test_mixed_list_plain_function_follows_the_tool_objects(memory: FailureMemory) -> None:
    """A plain function next to LangChain tools becomes a guarded LangChain tool, same schema."""
    tools = pytest.importorskip("langchain_core.tools")
    from langchain_core.utils.function_calling import convert_to_openai_tool

    toolkit = tools.StructuredTool.from_function(
        func=lambda text: text, name="echo", description="Echo the text."
    )
    guarded_toolkit, guarded_function = guard_tools([toolkit, read_lines], memory)
    assert convert_to_openai_tool(guarded_toolkit) == convert_to_openai_tool(toolkit)
    assert convert_to_openai_tool(guarded_function) == convert_to_openai_tool(
        tools.tool(read_lines)
    )
    first = guarded_function.invoke(
        {"type": "tool_call", "name": "read_lines", "args": {"path": "a"}, "id": "1"}
    )
    second = guarded_function.invoke(
        {"type": "tool_call", "name": "read_lines", "args": {"path": "a"}, "id": "2"}
    )
    assert first.status == second.status == "error"
    assert "FileNotFoundError" in first.content and "refused" in second.content


@pytest.mark.slow
@pytest.mark.parametrize("framework", ["pydantic_ai", "openai_agents", "smolagents", "autogen"])
def test_plain_functions_with_framework_option(memory: FailureMemory, framework: str) -> None:
    """framework= turns plain functions into that framework's guarded tool objects."""
    pytest.importorskip(
        {
            "pydantic_ai": "pydantic_ai",
            "openai_agents": "agents",
            "smolagents": "smolagents",
            "autogen": "autogen_core",
        }[framework]
    )
    (guarded,) = guard_tools([read_lines], memory, framework=framework)
    assert framework_of(guarded) == framework


def test_plain_function_without_a_framework_is_refused(memory: FailureMemory) -> None:
    """With only plain functions and no framework=, guard_tools says what is missing."""
    with pytest.raises(ConfigurationError, match="framework="):
        guard_tools([read_lines], memory)


def test_unknown_framework(memory: FailureMemory) -> None:
    """An unknown framework= name is a ConfigurationError naming the known ones."""
    with pytest.raises(ConfigurationError, match="langchain"):
        guard_tools([read_lines], memory, framework="haystack")


def test_not_a_tool(memory: FailureMemory) -> None:
    """Something neither callable nor a known tool object is a TypeError."""
    with pytest.raises(TypeError, match="functions and framework tool objects"):
        guard_tools([42], memory, framework="langchain")


@pytest.mark.slow
def test_not_a_memory() -> None:
    """The memory must be a FailureMemory."""
    pytest.importorskip("langchain_core")
    with pytest.raises(ConfigurationError, match="FailureMemory"):
        guard_tools([read_lines], "memory.db", framework="langchain")


def test_framework_of_plain_objects() -> None:
    """Plain functions and unrelated objects belong to no framework."""
    assert framework_of(read_lines) is None
    assert framework_of(object()) is None
    assert set(FRAMEWORKS) == {
        "autogen",
        "crewai",
        "langchain",
        "openai_agents",
        "pydantic_ai",
        "smolagents",
    }


def test_imports_no_framework(tmp_path: Path) -> None:
    """import scarguard imports no integration; scarguard.integrations imports no framework."""
    code = (
        "import sys, scarguard\n"
        "assert 'scarguard.integrations' not in sys.modules\n"
        "import scarguard.integrations\n"
        f"loaded = sorted(m for m in {FRAMEWORK_MODULES!r} if m in sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples" / "frameworks").glob("*.py"))
EXAMPLE_NEEDS = {
    "autogen_agent.py": "autogen_agentchat",
    "crewai_agent.py": "crewai",
    "langchain_agent.py": "langchain.agents",
    "openai_agents_agent.py": "agents",
    "pydantic_ai_agent.py": "pydantic_ai",
    "smolagents_agent.py": "smolagents",
}


def test_one_example_per_framework() -> None:
    """examples/frameworks/ has one script per framework."""
    assert {p.name for p in EXAMPLES} == set(EXAMPLE_NEEDS)


@pytest.mark.slow
@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_framework_example_runs(script: Path, tmp_path: Path) -> None:
    """Each framework example runs offline: one tool error, then three refusals."""
    pytest.importorskip(EXAMPLE_NEEDS[script.name])
    env = {k: v for k, v in os.environ.items() if k != "SCARGUARD_PATH"}
    env.update(HOME=str(tmp_path), CREWAI_DISABLE_TELEMETRY="true", OTEL_SDK_DISABLED="true")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    tool_lines = [line for line in done.stdout.splitlines() if line.startswith("tool")]
    assert len(tool_lines) == 4, done.stdout
    assert "refused" not in tool_lines[0]
    assert all("scarguard refused" in line for line in tool_lines[1:])


@pytest.mark.slow  # imports LangChain
def test_targets_option_and_a_raising_targets_callable(memory: FailureMemory) -> None:
    """targets= names the call's targets; a callable that raises warns and never breaks the call."""
    pytest.importorskip("langchain_core")
    from scarguard import ScarguardWarning

    (named,) = guard_tools([read_lines], memory, framework="langchain", targets=("path",))
    named.invoke({"path": "a.txt"})
    assert memory.recent_failures()[0].targets == ("a.txt",)

    def broken(args: object) -> list[str]:
        raise RuntimeError("no targets today")

    (tool,) = guard_tools(
        [read_lines], FailureMemory(":memory:"), framework="langchain", targets=broken
    )
    with pytest.warns(ScarguardWarning, match="no targets today"):
        result = tool.invoke({"path": "b.txt"})
    assert "FileNotFoundError" in result
