"""``scarguard hook install claude-code``: add the hooks to Claude Code's settings.

Writes one entry for each of ``PreToolUse``, ``PostToolUse`` and ``PostToolUseFailure`` to
``.claude/settings.json`` at the project root (``--project``, the default) or to
``~/.claude/settings.json`` (``--user``). The file is merged, never clobbered: other
settings and other hooks stay as they are, an entry this command wrote before is updated in
place (installing twice changes nothing), a file that is not valid JSON is left alone with an
error, and the new file replaces the old one atomically. What was written is printed.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from scarguard.integrations.claude_code import GUARDED_TOOLS
from scarguard.tenancy import project_root

__all__ = ["EVENTS", "hook_command", "install", "main"]

EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
_MARK = "hook claude-code"
_TIMEOUT = 10


def hook_command(options: list[str]) -> str:
    """Return the command Claude Code runs: ``scarguard`` on PATH, else this interpreter."""
    found = shutil.which("scarguard")
    base = ["scarguard"] if found else [sys.executable, "-m", "scarguard"]
    return shlex.join([*base, "hook", "claude-code", *options])


def settings_file(scope: str, cwd: str | None = None) -> Path:
    """Return the settings file of ``scope`` (``"project"`` or ``"user"``)."""
    if scope == "user":
        return Path.home() / ".claude" / "settings.json"
    return project_root(cwd) / ".claude" / "settings.json"


def _ours(entry: Any) -> bool:
    hooks = entry.get("hooks") if isinstance(entry, dict) else None
    return isinstance(hooks, list) and any(
        isinstance(h, dict)
        and _MARK in str(h.get("command", ""))
        and "scarguard" in str(h.get("command", ""))
        for h in hooks
    )


def install(path: Path, command: str) -> dict[str, Any]:
    """Merge the scarguard hook entries into the settings at ``path``; return what was written.

    Raises:
        ValueError: The file exists but is not a JSON object, or its ``hooks`` is not one.
    """
    settings: dict[str, Any] = {}
    if path.exists():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8") or "{}")
        except ValueError as exc:
            raise ValueError(f"{path} is not valid JSON ({exc}); fix it first") from None
        if not isinstance(loaded, dict):
            raise ValueError(f"{path} does not hold a JSON object; fix it first")
        settings = loaded
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError(f'"hooks" in {path} is not a JSON object; fix it first')
    entry = {
        "matcher": GUARDED_TOOLS,
        "hooks": [{"type": "command", "command": command, "timeout": _TIMEOUT}],
    }
    written: dict[str, Any] = {}
    for event in EVENTS:
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise ValueError(f'"hooks.{event}" in {path} is not a JSON list; fix it first')
        kept = [e for e in entries if not _ours(e)]
        hooks[event] = [*kept, entry]
        written[event] = [entry]
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".settings.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(settings, f, indent=2)
            f.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return {"hooks": written}


def main(agent: str, scope: str, options: list[str]) -> int:
    """Install the hooks of ``agent`` in ``scope``; print what was written; return the exit code."""
    path = settings_file(scope)
    try:
        written = install(path, hook_command(options))
    except (ValueError, OSError) as exc:
        print(f"scarguard hook install: {exc}", file=sys.stderr)
        return 2
    print(f"Wrote the {agent} hooks to {path}:")
    print(json.dumps(written, indent=2))
    return 0
