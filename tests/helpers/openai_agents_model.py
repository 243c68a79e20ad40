"""A scripted OpenAI Agents ``Model``: the SDK's real Runner loop, with no LLM behind it.

Import it only after ``pytest.importorskip("agents")``: it builds on the SDK's own types.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)


class ScriptedModel(Model):
    """Ask for one tool call of ``calls`` a turn, then give a final ``done`` message.

    Keeps what it was sent: the system instructions of every turn, and the tool outputs of
    the latest turn's input.
    """

    def __init__(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        self.calls = list(calls)
        self.turn = 0
        self.outputs: list[str] = []
        self.instructions: list[str | None] = []

    async def get_response(
        self, system_instructions: str | None, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        self.instructions.append(system_instructions)
        if isinstance(input, list):
            self.outputs = [
                str(item["output"])
                for item in input
                if isinstance(item, dict) and item.get("type") == "function_call_output"
            ]
        self.turn += 1
        item: Any
        if self.turn <= len(self.calls):
            name, arguments = self.calls[self.turn - 1]
            item = ResponseFunctionToolCall(
                type="function_call",
                call_id=f"c{self.turn}",
                name=name,
                arguments=json.dumps(arguments),
                id=f"fc{self.turn}",
            )
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
