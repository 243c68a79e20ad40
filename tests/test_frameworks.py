"""@guarded_tool under real agent frameworks: same tool schema, tool objects refused, calls guarded.

Each framework is a real package installed by the ``frameworks`` extra (CrewAI by the ``crewai``
extra, in an environment of its own because it pins an older ``openai``). A framework that is
not installed is skipped, and CI installs them all.
"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from scarguard.guard.decorator import guarded_tool
from scarguard.memory import FailureMemory
from scarguard.testing import FakeClock

pytestmark = pytest.mark.slow  # real agent frameworks, imported by the tests


def read_lines(path: str, count: int = 3) -> str:
    """Read the first lines of a file.

    Args:
        path: The file to read.
        count: How many lines.
    """
    return f"{path}:{count}"


def _langchain(func: Any) -> Any:
    return pytest.importorskip("langchain_core.tools").tool(func)


def _pydantic_ai(func: Any) -> Any:
    return pytest.importorskip("pydantic_ai").Tool(func)


def _openai_agents(func: Any) -> Any:
    return pytest.importorskip("agents").function_tool(func)


def _autogen(func: Any) -> Any:
    return pytest.importorskip("autogen_core.tools").FunctionTool(func, description="Read.")


def _smolagents(func: Any) -> Any:
    return pytest.importorskip("smolagents").tool(func)


def _crewai(func: Any) -> Any:
    return pytest.importorskip("crewai.tools").tool("read_lines")(func)


def _schema(tool: Any) -> Any:
    """Return whatever each framework sends the model as the tool's schema."""
    for attribute in ("tool_def", "params_json_schema", "schema", "inputs"):
        if hasattr(tool, attribute) and not callable(getattr(tool, attribute)):
            return getattr(tool, attribute)
    return tool.args_schema.model_json_schema()


FRAMEWORKS = {
    "langchain": _langchain,
    "pydantic_ai": _pydantic_ai,
    "openai_agents": _openai_agents,
    "autogen": _autogen,
    "smolagents": _smolagents,
    "crewai": _crewai,
}


@pytest.fixture
def quiet_frameworks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CREWAI_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_framework_builds_same_schema(
    framework: str, memory: FailureMemory, quiet_frameworks: None
) -> None:
    """A framework decorator above @guarded_tool builds the schema it builds without it."""
    make = FRAMEWORKS[framework]
    guarded = guarded_tool(memory, name="read_lines")(read_lines)
    assert _schema(make(guarded)) == _schema(make(read_lines))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_framework_tool_object_rejected(
    framework: str, memory: FailureMemory, quiet_frameworks: None
) -> None:
    """Guarding a framework tool object raises TypeError pointing to guard_tools."""
    tool_object = FRAMEWORKS[framework](read_lines)
    with pytest.raises(TypeError, match=r"integrations\.guard_tools\(\[tool\], memory\)"):
        guarded_tool(memory)(tool_object)


def test_pydantic_ai_run_context_left_out(memory: FailureMemory) -> None:
    """pydantic-ai's RunContext parameter is out of the schema and of the recorded args."""
    pydantic_ai = pytest.importorskip("pydantic_ai")

    def lookup(ctx: Any, key: str) -> str:
        """Look a key up."""
        raise KeyError(key)

    # real objects, not strings: this module's annotations are postponed
    lookup.__annotations__ = {"ctx": pydantic_ai.RunContext[None], "key": str, "return": str}

    guarded = guarded_tool(memory)(lookup)
    assert pydantic_ai.Tool(guarded).tool_def == pydantic_ai.Tool(lookup).tool_def
    with pytest.raises(KeyError):
        guarded(object(), "k")
    assert dict(memory.recent_failures()[0].args) == {"key": "k"}


def test_langchain_invoke_records_through_guard(memory: FailureMemory, clock: FakeClock) -> None:
    """A LangChain tool over a guarded function is refused after repeated failures."""
    tools = pytest.importorskip("langchain_core.tools")

    def run_make(target: str) -> str:
        """Run make."""
        raise subprocess.CalledProcessError(2, ["make", target])

    lc_tool = tools.tool(guarded_tool(memory, on_block="return")(run_make))
    for _ in range(2):
        with pytest.raises(subprocess.CalledProcessError):
            lc_tool.invoke({"target": "all"})
        clock.advance(10)
    assert "refused" in lc_tool.invoke({"target": "all"})
