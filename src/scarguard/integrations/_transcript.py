"""Recover tool failures that reached no hook from a Claude Code session transcript.

Claude Code rejects some calls of its own tools at input validation, before any hook runs
(an ``Edit`` whose ``old_string`` is not in the file, a ``Read`` of a file that does not
exist): neither ``PreToolUse`` nor a post event fires, and the model just sees a
``<tool_use_error>`` result. The session transcript (JSON lines at ``transcript_path``)
records every call (an assistant ``tool_use`` block with ``id``, ``name`` and ``input``) and
every result (a user ``tool_result`` block with ``tool_use_id``, ``content`` and
``is_error``). Each hook process reads the lines added since the last one and records the
failed results no hook reported.

What was read is kept per session in a small JSON file under an exclusive lock (hooks of
parallel tool calls run at once): the byte offset reached, the calls whose result has not
been seen yet, and the ids already accounted for (reported by a post hook, refused by the
pre hook, or recovered here), so no failure is recorded twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["HookState", "ToolFailure", "failed_results"]

_KEEP = 512
"""Ids and pending calls kept per session (oldest dropped first)."""
_READ_LIMIT = 8 * 1024 * 1024
"""Most bytes of new transcript read by one hook process."""
_TAGS = re.compile(r"</?tool_use_error>")
_NOT_FAILURES = re.compile(
    r"(?i)doesn't want to proceed|was rejected by the user|user rejected|"
    r"hook (?:error|blocked)|blocked by (?:a )?hook|permission to use .* (?:was )?denied"
)
"""Results that are a person's or a hook's refusal, not the call failing."""

ToolFailure = tuple[str, str, dict[str, Any], str]
"""A recovered failure: tool use id, tool name, tool input, error text."""


class HookState:
    """The per-session bookkeeping of what the hooks have read and recorded (hold the lock).

    Args:
        path: The JSON file (created on first save).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.transcript = ""
        self.pending: dict[str, list[Any]] = {}
        self.seen: list[str] = []

    @classmethod
    @contextlib.contextmanager
    def locked(cls, path: Path) -> Iterator[HookState]:
        """Load the state under an exclusive lock, and save it when the block succeeds."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = cls(path)
            state._load()
            yield state
            state._save()

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict):
            self.offset = int(data.get("offset", 0))
            self.transcript = str(data.get("transcript", ""))
            self.pending = dict(data.get("pending", {}))
            self.seen = [str(i) for i in data.get("seen", [])]

    def _save(self) -> None:
        self.seen = self.seen[-_KEEP:]
        if len(self.pending) > _KEEP:
            self.pending = dict(list(self.pending.items())[-_KEEP:])
        data = {
            "offset": self.offset,
            "transcript": self.transcript,
            "pending": self.pending,
            "seen": self.seen,
        }
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(data), encoding="utf-8")
        os.replace(temporary, self.path)

    def accounted(self, tool_use_id: str) -> bool:
        """Return whether a result of this call was already recorded or refused."""
        return tool_use_id in self.seen

    def account(self, tool_use_id: str) -> None:
        """Remember that this call's outcome is taken care of."""
        if tool_use_id and tool_use_id not in self.seen:
            self.seen.append(tool_use_id)
        self.pending.pop(tool_use_id, None)


def failed_results(state: HookState, transcript: str) -> list[ToolFailure]:
    """Read the transcript lines added since the last hook; return failures not yet recorded.

    Each returned failure is marked accounted for in ``state``. A transcript that is missing,
    replaced or shorter than before is read from its start.
    """
    path = Path(transcript)
    try:
        size = path.stat().st_size
    except OSError:
        return []
    if transcript != state.transcript or size < state.offset:
        state.transcript, state.offset = transcript, 0
    if size == state.offset:
        return []
    with open(path, "rb") as f:
        f.seek(state.offset)
        chunk = f.read(min(size - state.offset, _READ_LIMIT))
    complete = chunk.rfind(b"\n") + 1  # a line still being written waits for the next hook
    if complete == 0 and len(chunk) == _READ_LIMIT:  # one line longer than the limit: skip it
        state.offset += len(chunk)
        return []
    state.offset += complete
    found: list[ToolFailure] = []
    for line in chunk[:complete].splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        for block in _blocks(entry):
            kind = block.get("type")
            if kind == "tool_use" and isinstance(block.get("id"), str):
                state.pending[block["id"]] = [block.get("name"), block.get("input")]
            elif kind == "tool_result" and isinstance(block.get("tool_use_id"), str):
                failure = _failure(state, block)
                if failure is not None:
                    found.append(failure)
    return found


def _blocks(entry: Any) -> list[dict[str, Any]]:
    if not isinstance(entry, dict):
        return []
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict)]


def _failure(state: HookState, block: dict[str, Any]) -> ToolFailure | None:
    use_id = block["tool_use_id"]
    call = state.pending.pop(use_id, None)
    if not block.get("is_error") or state.accounted(use_id) or call is None:
        return None
    name, tool_input = call
    text = _TAGS.sub("", result_text(block.get("content"))).strip()
    if not isinstance(name, str) or not isinstance(tool_input, dict) or not text:
        return None
    if _NOT_FAILURES.search(text):
        return None
    state.account(use_id)
    return use_id, name, tool_input, text


def result_text(content: Any) -> str:
    """Return the text of a tool result's ``content`` (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    if isinstance(content, dict):
        return str(content.get("text") or content.get("error") or "")
    return ""
