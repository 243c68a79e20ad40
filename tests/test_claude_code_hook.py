"""``scarguard hook claude-code``: recorded hook events in, Claude Code's answers out.

The events follow Claude Code's documented hook input (common fields ``session_id``,
``transcript_path``, ``cwd``, ``permission_mode``, ``hook_event_name``; ``tool_name``,
``tool_input``, ``tool_use_id``; ``tool_response`` after a success, ``error`` and
``is_interrupt`` after a failure) and the transcript's JSON lines (assistant ``tool_use``
blocks, user ``tool_result`` blocks with ``is_error``). Each event runs the real command in
its own process, as Claude Code does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scarguard import FailureMemory

pytestmark = pytest.mark.slow  # each hook runs as a subprocess

SESSION = "0b5e7a52-3f1c-4d55-9a8e-1c2f3a4b5c6d"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hello')\n")
    return root


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("SCARGUARD_PATH", None)
    return env


def _hook(event: Any, cwd: Path, *options: str) -> subprocess.CompletedProcess[str]:
    text = event if isinstance(event, str) else json.dumps(event)
    return subprocess.run(
        [sys.executable, "-m", "scarguard", "hook", "claude-code", *options],
        input=text,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=_env(),
        timeout=60,
    )


def _event(
    root: Path, kind: str, tool: str, tool_input: dict[str, Any], n: int, **extra: Any
) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": str(root / "transcript.jsonl"),
        "cwd": str(root / "src"),
        "permission_mode": "default",
        "hook_event_name": kind,
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": f"toolu_{n:04d}",
        **extra,
    }


def _transcript(root: Path, *entries: dict[str, Any]) -> None:
    with open(root / "transcript.jsonl", "a", encoding="utf-8") as f:
        for entry in entries:
            f.write(json.dumps(entry) + "\n")


def _tool_use(n: int, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "assistant",
        "sessionId": SESSION,
        "message": {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": f"toolu_{n:04d}", "name": tool, "input": tool_input}
            ],
        },
    }


def _tool_result(n: int, content: str, *, error: bool) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": f"toolu_{n:04d}",
        "content": content,
    }
    if error:
        block["is_error"] = True
    return {"type": "user", "sessionId": SESSION, "message": {"role": "user", "content": [block]}}


def _memory(root: Path) -> FailureMemory:
    return FailureMemory(root / ".scarguard" / "memory.db", project=str(root.resolve()))


def _denied(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    output = answer["hookSpecificOutput"]
    assert output["hookEventName"] == "PreToolUse"
    assert output["permissionDecision"] == "deny"
    return str(output["permissionDecisionReason"])


BASH = {"command": "npm run deploy", "description": "Deploy the app", "timeout": 120000}
BASH_ERROR = 'Exit code 1\nnpm ERR! Missing script: "deploy"'


def test_a_bash_command_failing_twice_is_denied_with_the_reason(project: Path) -> None:
    """Two PostToolUseFailure events for one command, then its PreToolUse gets a deny."""
    for n in (1, 2):
        assert _hook(_event(project, "PreToolUse", "Bash", BASH, n), project).stdout == ""
        done = _hook(
            _event(project, "PostToolUseFailure", "Bash", BASH, n, error=BASH_ERROR), project
        )
        assert (done.returncode, done.stdout) == (0, "")
    again = dict(BASH, description="Try the deploy again")  # the description does not matter
    reason = _denied(_hook(_event(project, "PreToolUse", "Bash", again, 3), project))
    assert "Bash" in reason
    assert "npm run deploy" in reason
    other = {"command": "npm run build"}
    assert _hook(_event(project, "PreToolUse", "Bash", other, 4), project).stdout == ""


def test_an_edit_rejected_before_any_hook_is_recovered_from_the_transcript(project: Path) -> None:
    """An Edit whose old_string is missing fires no post event; the transcript teaches it."""
    edit = {
        "file_path": str(project / "src" / "app.py"),
        "old_string": "print('goodbye')",
        "new_string": "print('bye')",
        "replace_all": False,
    }
    _transcript(
        project,
        _tool_use(1, "Edit", edit),
        _tool_result(
            1,
            "<tool_use_error>String to replace not found in file.\n"
            "String: print('goodbye')</tool_use_error>",
            error=True,
        ),
    )
    reason = _denied(_hook(_event(project, "PreToolUse", "Edit", edit, 2), project))
    assert "app.py" in reason
    failures = _memory(project).recent_failures()
    assert [(f.tool, f.signature) for f in failures] == [("Edit", "edit_failed")]
    # the next hook reads the same transcript again: nothing is recorded twice
    _hook(_event(project, "PreToolUse", "Read", {"file_path": edit["file_path"]}, 3), project)
    assert len(_memory(project).recent_failures()) == 1


def test_our_own_denial_in_the_transcript_is_not_a_failure(project: Path) -> None:
    """The is_error result a deny produces is not recorded as the call failing again."""
    for n in (1, 2):
        _hook(_event(project, "PostToolUseFailure", "Bash", BASH, n, error=BASH_ERROR), project)
    reason = _denied(_hook(_event(project, "PreToolUse", "Bash", BASH, 3), project))
    _transcript(project, _tool_use(3, "Bash", BASH), _tool_result(3, reason, error=True))
    _hook(_event(project, "PreToolUse", "Bash", {"command": "ls"}, 4), project)
    assert len(_memory(project).recent_failures(limit=50)) == 2  # the two real failures only


def test_successful_events_pass_without_output(project: Path) -> None:
    """PreToolUse and PostToolUse of working calls print nothing and record no failure."""
    read = {"file_path": str(project / "src" / "app.py")}
    for n, (tool, tool_input, response) in enumerate(
        [
            ("Read", read, {"type": "text", "file": {"filePath": read["file_path"]}}),
            ("Bash", {"command": "ls"}, {"stdout": "app.py", "stderr": "", "interrupted": False}),
            (
                "mcp__github__get_issue",
                {"number": 7},
                {"content": [{"type": "text", "text": "ok"}]},
            ),
        ]
    ):
        pre = _hook(_event(project, "PreToolUse", tool, tool_input, n), project)
        post = _hook(
            _event(project, "PostToolUse", tool, tool_input, n, tool_response=response), project
        )
        assert (pre.returncode, pre.stdout, post.returncode, post.stdout) == (0, "", 0, "")
    assert _memory(project).recent_failures() == []


def test_an_mcp_tool_is_guarded_by_its_full_name(project: Path) -> None:
    """mcp__server__tool failures are learned and refused like any other tool."""
    tool, tool_input = "mcp__db__read_config", {"path": "missing.toml"}
    error = "FileNotFoundError: [Errno 2] No such file or directory: 'missing.toml'"
    _hook(_event(project, "PostToolUseFailure", tool, tool_input, 1, error=error), project)
    reason = _denied(_hook(_event(project, "PreToolUse", tool, tool_input, 2), project))
    assert "mcp__db__read_config" in reason


def test_observe_mode_records_but_never_denies(project: Path) -> None:
    """With --observe the same failures are learned, and the call is still allowed."""
    for n in (1, 2):
        event = _event(project, "PostToolUseFailure", "Bash", BASH, n, error=BASH_ERROR)
        _hook(event, project, "--observe")
    done = _hook(_event(project, "PreToolUse", "Bash", BASH, 3), project, "--observe")
    assert (done.returncode, done.stdout) == (0, "")
    assert _memory(project).constraints() != []
    _denied(_hook(_event(project, "PreToolUse", "Bash", BASH, 4), project))


def test_an_interrupted_call_is_not_recorded(project: Path) -> None:
    """A call the user interrupted did not fail: nothing is learned from it."""
    for n in (1, 2, 3):
        _hook(
            _event(
                project,
                "PostToolUseFailure",
                "Bash",
                BASH,
                n,
                error="Interrupted by user",
                is_interrupt=True,
            ),
            project,
        )
    assert _hook(_event(project, "PreToolUse", "Bash", BASH, 4), project).stdout == ""
    assert _memory(project).recent_failures() == []


@pytest.mark.parametrize(
    "event",
    [
        "",
        "{not json",
        "[1, 2, 3]",
        json.dumps({"hook_event_name": "PreToolUse"}),
        json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": "ls"}),
        json.dumps({"hook_event_name": "Stop", "session_id": SESSION}),
    ],
)
def test_a_malformed_event_exits_0_without_output(project: Path, event: str) -> None:
    """Whatever arrives on stdin, the hook never blocks a tool and prints nothing."""
    done = _hook(event, project)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_store_that_cannot_be_opened_fails_open(project: Path) -> None:
    """A broken store means no answer, not a blocked tool."""
    (project / ".scarguard").mkdir()
    (project / ".scarguard" / "memory.db").write_text("this is not a database")
    done = _hook(_event(project, "PreToolUse", "Bash", BASH, 1), project)
    assert (done.returncode, done.stdout) == (0, "")


def test_neither_the_package_nor_the_hook_imports_the_mcp_sdk() -> None:
    """`import scarguard`, the CLI and the hook driver leave the MCP SDK unimported."""
    code = (
        "import sys, scarguard, scarguard.cli, scarguard.integrations.claude_code, "
        "scarguard.integrations.hook_install; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), done.stderr


def test_a_check_only_process_never_builds_the_signature_bank(tmp_path: Path) -> None:
    """A hook answering ``PreToolUse`` only checks: the default bank's patterns stay unbuilt.

    Building it compiles every signature's pattern, a good part of a process's start; the
    first failure to name builds it.
    """
    path = str(tmp_path / "memory.db")
    code = (
        "import sys\n"
        "from scarguard import FailureMemory\n"
        f"m = FailureMemory({path!r})\n"
        "m.check('bash', {'command': 'ls'})\n"
        "before = 'scarguard.naming.bank' in sys.modules\n"
        "m.record('bash', {'command': 'ls'}, error='command failed: exit code 1')\n"
        "print(before, 'scarguard.naming.bank' in sys.modules)\n"
        "m.close()"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.split()) == (0, ["False", "True"]), done.stderr
