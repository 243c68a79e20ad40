"""A scripted OpenAI Agents ``Model``: the SDK's real Runner loop, with no LLM behind it.

Import it only after ``pytest.importorskip("agents")``: it builds on the SDK's own types.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionShellToolCall,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
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


Turn = tuple[str, Mapping[str, Any]] | ShellCall | LocalShellRun
"""A function call (tool name, arguments), a shell call or a local shell call."""


def _output_text(item: Mapping[str, Any]) -> str | None:
    """Return the text a tool output item carries back to the model, else ``None``."""
    kind = item.get("type")
    if kind in ("function_call_output", "local_shell_call_output"):
        return str(item["output"])
    if kind == "shell_call_output":
        return "".join(
            str(entry.get("stdout", "")) + str(entry.get("stderr", ""))
            for entry in item.get("output") or []
        )
    return None


def _tool_call(turn: Turn, number: int) -> Any:
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
    the latest turn's input (function, shell and local shell outputs, as text).
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
