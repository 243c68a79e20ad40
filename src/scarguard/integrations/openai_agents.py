"""Guard OpenAI Agents SDK tool calls.

* :func:`guard_agent` returns a clone of an ``Agent`` whose function, custom, shell and
  apply_patch tools are guarded and whose instructions carry the guard block, rendered
  again for each model call.
* :func:`guard_tool` for one ``FunctionTool`` (``@function_tool``, a tool another module
  built): a copy with the same name, description and JSON schema; for one ``CustomTool``:
  a copy whose invoker is guarded; for one ``ShellTool`` or ``LocalShellTool``: a copy
  whose executor is guarded; for one ``ApplyPatchTool``: a copy whose editor is guarded.
* :func:`guardable` says which tools these guard; the others (hosted tools, a
  ``ComputerTool``) are left alone by :func:`guard_agent` and
  :func:`scarguard.integrations.guard_tools`.

The SDK sends a function tool's output string back to the model; a failed call has no flag
of its own, so a refused call's output is the refusal text (what to do instead). The SDK's
default ``failure_error_function`` hides the tool's error ("An error occurred while running
the tool"); with ``handle_errors=True`` (the default) the model gets the exception's type
and message instead, so it can correct itself. With ``handle_errors=False`` the tool's own
``failure_error_function`` applies, as without the guard. Either way the exception is
recorded. Tools of MCP servers (``Agent(mcp_servers=...)``) are listed by the SDK at run
time and are not covered; guard them with the scarguard MCP proxy.

A shell call is recorded under the tool's name (``"shell"``, ``"local_shell"``) with its
commands as the lines of one command (a ``LocalShellTool`` call: its argument vector, and
its working directory as ``cwd``), so the shell adapter reads what it runs; the timeout is
left out (a longer timeout runs the same commands). A
``ShellResult`` with a command that exited non-zero or timed out is recorded as a failure
(its stderr, else stdout, is the error text) and still reaches the model unchanged; a
``str`` result is a success. An executor's exception is recorded and propagates: the SDK
turns it into a failed shell output for the model. A refused call returns the refusal text
(the executor does not run). A hosted ``ShellTool`` (a container environment, no executor)
runs on OpenAI's side and is left alone, like the other hosted tools; ``LocalShellTool``
results are strings, so only its exceptions are failures.

A ``CustomTool`` call (one raw string, no JSON) is recorded under the tool's name with the
string as its ``code`` argument for a code runner (``python``, ``execute_code``), its
``command`` for a shell (``bash``, ``shell``, ``exec_command``: the shell adapter reads
what it runs), else its ``input``. An apply_patch text (``*** Begin Patch``...) has the
files it names as its targets, and the one-line input of a tool named for reading or
deleting a file is its target, so a failure watches them. The invoker's exception is
recorded and propagates: the SDK sends the model its message. A refused call returns the
refusal text (the invoker does not run).

An ``ApplyPatchTool`` operation (``create_file``, ``update_file``, ``delete_file``) is one
call of the tool's name (``"apply_patch"``) with the arguments ``type``, ``path`` and
``diff`` (and ``move_to`` when the update moves the file), its targets the path and where it
moves; the tool-call adapter reads ``type`` as the action (creating a file does not need
it). An ``ApplyPatchResult`` (or a mapping) with status ``"failed"`` is recorded as a
failure, its output the error text, and returned unchanged. An editor's exception is
recorded and propagates: the SDK sends the model a failed ``apply_patch_call_output`` with
the exception's message and skips the call's remaining operations. A refused operation
does not reach the editor: it returns ``ApplyPatchResult(status="failed", output=<the
refusal>)``, which the model reads as a failed patch with the reason. A patch whose context
lines are not in the file (the SDK's ``apply_diff``: ``Invalid Context``) is refused the
first time it is repeated unchanged, until the file changes.
"""

from __future__ import annotations

import copy
import inspect
import json
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard, overload

from agents import Agent, FunctionTool, function_tool
from agents.editor import ApplyPatchEditor, ApplyPatchOperation, ApplyPatchResult
from agents.tool import (
    ApplyPatchTool,
    CustomTool,
    LocalShellCommandRequest,
    LocalShellTool,
    ShellCommandRequest,
    ShellResult,
    ShellTool,
    resolve_function_tool_failure_error_function,
    set_function_tool_failure_error_function,
)

from scarguard.adapters import DELETE, FILE_READ
from scarguard.adapters._actions import tool_words
from scarguard.errors import ScarguardWarning
from scarguard.guard.failure_checks import MAX_RESULT_TEXT, describe_failure
from scarguard.integrations._driver import CallPlan, GuardSettings, error_text, run_async
from scarguard.prompt import PromptGuard

