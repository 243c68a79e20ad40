"""``scarguard hook install claude-code``: settings merged, never clobbered, shown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scarguard.integrations.claude_code import GUARDED_TOOLS
from scarguard.integrations.hook_install import EVENTS, install

pytestmark = pytest.mark.slow  # installs and runs the hook command in subprocesses


def _install(cwd: Path, home: Path, *options: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HOME=str(home))
    return subprocess.run(
        [sys.executable, "-m", "scarguard", "hook", "install", "claude-code", *options],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "pkg").mkdir()
    return root


def test_install_merges_with_existing_settings_and_shows_what_it_wrote(
    repo: Path, tmp_path: Path
) -> None:
    """Other settings and other hooks stay; the three entries are added; the output says so."""
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs = {"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write"}]}
    settings.write_text(
        json.dumps(
            {
                "model": "opus",
                "permissions": {"allow": ["Bash(ls)"]},
                "hooks": {"PostToolUse": [theirs]},
            }
        )
    )
    done = _install(repo / "pkg", tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert str(settings) in done.stdout
    assert "PreToolUse" in done.stdout and "hook claude-code" in done.stdout
    written = json.loads(settings.read_text())
    assert written["model"] == "opus"
    assert written["permissions"] == {"allow": ["Bash(ls)"]}
    assert written["hooks"]["PostToolUse"][0] == theirs
    for event in EVENTS:
        ours = written["hooks"][event][-1]
        assert ours["matcher"] == GUARDED_TOOLS
        assert "hook claude-code" in ours["hooks"][0]["command"]
    assert not (tmp_path / "home" / ".claude").exists()


def test_installing_twice_changes_nothing(repo: Path, tmp_path: Path) -> None:
    """A second install replaces its own entries instead of adding copies."""
    _install(repo, tmp_path / "home")
    first = (repo / ".claude" / "settings.json").read_text()
    _install(repo, tmp_path / "home")
    assert (repo / ".claude" / "settings.json").read_text() == first
    assert all(len(entries) == 1 for entries in json.loads(first)["hooks"].values())


def test_user_scope_writes_the_home_settings(repo: Path, tmp_path: Path) -> None:
    """--user writes ~/.claude/settings.json and leaves the project alone."""
    done = _install(repo, tmp_path / "home", "--user", "--path", "/srv/agents.db", "-p", "web")
    assert done.returncode == 0, done.stderr
    written = json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())
    command = written["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert command.endswith("hook claude-code --path /srv/agents.db -p web")
    assert not (repo / ".claude").exists()


def test_a_broken_settings_file_is_left_alone(repo: Path, tmp_path: Path) -> None:
    """Invalid JSON is reported and never overwritten."""
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {')
    done = _install(repo, tmp_path / "home")
    assert done.returncode == 2
    assert "not valid JSON" in done.stderr
    assert settings.read_text() == '{"hooks": {'


def test_hooks_of_the_wrong_shape_are_refused(tmp_path: Path) -> None:
    """A settings file whose hooks are not an object is not rewritten."""
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": ["not", "an", "object"]}))
    with pytest.raises(ValueError, match="not a JSON object"):
        install(settings, "scarguard hook claude-code")
    assert json.loads(settings.read_text()) == {"hooks": ["not", "an", "object"]}


def test_the_installed_command_runs(repo: Path, tmp_path: Path) -> None:
    """The command written into the settings is one that answers a hook event."""
    _install(repo, tmp_path / "home")
    written = json.loads((repo / ".claude" / "settings.json").read_text())
    command = written["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    event = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_1",
        "cwd": str(repo),
        "session_id": "s",
    }
    done = subprocess.run(
        command,
        shell=True,
        input=json.dumps(event),
        capture_output=True,
        text=True,
        cwd=repo,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, "")
    assert (repo / ".scarguard" / "memory.db").exists()
