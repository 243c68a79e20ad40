"""``scarguard hook claude-code``: guard Claude Code's own tools through its hooks.

Claude Code runs the hook once per event, as a new process, with the event as JSON on
stdin. The memory in the project's store is what ties the events of one call together:

- ``PreToolUse`` (``tool_name``, ``tool_input``, ``tool_use_id``, ``cwd``,
  ``transcript_path``): the call is checked; a call known to fail again gets
  ``{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
  "permissionDecisionReason": ...}}``, which Claude Code shows to the model; an allowed call
  gets no output at all.
- ``PostToolUse`` (with ``tool_response``) records a success, ``PostToolUseFailure`` (with
  ``error``; a failing ``Bash`` command fires only this one) a failure. An interrupted call
  (``is_interrupt``) is not the call failing and is not recorded.
- Every event first reads the transcript for failures that reached no hook (calls Claude
  Code rejects at input validation, before ``PreToolUse``: an ``Edit`` whose
  ``old_string`` is not in the file, a ``Read`` of a missing file); see
  :mod:`scarguard.integrations._transcript`.

A hook that fails for its own reasons (a malformed event, a store it cannot open) prints
nothing and exits 0, so Claude Code runs the tool as if there were no hook.

Guarded: ``Bash``, ``Edit``, ``MultiEdit``, ``Write``, ``Read``, ``NotebookEdit``, ``Glob``,
``Grep`` and MCP tools (``mcp__<server>__<tool>``); ``hook install`` writes the matchers.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from scarguard.integrations._project import open_project_memory
from scarguard.integrations._transcript import HookState, failed_results, result_text
from scarguard.memory import FailureMemory
from scarguard.tenancy import project_root

__all__ = ["GUARDED_TOOLS", "answer", "call_of", "main"]

GUARDED_TOOLS = "Bash|Edit|MultiEdit|Write|Read|NotebookEdit|Glob|Grep|mcp__.*"
"""The hook matcher: Claude Code's tools that act on files and commands, and MCP tools."""
_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"})
_BASH_KEEP = ("command",)
"""What decides a Bash call (its description and timeout do not change what it does)."""
_SESSION = re.compile(r"[^A-Za-z0-9_.-]")


def call_of(tool: str, tool_input: Mapping[str, Any]) -> dict[str, Any]:
    """Return the arguments of a Claude Code tool call as the memory sees them."""
    if tool == "Bash":
        return {key: tool_input[key] for key in _BASH_KEEP if key in tool_input}
    return dict(tool_input)


def _deny(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def _response_error(response: Any) -> str | None:
    """Return the error text of an MCP tool's response that reports ``isError``."""
    if isinstance(response, dict) and response.get("isError"):
        return result_text(response.get("content")) or "the tool reported an error"
    return None


def answer(
    event: Any,
    *,
    path: str | None = None,
    workspace: str = "default",
    project: str | None = None,
    enforce: bool = True,
) -> dict[str, Any] | None:
    """Handle one hook event; return the JSON to print, or ``None`` to print nothing.

    Raises:
        Exception: Anything going wrong here; :func:`main` turns it into no output.
    """
    if not isinstance(event, dict) or event.get("hook_event_name") not in _EVENTS:
        return None
    tool, tool_input = event.get("tool_name"), event.get("tool_input")
    if not isinstance(tool, str) or not tool or not isinstance(tool_input, dict):
        return None
    given = event.get("cwd")
    cwd = given if isinstance(given, str) and given else os.getcwd()
    session = _SESSION.sub("_", str(event.get("session_id") or "unknown"))[:80]
    use_id = str(event.get("tool_use_id") or "")
    memory = open_project_memory(
        path, workspace=workspace, project=project, cwd=cwd, enforce=enforce
    )
    try:
        with HookState.locked(state_dir(cwd) / f"{session}.json") as state:
            transcript = event.get("transcript_path")
            if isinstance(transcript, str) and transcript:
                for _, name, recovered_input, error in failed_results(state, transcript):
                    memory.record(name, call_of(name, recovered_input), ok=False, error=error)
            return _handle(memory, state, event, tool, call_of(tool, tool_input), use_id)
    finally:
        memory.close()


def _handle(
    memory: FailureMemory,
    state: HookState,
    event: dict[str, Any],
    tool: str,
    args: dict[str, Any],
    use_id: str,
) -> dict[str, Any] | None:
    kind = event["hook_event_name"]
    if kind == "PreToolUse":
        decision = memory.check(tool, args)
        if decision.allowed:
            return None
        state.account(use_id)  # its result is this refusal, not the call failing
        return _deny(decision.message)
    if use_id and state.accounted(use_id):
        return None
    state.account(use_id)
    if kind == "PostToolUseFailure":
        if not event.get("is_interrupt"):
            memory.record(tool, args, ok=False, error=str(event.get("error") or "failed"))
        return None
    error = _response_error(event.get("tool_response"))
    memory.record(tool, args, ok=error is None, error=error)
    return None


def main(
    stdin: IO[str],
    stdout: IO[str],
    *,
    path: str | None = None,
    workspace: str = "default",
    project: str | None = None,
    enforce: bool = True,
) -> int:
    """Read one event from ``stdin``, print the answer (if any) to ``stdout``; return 0.

    Fails open: whatever goes wrong, nothing is printed and the exit code is 0, so the tool
    runs as if no hook were installed. Set ``SCARGUARD_HOOK_DEBUG=1`` to see why on stderr.
    """
    try:
        event = json.loads(stdin.read())
        reply = answer(event, path=path, workspace=workspace, project=project, enforce=enforce)
    except Exception as exc:
        if os.environ.get("SCARGUARD_HOOK_DEBUG"):
            print(f"scarguard hook: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 0
    if reply is not None:
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()
    return 0


def state_dir(cwd: str) -> Path:
    """Return where the hooks of the project around ``cwd`` keep their per-session state."""
    return project_root(cwd) / ".scarguard" / "claude-code"