__all__ = ["guard_agent", "guard_tool", "guardable", "tool_from_function"]

_GUARDED_MARK = "_scarguard_guarded"
_Guardable = FunctionTool | ShellTool | LocalShellTool | ApplyPatchTool | CustomTool
"""The tools :func:`guard_tool` guards (a ``ShellTool`` only with a local executor)."""
_PLAN = CallPlan(refuse=lambda decision: decision.message)


def _shell_failure(result: Any) -> str | None:
    """Return the error text of a ``ShellResult`` with a failed command, else ``None``.

    The first command that exited non-zero or timed out is the failure; its stderr (else its
    stdout) is the error text, read like ``subprocess.CalledProcessError``. A ``str`` result
    carries no exit code: it is a success.
    """
    if not isinstance(result, ShellResult):
        return None
    for output in result.output:
        text = output.stderr or output.stdout
        command = output.command if output.command is not None else "shell command"
        if output.outcome.type == "timeout":
            message = f"Command {command!r} timed out."
            return (message + (f"\n{text[-MAX_RESULT_TEXT:]}" if text else ""))[:MAX_RESULT_TEXT]
        code = output.outcome.exit_code
        if code:
            return describe_failure({"returncode": code, "args": command, "stderr": text})
    return None


_SHELL_PLAN = CallPlan(refuse=lambda decision: decision.message, failure_in=_shell_failure)


def _shell_arguments(request: ShellCommandRequest | LocalShellCommandRequest) -> dict[str, Any]:
    """Return a shell call's arguments for the memory: what runs, not how long it may take.

    ``ShellTool`` commands become the lines of one command; a ``LocalShellTool`` argument
    vector stays a vector (the adapter reads it as its command line) and its working
    directory, which changes what runs, is ``cwd``. Timeouts and output limits are left out:
    a call retried with a longer timeout runs the same commands.
    """
    if isinstance(request, ShellCommandRequest):
        return {"command": "\n".join(request.data.action.commands)}
    action = request.data.action
    args: dict[str, Any] = {"command": list(action.command)}
    if action.working_directory:
        args["cwd"] = action.working_directory
    return args


def _guard_shell(
    tool: ShellTool | LocalShellTool, memory: Any, targets: Any
) -> ShellTool | LocalShellTool:
    """Return a copy of a shell tool whose executor runs each call as one guarded step."""
    executor: Callable[[Any], Any] | None = tool.executor
    if executor is None:
        raise TypeError(
            f"guard_tool cannot guard the hosted shell tool {tool.name!r}: its commands run"
            " in OpenAI's container, not in this process"
        )
    run_executor: Callable[[Any], Any] = executor
    settings = GuardSettings.build(memory, targets=targets)
    plan = _SHELL_PLAN if isinstance(tool, ShellTool) else _PLAN

    async def guarded_executor(request: Any) -> Any:
        async def run() -> Any:
            result = run_executor(request)
            return await result if inspect.isawaitable(result) else result

        return await run_async(settings, tool.name, _shell_arguments(request), run, plan)

    guarded = copy.copy(tool)
    guarded.executor = guarded_executor
    setattr(guarded, _GUARDED_MARK, True)
    return guarded


def _patch_failure(result: Any) -> str | None:
    """Return the error text of an editor result with status ``"failed"``, else ``None``.

    An ``ApplyPatchResult`` or a mapping (the SDK accepts both): its output is the error
    text. Any other result (``None``, a string, ``"completed"``) is a success.
    """
    if isinstance(result, ApplyPatchResult):
        status, output = result.status, result.output
    elif isinstance(result, Mapping):
        status, output = result.get("status"), result.get("output")
    else:
        return None
    if status != "failed":
        return None
    text = str(output) if output is not None else ""
    return text[:MAX_RESULT_TEXT] or "The editor reported the operation as failed."


_PATCH_PLAN = CallPlan(
    refuse=lambda decision: ApplyPatchResult(status="failed", output=decision.message),
    failure_in=_patch_failure,
)


def _patch_arguments(operation: ApplyPatchOperation) -> dict[str, Any]:
    """Return an editor operation's arguments for the memory (not its run context)."""
    args: dict[str, Any] = {"type": operation.type, "path": operation.path, "diff": operation.diff}
    if operation.move_to is not None:
        args["move_to"] = operation.move_to
    return args


