"""A scripted OpenAI Agents ``Model``: the SDK's real Runner loop, with no LLM behind it.

Also an apply_patch editor that applies the model's diffs to real files, with the SDK's own
``apply_diff``. Import it only after ``pytest.importorskip("agents")``: it builds on the
SDK's own types.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs
from agents import ApplyPatchOperation, ApplyPatchResult
from agents.apply_diff import apply_diff
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseApplyPatchToolCall,
    ResponseCustomToolCall,
    ResponseFunctionShellToolCall,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from openai.types.responses.response_apply_patch_tool_call import (
    OperationCreateFile,
    OperationDeleteFile,
    OperationUpdateFile,
)
from openai.types.responses.response_function_shell_tool_call import Action
from openai.types.responses.response_output_item import LocalShellCall, LocalShellCallAction


@attrs.frozen
class ShellCall:
    """A turn that asks the ``ShellTool`` to run ``commands``."""

    commands: Sequence[str]
    timeout_ms: int | None = None


@attrs.frozen
class LocalShellRun:
    """A turn that asks the ``LocalShellTool`` to run the argument vector ``command``."""

    command: Sequence[str]


@attrs.frozen
class Patch:
    """A turn that asks the ``ApplyPatchTool`` for one operation on ``path``."""

    type: Literal["create_file", "update_file", "delete_file"]
    path: str
    diff: str = ""
    move_to: str | None = None


@attrs.frozen
class CustomCall:
    """A turn that asks the ``CustomTool`` named ``name`` for a call with the raw ``input``."""

    name: str
    input: str


Turn = tuple[str, Mapping[str, Any]] | ShellCall | LocalShellRun | Patch | CustomCall
"""A function call (tool name, arguments), a shell call, a local shell call, a patch or a
custom tool call."""


def _output_text(item: Mapping[str, Any]) -> str | None:
    """Return the text a tool output item carries back to the model, else ``None``.

    An apply_patch output is its status in brackets, then its output: ``[failed] ...``.
    """
    kind = item.get("type")
    if kind in ("function_call_output", "local_shell_call_output", "custom_tool_call_output"):
        return str(item["output"])
    if kind == "apply_patch_call_output":
        return f"[{item.get('status')}] {item.get('output', '')}"
    if kind == "shell_call_output":
        return "".join(
            str(entry.get("stdout", "")) + str(entry.get("stderr", ""))
            for entry in item.get("output") or []
        )
    return None


def _operation(turn: Patch) -> Any:
    extra = {} if turn.move_to is None else {"move_to": turn.move_to}  # (the SDK reads it)
    if turn.type == "create_file":
        return OperationCreateFile(type="create_file", path=turn.path, diff=turn.diff)
    if turn.type == "delete_file":
        return OperationDeleteFile(type="delete_file", path=turn.path)
    return OperationUpdateFile(type="update_file", path=turn.path, diff=turn.diff, **extra)


def _tool_call(turn: Turn, number: int) -> Any:
    if isinstance(turn, CustomCall):
        return ResponseCustomToolCall(
            type="custom_tool_call",
            id=f"ct{number}",
            call_id=f"c{number}",
            name=turn.name,
            input=turn.input,
        )
    if isinstance(turn, Patch):
        return ResponseApplyPatchToolCall(
            type="apply_patch_call",
            id=f"ap{number}",
            call_id=f"c{number}",
            status="completed",
            operation=_operation(turn),
        )
    if isinstance(turn, ShellCall):
        return ResponseFunctionShellToolCall(
            type="shell_call",
            id=f"sh{number}",
            call_id=f"c{number}",
            status="completed",
            action=Action(commands=list(turn.commands), timeout_ms=turn.timeout_ms),
        )
    if isinstance(turn, LocalShellRun):
        return LocalShellCall(
            type="local_shell_call",
            id=f"ls{number}",
            call_id=f"c{number}",
            status="completed",
            action=LocalShellCallAction(type="exec", command=list(turn.command), env={}),
        )
    name, arguments = turn
    return ResponseFunctionToolCall(
        type="function_call",
        call_id=f"c{number}",
        name=name,
        arguments=json.dumps(arguments),
        id=f"fc{number}",
    )


class ScriptedModel(Model):
    """Ask for one tool call of ``calls`` a turn, then give a final ``done`` message.

    Keeps what it was sent: the system instructions of every turn, and the tool outputs of
    the latest turn's input (function, custom, shell, local shell and apply_patch outputs,
    as text).
    """

    def __init__(self, calls: Sequence[Turn]) -> None:
        self.calls = list(calls)
        self.turn = 0
        self.outputs: list[str] = []
        self.instructions: list[str | None] = []

    async def get_response(
        self, system_instructions: str | None, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        self.instructions.append(system_instructions)
        if isinstance(input, list):
            texts = (_output_text(item) for item in input if isinstance(item, dict))
            self.outputs = [text for text in texts if text is not None]
        self.turn += 1
        item: Any
        if self.turn <= len(self.calls):
            item = _tool_call(self.calls[self.turn - 1], self.turn)
        else:
            item = ResponseOutputMessage(
                id="m",
                type="message",
                role="assistant",
                status="completed",
                content=[ResponseOutputText(type="output_text", text="done", annotations=[])],
            )
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class WorkspaceEditor:
    """An apply_patch editor on the files of ``workspace``, counting the operations it runs.

    Diffs are applied with the SDK's ``apply_diff``, which raises ``ValueError("Invalid
    Context ...")`` when a hunk's context lines are not in the file. ``failing`` says how a
    failed operation is reported: ``"raise"`` the exception, ``"result"`` a failed
    ``ApplyPatchResult`` with its message, ``"mapping"`` the same as a dict.
    """

    def __init__(
        self, workspace: Path, *, failing: Literal["raise", "result", "mapping"] = "raise"
    ) -> None:
        self.workspace = workspace
        self.failing = failing
        self.runs = 0

    def _apply(self, operation: ApplyPatchOperation) -> Any:
        self.runs += 1
        path = self.workspace / operation.path
        try:
            if operation.type == "delete_file":
                path.unlink()
                return ApplyPatchResult(status="completed", output=f"Deleted {operation.path}")
            if operation.type == "create_file":
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(apply_diff("", operation.diff or "", mode="create"))
                return ApplyPatchResult(status="completed", output=f"Created {operation.path}")
            patched = apply_diff(path.read_text(), operation.diff or "")
        except (OSError, ValueError) as exc:
            if self.failing == "raise":
                raise
            if self.failing == "mapping":
                return {"status": "failed", "output": str(exc)}
            return ApplyPatchResult(status="failed", output=str(exc))
        target = self.workspace / (operation.move_to or operation.path)
        target.write_text(patched)
        if target != path:
            path.unlink()
        return ApplyPatchResult(status="completed", output=f"Updated {operation.path}")

    def create_file(self, operation: ApplyPatchOperation) -> Any:
        return self._apply(operation)

    def update_file(self, operation: ApplyPatchOperation) -> Any:
        return self._apply(operation)

    def delete_file(self, operation: ApplyPatchOperation) -> Any:
        return self._apply(operation)


class AsyncWorkspaceEditor(WorkspaceEditor):
    """:class:`WorkspaceEditor` with coroutine methods (the SDK awaits what they return)."""

    async def create_file(self, operation: ApplyPatchOperation) -> Any:
        return self._apply(operation)

    async def update_file(self, operation: ApplyPatchOperation) -> Any:
        return self._apply(operation)

    async def delete_file(self, operation: ApplyPatchOperation) -> Any:
        return self._apply(operation)
