"""OpenAI Agents SDK: the real Runner loop with a scripted Model, under the guard.

A scripted model asks four times in a row for a file that does not exist. Guarded, the tool
body runs once; the model gets the tool's error (its text, not the SDK's generic message)
once, then refusals, and the run completes. The shell tools run their commands for real
(bash, in ``tmp_path``): ``make deploy`` in a workspace whose Makefile has no such rule.
"""

from __future__ import annotations

import asyncio
import subprocess
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import (
    Agent,
    ApplyPatchOperation,
    ApplyPatchTool,
    CodeInterpreterTool,
    CustomTool,
    FileSearchTool,
    FunctionTool,
    HostedMCPTool,
    ImageGenerationTool,
    LocalShellCommandRequest,
    LocalShellTool,
    ProgrammaticToolCallingTool,
    RunContextWrapper,
    Runner,
    ShellCallOutcome,
    ShellCommandOutput,
    ShellCommandRequest,
    ShellResult,
    ShellTool,
    ToolSearchTool,
    WebSearchTool,
    function_tool,
)
from agents.apply_diff import apply_diff

from helpers.agent_tools import MISSING, Counter, read_text
from helpers.openai_agents_model import (
    AsyncWorkspaceEditor,
    CustomCall,
    LocalShellRun,
    Patch,
    ScriptedModel,
    ShellCall,
    WorkspaceEditor,
)
from scarguard import FailureMemory, PromptGuard
from scarguard.errors import ScarguardWarning
from scarguard.integrations import guard_tools
from scarguard.integrations.openai_agents import guard_agent, guard_tool
from scarguard.testing import FakeClock

pytestmark = pytest.mark.slow  # a framework's real agent loop


def read_file_script() -> ScriptedModel:
    """Four identical read_file calls for the missing file, then a final message."""
    return ScriptedModel([("read_file", {"path": MISSING})] * 4)


def toolkit_tool(counter: Counter, *, is_async: bool = False) -> FunctionTool:
    """Build a FunctionTool the way a toolkit does (the user did not write it)."""

    def read_file(path: str) -> str:
        """Read a text file from the workspace.

        Args:
            path: The file to read.
        """
        return read_text(counter, path)

    async def aread_file(path: str) -> str:
        """Read a text file from the workspace.

        Args:
            path: The file to read.
        """
        return read_text(counter, path)

    return function_tool(aread_file if is_async else read_file, name_override="read_file")