def _patch_targets(args: Mapping[str, Any]) -> list[str]:
    """Return the files an editor operation touches: its path, and where it moves it."""
    return [str(args[key]) for key in ("path", "move_to") if args.get(key)]


class _GuardedEditor:
    """An ``ApplyPatchEditor`` whose every operation is one guarded step.

    Each method is a coroutine function whatever the wrapped editor's are (the SDK awaits
    what an editor returns). Other attributes are the wrapped editor's.
    """

    def __init__(self, editor: ApplyPatchEditor, settings: GuardSettings, tool: str) -> None:
        self.__wrapped__ = editor
        self._settings = settings
        self._tool = tool

    def __getattr__(self, name: str) -> Any:
        if name == "__wrapped__":  # (not set yet: a copy being built)
            raise AttributeError(name)
        return getattr(self.__wrapped__, name)

    async def _apply(self, method: str, operation: ApplyPatchOperation) -> Any:
        apply: Callable[[ApplyPatchOperation], Any] = getattr(self.__wrapped__, method)

        async def run() -> Any:
            result = apply(operation)
            return await result if inspect.isawaitable(result) else result

        args = _patch_arguments(operation)
        return await run_async(self._settings, self._tool, args, run, _PATCH_PLAN)

    async def create_file(self, operation: ApplyPatchOperation) -> Any:
        """Create the file, guarded."""
        return await self._apply("create_file", operation)

    async def update_file(self, operation: ApplyPatchOperation) -> Any:
        """Apply the diff to the file, guarded."""
        return await self._apply("update_file", operation)

    async def delete_file(self, operation: ApplyPatchOperation) -> Any:
        """Delete the file, guarded."""
        return await self._apply("delete_file", operation)


def _guard_apply_patch(tool: ApplyPatchTool, memory: Any, targets: Any) -> ApplyPatchTool:
    """Return a copy of an apply_patch tool whose editor runs each operation guarded."""
    settings = GuardSettings.build(memory, targets=_patch_targets if targets is None else targets)
    guarded = copy.copy(tool)
    guarded.editor = _GuardedEditor(tool.editor, settings, tool.name)
    setattr(guarded, _GUARDED_MARK, True)
    return guarded


def _custom_class(memory: Any, name: str) -> str | None:
    """Return the action class the memory gives a custom tool's calls, by the tool's name."""
    try:
        found: str | None = memory.describe(name, {"input": ""}).action_class
    except Exception:  # a memory that cannot describe it: nothing is read from the name
        return None
    return found


_LANGUAGE_WORDS = frozenset({"python", "py", "ipython", "jupyter", "node", "javascript", "js"})
_SHELL_WORDS = frozenset({
    "bash", "sh", "zsh", "shell", "powershell", "pwsh", "terminal", "console", "cmd",
    "command", "commands", "subprocess",
})  # fmt: skip
_CODE_WORDS = frozenset({"code", "script", "notebook", "repl"})


def _custom_argument(name: str) -> str:
    """Return the argument a custom tool's raw input is recorded as, by the tool's name.

    ``code`` for a code runner (``python``, ``run_python``, ``execute_code``: its imports
    are read, and its whitespace is kept, so a fixed indentation is a new call);
    ``command`` for a shell (``bash``, ``shell``, ``exec_command``: the shell adapter reads
    what it runs); else ``input`` (a tool named for one program, ``make``, is given that
    program's arguments, not a command line).
    """
    words = frozenset(tool_words(name))
    if words & _LANGUAGE_WORDS:
        return "code"
    if words & _SHELL_WORDS:
        return "command"
    return "code" if words & _CODE_WORDS else "input"


_PATCH_START = "*** Begin Patch"
_PATCH_FILES = ("*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** Move to: ")
"""The lines of an apply_patch text (the SDK's V4A grammar) that name a file."""
_FILE_TOOLS = frozenset({FILE_READ, DELETE})
"""The classes of tools whose one-line input is the file they act on (a writer's or an
editor's input is what it writes, not a path)."""
_LONGEST_PATH = 4096


def _patch_text_targets(text: str) -> list[str] | None:
    """Return the files an apply_patch text names, else ``None``.

    An input that begins ``*** Begin Patch`` (the sandbox's ``apply_patch`` custom tool)
    touches the files its ``Add``, ``Delete``, ``Update File`` and ``Move to`` lines name.
    """
    if not text.lstrip().startswith(_PATCH_START):
        return None
    found: dict[str, None] = {}
    for line in text.splitlines():
        if line.startswith(_PATCH_FILES):
            path = line.split(": ", 1)[1].strip()
            if path:
                found[path] = None
    return list(found) or None


