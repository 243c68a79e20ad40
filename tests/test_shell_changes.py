"""Which shell commands change the workspace, and which may put a program on ``PATH``."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from scarguard import FailureMemory, ToolBlocked, guarded_tool
from scarguard.adapters import ToolCallAdapter
from scarguard.adapters._shell_changes import installs, shell_changes_workspace
from scarguard.testing import FakeClock


@pytest.mark.parametrize(
    "command",
    [
        "kill $(lsof -t -i:3000)",
        "rm -rf build",
        "pip install requests",
        "cd app && npm install",
        "git checkout main",
        "sudo systemctl restart nginx",
        "echo 'x = 1' > config.py",
        "sed -i 's/a/b/' app.py",
        "FOO=1 touch new.py",
        "make clean",
        "docker build -t app .",
        "git fetch origin",
        "alembic upgrade head",
        "npx prisma migrate dev",
        "python manage.py migrate",
        "terraform apply -auto-approve",
        "kubectl apply -f deploy.yaml",
        "createdb app_test",
        # a script handed to a shell is read as a command
        "bash -c 'rm -rf build'",
        "sh -lc \"git checkout main\"",
        "bash -c 'cd app && echo 1 > marker'",
        "sudo sh -c 'echo 1 > /etc/app.conf'",
        "su deploy -c 'systemctl restart app'",
        "find . -name '*.pyc' -exec sh -c 'rm \"$1\"' _ {} +",
        "eval \"touch ready\"",
        "bash -c \"bash -c 'rm -rf build'\"",
        "ls > files.txt 2>/dev/null",
        "kubectl exec -it web-0 -- rm -rf /tmp/cache",
        "kubectl -n prod exec deploy/api -c app -- sh -c 'touch /data/ready'",
        # another host's world: a later ssh call to it (or a client of its service) runs there
        "ssh build-host 'rm -rf /tmp/cache'",
        "ssh -i key -p 2222 deploy@web sudo systemctl restart app",
        "podman exec web touch /data/ready",
    ],
)
def test_shell_commands_that_change_the_workspace(command: str) -> None:
    """Commands that change files or processes count as mutating."""
    assert shell_changes_workspace(command)
    adapter = ToolCallAdapter()
    assert adapter.mutating(adapter.describe("bash", {"command": command}))


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat server.js",
        "npm test",
        "pytest -x 2>&1",
        "git status",
        "make build",
        "grep -rn TODO .",
        "npm run build",
        "npx tsc --noEmit",
        "python manage.py test",
        "kubectl get pods",
        "docker ps",
        # a quoted > is no redirect; /dev/null is no file written
        "grep -n \"=>\" src",
        "echo \"a > b\"",
        "git log --format='%h > %s'",
        "ls > /dev/null",
        "make test >/dev/null 2>&1",
        "bash -c 'ls -la'",
        "ssh build-host 'cat /tmp/cache/log'",  # (reads another machine's files)
        "ssh -p 2222 deploy@web uptime",
        "kubectl exec web-0 -- cat /etc/hosts",
        "kubectl logs web-0 --tail 50",
    ],
)
def test_reading_shell_commands_do_not_mutate(command: str) -> None:
    """Reading and testing commands do not count as changing the workspace."""
    assert not shell_changes_workspace(command)
    adapter = ToolCallAdapter()
    assert not adapter.mutating(adapter.describe("bash", {"command": command}))


def test_which_commands_may_put_a_program_on_path() -> None:
    """Installs and environment changes may; builds, merges and readers do not."""
    may = ("pip install foo", "npm i -g foo", "source .venv/bin/activate", "make install")
    shelled = ("bash -lc 'pip install foo'", "sh -c 'cd tools && npm ci'")
    for command in (*may, *shelled, "export PATH=$PATH:/opt/bin", "sudo apt-get install foo"):
        assert installs(command), command
    for command in ("git merge feature", "make build", "ls", "python gen.py", "pip list",
                    "bash -c 'pip list'"):  # fmt: skip
        assert not installs(command), command


def test_a_command_given_as_an_argument_vector_is_the_same_command(tmp_path: Path) -> None:
    """``{"command": ["bash", "-lc", "..."]}`` (how some shell tools take it) is read as the
    command line: the same fingerprint, and a success that changes the world lifts the
    bans of shell commands, through a guarded tool that runs the vector for real."""
    adapter = ToolCallAdapter()
    vector = adapter.describe("shell", {"command": ["git", "checkout", "-q", "my feature"]})
    line = adapter.describe("shell", {"command": "git checkout -q 'my feature'"})
    assert vector.fingerprint == line.fingerprint
    assert adapter.mutating(adapter.describe("shell", {"command": ["rm", "-rf", "build"]}))
    assert adapter.mutating(adapter.describe("shell", {"command": ["bash", "-lc", "make clean"]}))
    assert not adapter.mutating(adapter.describe("shell", {"command": ["ls", "-la"]}))

    memory = FailureMemory(":memory:", root=tmp_path, clock=FakeClock())
    marker = tmp_path.parent / f"{tmp_path.name}-ready"  # outside the workspace: not watched

    @guarded_tool(memory)
    def shell(command: list[str]) -> str:
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"exit {done.returncode}: {done.stderr}")
        return done.stdout

    check = ["python3", "-c", f"import os, sys; sys.exit(not os.path.exists({str(marker)!r}))"]
    for _ in range(2):
        memory.clock.advance(5)  # type: ignore[attr-defined]
        with pytest.raises(RuntimeError):
            shell(check)
    with pytest.raises(ToolBlocked):
        shell(check)
    shell(["ls"])  # a read changes nothing
    with pytest.raises(ToolBlocked):
        shell(check)
    shell(["bash", "-lc", f"touch {shlex.quote(str(marker))}"])
    assert shell(check) == ""