@pytest.fixture
def memory(
    sqlite_memory: FailureMemory, in_tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> FailureMemory:
    """The SQLite memory, the test run from ``tmp_path`` (the framework writes there)."""
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    return sqlite_memory


def run(agent: Agent[Any]) -> Any:
    return asyncio.run(Runner.run(agent, "read my notes"))


class Bash:
    """A shell executor that runs each command with bash in ``workspace``, counting calls."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.runs = 0

    def __call__(self, request: ShellCommandRequest) -> ShellResult:
        self.runs += 1
        outputs = []
        for command in request.data.action.commands:
            done = subprocess.run(
                ["bash", "-c", command],
                cwd=self.workspace,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            outcome = ShellCallOutcome(type="exit", exit_code=done.returncode)
            outputs.append(ShellCommandOutput(done.stdout, done.stderr, outcome, command))
        return ShellResult(output=outputs)


@pytest.fixture
def workspace(in_tmp_path: Path) -> Path:
    """A workspace whose Makefile has a ``build`` rule and no ``deploy`` rule."""
    (in_tmp_path / "Makefile").write_text("build:\n\t@echo built\n")
    return in_tmp_path


def shell_agent(model: ScriptedModel, bash: Bash) -> Agent[Any]:
    return Agent(name="a", model=model, tools=[ShellTool(executor=bash)])


DEPLOY = ShellCall(["make deploy"])


def assert_guarded_run(model: ScriptedModel, output: str, counter: Counter) -> None:
    assert output == "done"
    assert counter.runs == 1
    assert len(model.outputs) == 4
    assert "FileNotFoundError" in model.outputs[0]
    assert all("refused" in o for o in model.outputs[1:])


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_guard_agent(memory: FailureMemory, is_async: bool) -> None:
    """guard_agent(): body once, its error text once, then refusals; block in instructions."""
    counter, model = Counter(), read_file_script()
    agent = Agent(
        name="a",
        instructions="Be careful.",
        model=model,
        tools=[toolkit_tool(counter, is_async=is_async)],
    )
    result = run(guard_agent(agent, memory))
    assert_guarded_run(model, result.final_output, counter)
    assert model.instructions[0] == "Be careful."
    block = PromptGuard(memory).block()
    assert MISSING in block
    assert block in (model.instructions[-1] or "")
    assert "Be careful." in (model.instructions[-1] or "")


def test_guard_tools_on_tool_object(memory: FailureMemory) -> None:
    """guard_tools() on a FunctionTool gives the same run."""
    counter, model = Counter(), read_file_script()
    agent = Agent(name="a", model=model, tools=guard_tools([toolkit_tool(counter)], memory))
    assert_guarded_run(model, run(agent).final_output, counter)


def test_unguarded_hides_the_error(memory: FailureMemory) -> None:
    """Without the guard the body runs four times and the model never sees the error's text."""
    counter, model = Counter(), read_file_script()
    run(Agent(name="a", model=model, tools=[toolkit_tool(counter)]))
    assert counter.runs == 4
    assert not any("FileNotFoundError" in o for o in model.outputs)


def test_handle_errors_off_keeps_the_sdk_formatter(memory: FailureMemory) -> None:
    """handle_errors=False: the SDK's own failure text for the error, refusals still refused."""
    counter, model = Counter(), read_file_script()
    tool = guard_tool(toolkit_tool(counter), memory, handle_errors=False)
    run(Agent(name="a", model=model, tools=[tool]))
    assert counter.runs == 1
    assert "An error occurred while running the tool" in model.outputs[0]
    assert all("refused" in o for o in model.outputs[1:])


def test_schema_identical(memory: FailureMemory) -> None:
    """The model sees the same name, description and JSON schema."""
    tool = toolkit_tool(Counter())
    guarded = guard_tool(tool, memory)
    assert (guarded.name, guarded.description, guarded.params_json_schema) == (
        tool.name,
        tool.description,
        tool.params_json_schema,
    )
    assert guarded.strict_json_schema == tool.strict_json_schema


def test_shell_tool_refuses_a_repeated_failing_command(
    memory: FailureMemory, workspace: Path
) -> None:
    """guard_agent(): `make deploy` with no such rule runs at most twice, then is refused."""
    bash, model = Bash(workspace), ScriptedModel([DEPLOY] * 3)
    result = run(guard_agent(shell_agent(model, bash), memory))
    assert result.final_output == "done"
    assert 1 <= bash.runs <= 2
    assert len(model.outputs) == 3
    assert "No rule to make target" in model.outputs[0]  # the failed result, unchanged
    assert "refused" in model.outputs[-1]
    assert "No rule to make target" not in model.outputs[-1]
    (failure, *_) = memory.recent_failures(tool="shell")
    assert failure.args == {"command": "make deploy"}
    assert "No rule to make target" in failure.error


def test_shell_tool_unguarded_runs_every_time(memory: FailureMemory, workspace: Path) -> None:
    """Without the guard the executor runs `make deploy` every time it is asked."""
    bash, model = Bash(workspace), ScriptedModel([DEPLOY] * 3)
    run(shell_agent(model, bash))
    assert bash.runs == 3
    assert all("No rule to make target" in o for o in model.outputs)


def test_shell_tool_success_is_recorded(memory: FailureMemory, workspace: Path) -> None:
    """A command that exits 0 is a success of the shell tool; the failure of another is not."""
    bash = Bash(workspace)
    model = ScriptedModel([ShellCall(["make build", "echo ok"]), DEPLOY])
    run(guard_agent(shell_agent(model, bash), memory))
    assert bash.runs == 2
    stats = memory.stats()
    assert stats.successes_by_tool == {"shell": 1}
    assert stats.failures_by_tool == {"shell": 1}
    assert "built" in model.outputs[0]


def test_shell_tool_timeout_is_a_failure(memory: FailureMemory, in_tmp_path: Path) -> None:
    """A ShellResult whose command timed out is recorded as a timeout, returned unchanged."""

    def executor(request: ShellCommandRequest) -> ShellResult:
        outcome = ShellCallOutcome(type="timeout")
        return ShellResult([ShellCommandOutput("half done", "", outcome, "sleep 99")])

    model = ScriptedModel([ShellCall(["sleep 99"], timeout_ms=10)])
    agent = Agent(name="a", model=model, tools=[ShellTool(executor=executor)])
    run(guard_agent(agent, memory))
    assert "half done" in model.outputs[0]
    (failure,) = memory.recent_failures(tool="shell")
    assert failure.signature == "tool_timeout"
    assert failure.args == {"command": "sleep 99"}  # the timeout does not change what runs


def test_shell_executor_exception(memory: FailureMemory, in_tmp_path: Path) -> None:
    """An executor's exception is recorded and reaches the SDK, which reports it to the model."""
    runs = Counter()

    async def executor(request: ShellCommandRequest) -> str:
        runs.runs += 1
        raise RuntimeError("sandbox is gone")

    model = ScriptedModel([DEPLOY] * 3)
    agent = Agent(name="a", model=model, tools=[ShellTool(executor=executor)])
    run(guard_agent(agent, memory))
    assert model.outputs[0] == "sandbox is gone"  # the SDK's own text for the exception
    assert runs.runs < 3
    assert "refused" in model.outputs[-1]
    (failure, *_) = memory.recent_failures(tool="shell")
    assert failure.error == "RuntimeError: sandbox is gone"


def test_guard_tools_on_shell_tool(memory: FailureMemory, workspace: Path) -> None:
    """guard_tools() and guard_tool() guard a ShellTool, keeping its name and settings."""
    bash, model = Bash(workspace), ScriptedModel([DEPLOY] * 3)
    tool = ShellTool(executor=bash, name="sh", needs_approval=False)
    (guarded,) = guard_tools([tool], memory)
    assert isinstance(guarded, ShellTool)
    assert (guarded.name, guarded.environment) == ("sh", tool.environment)
    assert guard_tool(guarded, memory) is guarded
    run(Agent(name="a", model=model, tools=[guarded]))
    assert bash.runs < 3
    assert "refused" in model.outputs[-1]
    assert memory.stats().failures_by_tool == {"sh": bash.runs}


def test_hosted_shell_tool_left_alone(memory: FailureMemory) -> None:
    """A hosted ShellTool (no executor) is left alone by guard_agent, refused by guard_tool."""
    hosted = ShellTool(environment={"type": "container_auto"})
    agent = guard_agent(Agent(name="a", tools=[hosted]), memory)
    assert agent.tools == [hosted]
    assert agent.tools[0] is hosted
    with pytest.raises(TypeError, match="hosted shell tool"):
        guard_tool(hosted, memory)


def test_local_shell_tool(memory: FailureMemory, workspace: Path) -> None:
    """LocalShellTool: a raising executor is recorded; the next run's repeat is refused."""
    runs = Counter()

    def executor(request: LocalShellCommandRequest) -> str:
        runs.runs += 1
        done = subprocess.run(
            request.data.action.command, cwd=workspace, capture_output=True, text=True, check=True
        )
        return done.stdout

    deploy = LocalShellRun(["bash", "-lc", "make deploy"])
    tools: list[Any] = [LocalShellTool(executor=executor)]
    raised, model = 0, ScriptedModel([])
    for _ in range(3):
        model = ScriptedModel([deploy])
        try:
            run(guard_agent(Agent(name="a", model=model, tools=tools), memory))
        except subprocess.CalledProcessError:
            raised += 1  # the SDK lets a local shell executor's exception end the run
    assert 1 <= runs.runs <= 2
    assert raised == runs.runs
    assert "refused" in model.outputs[-1]
    (failure, *_) = memory.recent_failures(tool="local_shell")
    assert "CalledProcessError" in failure.error


CALC = "def add(a, b):\n    return a + b\n"
STALE = Patch("update_file", "calc.py", "@@ def add(a, b):\n-    return a - b\n+    return a * b\n")
"""A patch whose context (``return a - b``) is not in calc.py."""
FIX = Patch("update_file", "calc.py", "@@ def add(a, b):\n-    return a + b\n+    return a * b\n")


@pytest.fixture
def calc(in_tmp_path: Path) -> Path:
    """A workspace with calc.py, whose add() returns ``a + b``."""
    (in_tmp_path / "calc.py").write_text(CALC)
    return in_tmp_path


@pytest.fixture
def rooted(
    in_tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FailureMemory]:
    """A SQLite memory whose root is the workspace, ``tmp_path`` (it watches files there)."""
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    with FailureMemory(in_tmp_path / "memory.db", clock=clock, root=in_tmp_path) as opened:
        yield opened


def patch_agent(model: ScriptedModel, editor: WorkspaceEditor, **options: Any) -> Agent[Any]:
    return Agent(name="a", model=model, tools=[ApplyPatchTool(editor=editor, **options)])


EDITORS: dict[str, Callable[[Path], WorkspaceEditor]] = {
    "sync": WorkspaceEditor,
    "async": AsyncWorkspaceEditor,
    "failed-result": lambda workspace: WorkspaceEditor(workspace, failing="result"),
    "failed-mapping": lambda workspace: WorkspaceEditor(workspace, failing="mapping"),
}


@pytest.mark.parametrize("kind", sorted(EDITORS))
def test_apply_patch_refuses_a_repeated_failing_patch(
    rooted: FailureMemory, calc: Path, kind: str
) -> None:
    """A patch whose context is not in the file runs once; its identical repeats are refused.

    The editor raises (sync or async) or returns a failed result (an ApplyPatchResult or a
    mapping): either way the model reads the failure, then a failed output with the reason.
    """
    editor, model = EDITORS[kind](calc), ScriptedModel([STALE] * 3)
    result = run(guard_agent(patch_agent(model, editor), rooted))
    assert result.final_output == "done"
    assert editor.runs == 1
    assert len(model.outputs) == 3
    assert model.outputs[0].startswith("[failed] Invalid Context")
    assert all(o.startswith("[failed] scarguard refused") for o in model.outputs[1:])
    assert (calc / "calc.py").read_text() == CALC
    (failure,) = rooted.recent_failures(tool="apply_patch")
    assert failure.args == {"type": "update_file", "path": "calc.py", "diff": STALE.diff}
    assert failure.signature == "edit_failed"
    assert failure.targets == ("calc.py",)
    assert "Invalid Context" in (failure.error or "")


def test_apply_patch_editor_exception_propagates_unchanged(
    rooted: FailureMemory, calc: Path
) -> None:
    """The editor's own exception leaves the guarded editor unchanged, and is recorded."""
    tool = guard_tool(ApplyPatchTool(editor=WorkspaceEditor(calc)), rooted)
    context = RunContextWrapper(context=None)
    operation = ApplyPatchOperation("update_file", "calc.py", STALE.diff, ctx_wrapper=context)
    with pytest.raises(ValueError, match="Invalid Context") as raised:
        asyncio.run(tool.editor.update_file(operation))
    (failure,) = rooted.recent_failures(tool="apply_patch")
    assert failure.error == f"ValueError: {raised.value}"
    assert failure.args == {"type": "update_file", "path": "calc.py", "diff": STALE.diff}


def test_apply_patch_unguarded_runs_every_time(rooted: FailureMemory, calc: Path) -> None:
    """Without the guard the editor tries the same failing patch every time it is asked."""
    editor, model = WorkspaceEditor(calc), ScriptedModel([STALE] * 3)
    run(patch_agent(model, editor))
    assert editor.runs == 3
    assert all(o.startswith("[failed] Invalid Context") for o in model.outputs)


def test_apply_patch_success_is_not_refused(rooted: FailureMemory, calc: Path) -> None:
    """A correct patch after a failing one on the same file runs and is recorded a success."""
    editor, model = WorkspaceEditor(calc), ScriptedModel([STALE, FIX])
    run(guard_agent(patch_agent(model, editor), rooted))
    assert editor.runs == 2
    assert model.outputs[-1] == "[completed] Updated calc.py"
    assert (calc / "calc.py").read_text() == "def add(a, b):\n    return a * b\n"
    stats = rooted.stats()
    assert (stats.successes_by_tool, stats.failures_by_tool) == (
        {"apply_patch": 1},
        {"apply_patch": 1},
    )


def test_apply_patch_allowed_after_the_file_changes_by_hand(
    rooted: FailureMemory, calc: Path
) -> None:
    """A refused patch runs again once the file is changed by hand (to hold its context)."""
    editor = WorkspaceEditor(calc)
    model = ScriptedModel([STALE] * 2)
    run(guard_agent(patch_agent(model, editor), rooted))
    assert editor.runs == 1
    assert "refused" in model.outputs[-1]
    (calc / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    model = ScriptedModel([STALE])
    run(guard_agent(patch_agent(model, editor), rooted))
    assert editor.runs == 2
    assert model.outputs == ["[completed] Updated calc.py"]
    assert (calc / "calc.py").read_text() == "def add(a, b):\n    return a * b\n"


def test_apply_patch_creating_a_missing_file_is_not_refused(
    rooted: FailureMemory, in_tmp_path: Path
) -> None:
    """An update of a missing file is refused on repeat; creating that file is not refused."""
    editor = WorkspaceEditor(in_tmp_path)
    update = Patch("update_file", "notes.md", "@@\n-old\n+new\n")
    create = Patch("create_file", "notes.md", "+# Notes\n")
    model = ScriptedModel([update, update, create])
    run(guard_agent(patch_agent(model, editor), rooted))
    assert editor.runs == 2
    assert "No such file or directory" in model.outputs[0]
    assert "refused" in model.outputs[1]
    assert model.outputs[2] == "[completed] Created notes.md"
    assert (in_tmp_path / "notes.md").read_text() == "# Notes"
    (failure,) = rooted.recent_failures(tool="apply_patch")
    assert failure.signature == "file_not_found"


def test_apply_patch_move_to_is_a_target(rooted: FailureMemory, calc: Path) -> None:
    """An update that moves the file records where it moves it, as an argument and a target."""
    editor = WorkspaceEditor(calc)
    moved = Patch("update_file", "calc.py", STALE.diff, move_to="maths.py")
    model = ScriptedModel([moved] * 2)
    run(guard_agent(patch_agent(model, editor), rooted))
    assert editor.runs == 1
    (failure,) = rooted.recent_failures(tool="apply_patch")
    assert failure.args == {
        "type": "update_file",
        "path": "calc.py",
        "diff": STALE.diff,
        "move_to": "maths.py",
    }
    assert failure.targets == ("calc.py", "maths.py")


def test_guard_tool_on_apply_patch_keeps_its_settings(rooted: FailureMemory, calc: Path) -> None:
    """guard_tool() and guard_tools() copy an ApplyPatchTool, its name and approval settings
    kept, its editor guarded; its calls are recorded under its name."""
    editor = WorkspaceEditor(calc)

    def needs_approval(ctx: Any, operation: Any, call_id: str) -> bool:
        return False

    def on_approval(ctx: Any, item: Any) -> Any:
        return {"approve": True}

    tool = ApplyPatchTool(
        editor=editor, name="edit_files", needs_approval=needs_approval, on_approval=on_approval
    )
    (guarded,) = guard_tools([tool], rooted)
    assert isinstance(guarded, ApplyPatchTool)
    assert (guarded.name, guarded.needs_approval, guarded.on_approval) == (
        "edit_files",
        needs_approval,
        on_approval,
    )
    assert guarded.editor is not editor
    assert guarded.editor.workspace == calc  # the wrapped editor's own attributes
    assert guard_tool(guarded, rooted) is guarded
    assert tool.editor is editor  # the tool itself is unchanged
    model = ScriptedModel([STALE] * 3)
    run(Agent(name="a", model=model, tools=[guarded]))
    assert editor.runs == 1
    assert rooted.stats().failures_by_tool == {"edit_files": 1}


AUTO: Any = {"type": "auto"}


def test_guard_tools_leaves_hosted_tools_alone(rooted: FailureMemory, calc: Path) -> None:
    """Hosted tools in guard_tools' list come back unchanged; the others are guarded."""
    hosted: list[Any] = [
        ShellTool(environment={"type": "container_auto"}),
        WebSearchTool(),
        FileSearchTool(vector_store_ids=["vs_1"]),
        HostedMCPTool(tool_config={"type": "mcp", "server_label": "x", "server_url": "https://x"}),
        CodeInterpreterTool(tool_config={"type": "code_interpreter", "container": AUTO}),
        ImageGenerationTool(tool_config={"type": "image_generation"}),
        ToolSearchTool(),
        ProgrammaticToolCallingTool(),
    ]
    counter = Counter()
    patch = ApplyPatchTool(editor=WorkspaceEditor(calc))
    tools = [toolkit_tool(counter), *hosted, patch]
    guarded = guard_tools(tools, rooted)
    assert guarded[1:-1] == hosted
    assert all(g is h for g, h in zip(guarded[1:-1], hosted, strict=True))
    assert guarded[0] is not tools[0] and guarded[-1] is not patch
    assert all(getattr(g, "_scarguard_guarded", False) for g in (guarded[0], guarded[-1]))
    agent = guard_agent(Agent(name="a", tools=tools), rooted)
    assert [t is h for t, h in zip(agent.tools[1:-1], hosted, strict=True)] == [True] * len(hosted)
    with pytest.raises(TypeError, match="hosted shell tool"):
        guard_tool(hosted[0], rooted)


# -- custom tools (one raw string input) ------------------------------------------------------


class RawBash:
    """A custom tool's invoker: runs its raw input with bash in ``workspace``, counting runs.

    A command that exits non-zero raises ``CalledProcessError`` (its stderr captured), which
    the SDK sends to the model as the tool's output.
    """

    def __init__(self, workspace: Path, *, is_async: bool = False) -> None:
        self.workspace = workspace
        self.runs = 0
        self.is_async = is_async

    def run(self, command: str) -> str:
        self.runs += 1
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=self.workspace,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return done.stdout

    def tool(self) -> CustomTool:
        async def ainvoke(ctx: Any, command: str) -> str:
            return self.run(command)

        def invoke(ctx: Any, command: str) -> str:
            return self.run(command)

        return CustomTool(
            name="bash",
            description="Run one bash command; the input is the command line.",
            on_invoke_tool=ainvoke if self.is_async else invoke,
        )


RAW_DEPLOY = CustomCall("bash", "make deploy")


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_custom_tool_refuses_a_repeated_failing_command(
    memory: FailureMemory, workspace: Path, is_async: bool
) -> None:
    """A custom shell tool's `make deploy` with no such rule runs at most twice, then is refused.

    Its raw input is recorded as the command (the tool is named for a shell), so the shell
    adapter reads it.
    """
    bash, model = RawBash(workspace, is_async=is_async), ScriptedModel([RAW_DEPLOY] * 3)
    agent = Agent(name="a", model=model, tools=[bash.tool()])
    result = run(guard_agent(agent, memory))
    assert result.final_output == "done"
    assert 1 <= bash.runs <= 2
    assert len(model.outputs) == 3
    assert "returned non-zero exit status 2" in model.outputs[0]  # the SDK's own text
    assert "refused" in model.outputs[-1]
    (failure, *_) = memory.recent_failures(tool="bash")
    assert failure.args == {"command": "make deploy"}
    assert "No rule to make target" in (failure.error or "")


def test_custom_tool_unguarded_runs_every_time(memory: FailureMemory, workspace: Path) -> None:
    """Without the guard the custom tool runs `make deploy` every time it is asked."""
    bash, model = RawBash(workspace), ScriptedModel([RAW_DEPLOY] * 3)
    run(Agent(name="a", model=model, tools=[bash.tool()]))
    assert bash.runs == 3
    assert not any("refused" in o for o in model.outputs)


def test_custom_tool_runs_again_once_the_rule_exists(
    rooted: FailureMemory, workspace: Path
) -> None:
    """The refused command runs again once the Makefile has the rule, and succeeds."""
    bash = RawBash(workspace)
    model = ScriptedModel([RAW_DEPLOY] * 3)
    run(guard_agent(Agent(name="a", model=model, tools=[bash.tool()]), rooted))
    assert "refused" in model.outputs[-1]
    before = bash.runs
    (workspace / "Makefile").write_text("build:\n\t@echo built\ndeploy:\n\t@echo deployed\n")
    model = ScriptedModel([RAW_DEPLOY])
    run(guard_agent(Agent(name="a", model=model, tools=[bash.tool()]), rooted))
    assert bash.runs == before + 1
    assert model.outputs == ["deployed\n"]
    assert rooted.stats().successes_by_tool == {"bash": 1}


def test_custom_tool_exception_propagates_unchanged(memory: FailureMemory) -> None:
    """The invoker's own exception leaves the guarded invoker unchanged, and is recorded."""
    error = LookupError("no such table: userz")

    def invoke(ctx: Any, query: str) -> str:
        raise error

    tool = guard_tool(CustomTool(name="sql", description="Run SQL.", on_invoke_tool=invoke), memory)
    with pytest.raises(LookupError) as raised:
        asyncio.run(tool.on_invoke_tool(RunContextWrapper(context=None), "select * from userz"))
    assert raised.value is error
    (failure,) = memory.recent_failures(tool="sql")
    assert failure.args == {"input": "select * from userz"}
    assert failure.error == "LookupError: no such table: userz"


def test_guard_tool_on_custom_tool_keeps_its_settings(memory: FailureMemory) -> None:
    """A guarded custom tool keeps its name, description, format and approval settings."""
    grammar = {"type": "grammar", "syntax": "lark", "definition": 'start: "x"'}
    tool = CustomTool(
        name="raw",
        description="Raw input.",
        on_invoke_tool=lambda ctx, raw: raw,
        format=grammar,
        needs_approval=True,
    )
    (guarded,) = guard_tools([tool], memory)
    assert isinstance(guarded, CustomTool)
    assert guarded is not tool and guarded.on_invoke_tool is not tool.on_invoke_tool
    assert (guarded.name, guarded.description, guarded.format) == ("raw", "Raw input.", grammar)
    assert guarded.needs_approval is True
    assert guarded.tool_config == tool.tool_config
    assert guard_tool(guarded, memory) is guarded
    assert tool.on_invoke_tool(None, "x") == "x"  # the original is unchanged


def patch_text(path: str, diff: str) -> str:
    """Return one file's update as an apply_patch text (the SDK's V4A grammar)."""
    return f"*** Begin Patch\n*** Update File: {path}\n{diff}*** End Patch"


class RawPatcher:
    """A custom apply_patch tool's invoker: applies a one-file update text with ``apply_diff``.

    A hunk whose context is not in the file raises ``ValueError("Invalid Context ...")``.
    """

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.runs = 0

    def __call__(self, ctx: Any, text: str) -> str:
        self.runs += 1
        lines = text.splitlines(keepends=True)
        path = lines[1].split(": ", 1)[1].strip()
        target = self.workspace / path
        target.write_text(apply_diff(target.read_text(), "".join(lines[2:-1])))
        return f"Updated {path}"

    def tool(self) -> CustomTool:
        return CustomTool(name="apply_patch", description="Apply a patch.", on_invoke_tool=self)


RAW_STALE = CustomCall("apply_patch", patch_text("calc.py", STALE.diff))


def test_custom_patch_refused_until_the_file_changes(rooted: FailureMemory, calc: Path) -> None:
    """A patch text whose context is not in calc.py is refused when repeated, until calc.py
    changes by hand: the files its text names are its targets, watched."""
    patcher = RawPatcher(calc)
    model = ScriptedModel([RAW_STALE] * 3)
    run(guard_agent(Agent(name="a", model=model, tools=[patcher.tool()]), rooted))
    assert patcher.runs == 1
    assert model.outputs[0].startswith("Invalid Context")
    assert all("refused" in o for o in model.outputs[1:])
    (failure,) = rooted.recent_failures(tool="apply_patch")
    assert failure.targets == ("calc.py",)
    assert failure.args == {"input": RAW_STALE.input}
    (calc / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    model = ScriptedModel([RAW_STALE])
    run(guard_agent(Agent(name="a", model=model, tools=[patcher.tool()]), rooted))
    assert patcher.runs == 2
    assert model.outputs == ["Updated calc.py"]
    assert (calc / "calc.py").read_text() == "def add(a, b):\n    return a * b\n"


def test_custom_file_tool_runs_again_once_the_file_exists(
    rooted: FailureMemory, in_tmp_path: Path
) -> None:
    """A custom read_file tool's one-line input is its target: the missing file is refused
    when asked again, and read once it exists."""
    counter = Counter()

    def invoke(ctx: Any, path: str) -> str:
        return read_text(counter, path)

    tool = CustomTool(name="read_file", description="Read a file.", on_invoke_tool=invoke)
    model = ScriptedModel([CustomCall("read_file", MISSING)] * 3)
    run(guard_agent(Agent(name="a", model=model, tools=[tool]), rooted))
    assert counter.runs == 1
    assert all("refused" in o for o in model.outputs[1:])
    (failure,) = rooted.recent_failures(tool="read_file")
    assert (failure.args, failure.targets) == ({"input": MISSING}, (MISSING,))
    (in_tmp_path / MISSING).parent.mkdir()
    (in_tmp_path / MISSING).write_text("my notes\n")
    model = ScriptedModel([CustomCall("read_file", MISSING)])
    run(guard_agent(Agent(name="a", model=model, tools=[tool]), rooted))
    assert counter.runs == 2
    assert model.outputs == ["my notes\n"]


def test_guard_agent_warns_that_sandbox_capability_tools_are_not_guarded(
    memory: FailureMemory,
) -> None:
    """A sandbox agent's capabilities add their tools at run time: guard_agent says so."""
    from agents.sandbox import SandboxAgent

    counter = Counter()
    sandboxed = SandboxAgent(name="a", tools=[toolkit_tool(counter)])
    with pytest.warns(ScarguardWarning, match="sandbox capabilities"):
        guarded = guard_agent(sandboxed, memory)
    assert getattr(guarded.tools[0], "_scarguard_guarded", False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        guard_agent(Agent(name="plain", tools=[toolkit_tool(counter)]), memory)


MISINDENTED = "if True:\n        total = 1\n    total += 1\n"
"""Python whose last line unindents to no outer level (an IndentationError)."""
INDENTED = "if True:\n        total = 1\n        total += 1\n"
"""The same code with only its indentation fixed."""


def test_custom_code_tool_keeps_whitespace(rooted: FailureMemory) -> None:
    """A custom python tool's input is its code: a fix of indentation alone is a new call.

    Read as a shell command, runs of blanks would collapse and the fixed code would be
    refused as the failed one.
    """
    runs = Counter()

    def invoke(ctx: Any, code: str) -> str:
        runs.runs += 1
        scope: dict[str, Any] = {}
        exec(compile(code, "<agent>", "exec"), scope)
        return str(scope["total"])

    tool = CustomTool(name="run_python", description="Run Python.", on_invoke_tool=invoke)
    model = ScriptedModel([CustomCall("run_python", MISINDENTED)] * 2)
    run(guard_agent(Agent(name="a", model=model, tools=[tool]), rooted))
    assert runs.runs == 1
    assert "unindent does not match" in model.outputs[0]
    assert "refused" in model.outputs[1]
    (failure,) = rooted.recent_failures(tool="run_python")
    assert failure.args == {"code": MISINDENTED}
    model = ScriptedModel([CustomCall("run_python", INDENTED)])
    run(guard_agent(Agent(name="a", model=model, tools=[tool]), rooted))
    assert runs.runs == 2
    assert model.outputs == ["2"]