def _custom_targets(file_tool: bool) -> Callable[[Mapping[str, Any]], list[str] | None]:
    """Return the targets of a custom tool's calls: what its raw input names, else ``None``.

    The files an apply_patch text names; the input itself for a tool named for reading or
    deleting a file when it is one line (``notes.md``); else ``None``, and the adapter
    decides. A failure watches its targets, so creating the file lifts what it taught.
    """

    def targets(args: Mapping[str, Any]) -> list[str] | None:
        text = args.get("input")
        if not isinstance(text, str):
            return None
        patched = _patch_text_targets(text)
        if patched is not None or not file_tool:
            return patched
        path = text.strip()
        one_line = path and "\n" not in path and len(path) <= _LONGEST_PATH
        return [path] if one_line else None

    return targets


def _guard_custom(tool: CustomTool, memory: Any, targets: Any) -> CustomTool:
    """Return a copy of a custom tool whose invoker runs each call as one guarded step.

    Its raw input is recorded as ``code``, ``command`` or ``input`` (see
    :func:`_custom_argument`); decided once, from the tool's name.
    """
    argument = _custom_argument(tool.name)
    if targets is None and argument == "input":
        targets = _custom_targets(_custom_class(memory, tool.name) in _FILE_TOOLS)
    settings = GuardSettings.build(memory, targets=targets)
    invoke: Callable[[Any, str], Any] = tool.on_invoke_tool

    async def on_invoke_tool(ctx: Any, raw: str) -> Any:
        async def run() -> Any:
            result = invoke(ctx, raw)
            return await result if inspect.isawaitable(result) else result

        return await run_async(settings, tool.name, {argument: raw}, run, _PLAN)

    guarded = copy.copy(tool)
    guarded.on_invoke_tool = on_invoke_tool
    setattr(guarded, _GUARDED_MARK, True)
    return guarded


def guardable(tool: object) -> TypeGuard[_Guardable]:
    """Return whether :func:`guard_tool` guards ``tool`` (and :func:`guard_agent` does).

    Function tools, custom tools, apply_patch tools and shell tools that run in this
    process are guarded; hosted tools (web and file search, code interpreter, image
    generation, hosted MCP, tool search, a ``ShellTool`` in OpenAI's container) run on
    OpenAI's side, and a ``ComputerTool`` (screen actions) is not guarded.
    """
    if isinstance(tool, ShellTool):
        return tool.executor is not None
    return isinstance(tool, (FunctionTool, LocalShellTool, ApplyPatchTool, CustomTool))


def _arguments(raw: str) -> dict[str, Any]:
    try:
        parsed = json.loads(raw) if raw else {}
    except ValueError:
        return {"input": raw}
    return parsed if isinstance(parsed, dict) else {"input": parsed}


@overload
def guard_tool(
    tool: FunctionTool, memory: Any, *, targets: Any = None, handle_errors: bool = True
) -> FunctionTool: ...


@overload
def guard_tool(
    tool: ShellTool, memory: Any, *, targets: Any = None, handle_errors: bool = True
) -> ShellTool: ...


@overload
def guard_tool(
    tool: LocalShellTool, memory: Any, *, targets: Any = None, handle_errors: bool = True
) -> LocalShellTool: ...


@overload
def guard_tool(
    tool: ApplyPatchTool, memory: Any, *, targets: Any = None, handle_errors: bool = True
) -> ApplyPatchTool: ...


@overload
def guard_tool(
    tool: CustomTool, memory: Any, *, targets: Any = None, handle_errors: bool = True
) -> CustomTool: ...


