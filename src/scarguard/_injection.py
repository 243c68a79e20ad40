"""Putting the guard block into a prompt or a message list, replacing the one put before.

The block sits between two markers, so injecting again replaces it where it is instead of
stacking copies, and an empty block removes a stale one (and the blank line or the message
that held only it). A mixin of :class:`~scarguard.PromptGuard`, which renders the block.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

__all__ = ["InjectionMixin"]


def _join(before: str, after: str) -> str:
    """Join two prompt pieces with one blank line (nothing when one is empty)."""
    return before + "\n\n" + after if before and after else before + after


class InjectionMixin:
    """Injecting a rendered block: into a prompt string, or into a list of messages."""

    start_marker: str
    end_marker: str
    placement: str
    _stale: re.Pattern[str]

    if TYPE_CHECKING:  # provided by PromptGuard

        def block(self) -> str:
            """Return the guard block, or ``""`` when there is nothing to show."""

    def _core(self, block: str) -> str:
        return f"{self.start_marker}\n{block}\n{self.end_marker}" if block else ""

    def _inject(self, prompt: str, block: str) -> str:
        core = self._core(block)
        stale = self._stale.search(prompt)
        if stale is not None:
            before, after = prompt[: stale.start()], prompt[stale.end() :]
            if core:
                return before + core + after  # in place: the prompt around it stays the same
            return _join(before.removesuffix("\n\n"), after.removeprefix("\n\n"))
        if not core:
            return prompt
        return _join(core, prompt) if self.placement == "before" else _join(prompt, core)

    def _strip(self, text: str) -> str:
        """Return ``text`` without any block (and the blank line that set it apart)."""
        while (stale := self._stale.search(text)) is not None:
            before, after = text[: stale.start()], text[stale.end() :]
            text = _join(before.removesuffix("\n\n"), after.removeprefix("\n\n"))
        return text

    def inject(self, prompt: str) -> str:
        """Return ``prompt`` with the block after it (or before: ``placement``).

        A block injected before is replaced where it is; an empty block removes it.
        """
        return self._inject(prompt, self.block())

    def inject_messages(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Return a new message list carrying the block.

        With ``placement="after"`` or ``"before"`` the block goes into the first system (or
        developer) message; without one, a system message is inserted at index 0. With
        ``"message"`` it is a system message of its own right after the first system
        message (at index 0 without one). The input list and its messages are never
        modified. ``content`` may be a string or a list of content parts
        (``{"type": "text", "text": ...}``); a stale block is replaced either way.
        """
        block = self.block()
        result: list[dict[str, Any]] = [dict(m) if isinstance(m, Mapping) else m for m in messages]
        if self.placement == "message":
            return self._own_message(result, block)
        for index, message in enumerate(result):
            if not self._is_system(message):
                continue
            content = message.get("content")
            if isinstance(content, str):
                message["content"] = self._inject(content, block)
            elif isinstance(content, list):
                message["content"] = self._inject_parts(content, block)
            else:
                continue
            if not block and not message["content"]:
                del result[index]  # only the block was there: leave no empty system message
            return result
        if block:
            result.insert(0, {"role": "system", "content": self._core(block)})
        return result

    @staticmethod
    def _is_system(message: object) -> bool:
        return isinstance(message, dict) and message.get("role") in ("system", "developer")

    def _own_message(self, messages: list[dict[str, Any]], block: str) -> list[dict[str, Any]]:
        """Put the block in a system message of its own (replacing the one put before)."""
        result: list[dict[str, Any]] = []
        where: int | None = None
        first_system: int | None = None
        for message in messages:
            content = message.get("content") if isinstance(message, dict) else None
            if (
                self._is_system(message)
                and isinstance(content, str)
                and self._stale.search(content)
            ):
                stripped = self._strip(content)
                if not stripped.strip():
                    where = len(result) if where is None else where
                    continue  # the block's own message: put back below, at the same place
                message = {**message, "content": stripped}
            if first_system is None and self._is_system(message):
                first_system = len(result)
            result.append(message)
        if block:
            if where is None:
                where = 0 if first_system is None else first_system + 1
            result.insert(where, {"role": "system", "content": self._core(block)})
        return result

    def _inject_parts(self, parts: list[Any], block: str) -> list[Any]:
        kept: list[Any] = []
        where: int | None = None
        for part in parts:
            text = part.get("text") if isinstance(part, Mapping) else None
            if isinstance(text, str) and self._stale.search(text):
                text = self._strip(text)
                if not text.strip():
                    where = len(kept) if where is None else where
                    continue
                part = {**part, "text": text}
            kept.append(part)
        if block:
            if where is None:
                where = 0 if self.placement == "before" else len(kept)
            kept.insert(where, {"type": "text", "text": self._core(block)})
        return kept