def guard_tool(
    tool: _Guardable,
    memory: Any,
    *,
    targets: Any = None,
    handle_errors: bool = True,
) -> _Guardable:
    """Return a guarded copy of a function, custom, shell or apply_patch tool.

    A function tool keeps its name, description and JSON schema. A shell tool keeps its
    name, environment and approval settings; its executor is wrapped, so each shell call
    is one guarded step (a refused call returns the refusal text instead of running). An
    ``ApplyPatchTool`` keeps its name and approval settings; its editor is wrapped, so each
    operation (create, update, delete a file) is one guarded step (a refused one returns a
    failed ``ApplyPatchResult`` with the refusal text instead of running). A
    ``CustomTool`` (one raw string input) keeps its name, description, format and approval
    settings; each call is one guarded step (a refused one returns the refusal text).

    Args:
        tool: The ``FunctionTool``, ``CustomTool``, ``ApplyPatchTool``, or a shell tool
            with a local executor.
        memory: The :class:`~scarguard.FailureMemory`.
        targets: Argument names whose values are the call's targets, or a callable
            (default for an apply_patch operation: its ``path`` and ``move_to``).
        handle_errors: Show the model the tool's exception (type and message) instead of
            the SDK's generic error text. Custom, shell and apply_patch tools ignore it: the
            SDK reports their exceptions to the model itself.

    Returns:
        The guarded copy.

    Raises:
        TypeError: ``tool`` is none of these, or a hosted ``ShellTool`` (no executor: its
            commands run in OpenAI's container).
    """
    if getattr(tool, _GUARDED_MARK, False):
        return tool
    if isinstance(tool, (ShellTool, LocalShellTool)):
        return _guard_shell(tool, memory, targets)
    if isinstance(tool, ApplyPatchTool):
        return _guard_apply_patch(tool, memory, targets)
    if isinstance(tool, CustomTool):
        return _guard_custom(tool, memory, targets)
    if not isinstance(tool, FunctionTool):
        raise TypeError(
            "guard_tool takes an OpenAI Agents FunctionTool, CustomTool, ShellTool,"
            f" LocalShellTool or ApplyPatchTool, got {type(tool).__name__}"
        )
    settings = GuardSettings.build(memory, targets=targets, handle_errors=handle_errors)
    raising = copy.copy(tool)  # the same invoker, rebound, with no error formatter: it raises
    set_function_tool_failure_error_function(raising, None)

    async def on_invoke_tool(ctx: Any, input: str) -> Any:
        try:
            return await run_async(
                settings,
                tool.name,
                _arguments(input),
                lambda: raising.on_invoke_tool(ctx, input),
                _PLAN,
            )
        except Exception as exc:
            if settings.handle_errors:
                return f"The tool failed: {error_text(exc)}"
            formatter = resolve_function_tool_failure_error_function(tool, ctx)
            if formatter is None:
                raise
            text = formatter(ctx, exc)
            return await text if inspect.isawaitable(text) else text

    guarded = copy.copy(tool)
    guarded.on_invoke_tool = on_invoke_tool
    setattr(guarded, _GUARDED_MARK, True)
    return guarded


def tool_from_function(func: Callable[..., Any]) -> FunctionTool:
    """Build the ``FunctionTool`` that ``@function_tool`` builds from ``func``."""
    return function_tool(func)


def guard_agent(
    agent: Agent[Any],
    memory: Any,
    *,
    targets: Any = None,
    handle_errors: bool = True,
    prompt: PromptGuard | bool = True,
) -> Agent[Any]:
    """Return a clone of ``agent`` with guarded tools and the guard block.

    Its function tools, custom tools, its ``ApplyPatchTool`` and its shell tools are
    guarded (see :func:`guard_tool`). A ``ShellTool`` is guarded when it has a local
    executor; a hosted one (a container environment, no executor) runs on OpenAI's side and
    is left alone, like the other hosted tools (see :func:`guardable`).

    Args:
        agent: The agent.
        memory: The :class:`~scarguard.FailureMemory`.
        targets: Argument names whose values are a call's targets, or a callable.
        handle_errors: Show the model the tool's exception instead of the SDK's generic
            error text.
        prompt: The :class:`~scarguard.PromptGuard` whose block goes in front of the
            instructions for each model call (default: one over ``memory``); ``False``
            leaves the instructions alone.

    Returns:
        The guarded clone (``agent`` itself is unchanged).

    Warns:
        ScarguardWarning: ``agent`` is a sandbox agent with capabilities: the tools they
            add when its session starts (its shell, its apply_patch) are not in
            ``agent.tools`` yet, so they are not guarded.
    """
    if getattr(agent, "capabilities", None):
        warnings.warn(
            f"scarguard guards the tools of agent {agent.name!r} it is given; the tools its"
            " sandbox capabilities add when its session starts are not guarded",
            ScarguardWarning,
            stacklevel=2,
        )
    tools = [
        guard_tool(t, memory, targets=targets, handle_errors=handle_errors) if guardable(t) else t
        for t in agent.tools
    ]
    if prompt is True:
        prompt = PromptGuard(memory)
    if not prompt:
        return agent.clone(tools=tools)
    guard: PromptGuard = prompt
    original = agent.instructions

    async def instructions(ctx: Any, current: Agent[Any]) -> str:
        base: Any = original
        if callable(original):
            base = original(ctx, current)
            if inspect.isawaitable(base):
                base = await base
        return guard.inject(base or "")

    return agent.clone(tools=tools, instructions=instructions)
