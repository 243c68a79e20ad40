"""Conditions named by the failure: a ban goes stale only on a change that can end it.

Real files in tmp_path, real ``make``, ``bash`` and ``git`` where the case is about them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from helpers.engine import memory_in
from helpers.git import git
from scarguard import FailureMemory
from scarguard.learning._make import make_defines, missing_make_target
from scarguard.learning._programs import missing_program

NO_DEPLOY = "make: *** No rule to make target 'deploy'.  Stop."
MAKEFILE = "build:\n\tmkdir -p build\n"


def run(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), cwd=root, capture_output=True, text=True)


def allowed(memory: FailureMemory, tool: str, args: Mapping[str, object]) -> bool:
    return memory.check(tool, dict(args)).allowed




# -- the wordings ---------------------------------------------------------------------------


def test_the_wordings_name_what_is_missing() -> None:
    """The make target, the program; a Makefile text judged for a target."""
    assert missing_make_target(NO_DEPLOY) == "deploy"
    assert missing_make_target("make: *** No rule to make target `deps'.  Stop.") == "deps"
    assert missing_program("bash: line 1: bad_command: command not found") == "bad_command"
    assert missing_program("zsh: command not found: foo") == "foo"
    assert missing_program('exec: "foo": executable file not found in $PATH') == "foo"
    assert missing_program("sh: 1: tsc: not found") == "tsc"  # dash, npm's script shell
    assert missing_program("exit code 1") is None
    assert not make_defines("deploy.perftest:\n\tsam deploy\n", "deploy")
    assert make_defines("all deploy: build\n\techo\n", "deploy")
    assert make_defines("include rules.mk\n", "deploy")  # cannot be judged without make
    assert make_defines("%: %.c\n\tcc $<\n", "deploy")
    assert not make_defines("DEPLOY := deploy\n# deploy: later\n\tdeploy:\n", "deploy")


# -- make targets ---------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_a_makefile_change_that_does_not_define_the_target_keeps_the_ban(tmp_path: Path) -> None:
    """Edited outside the tools: still no deploy -> refused; deploy added -> runs."""
    (tmp_path / "Makefile").write_text(MAKEFILE)
    memory = memory_in(tmp_path)
    done = run(tmp_path, "make", "deploy")
    assert "No rule to make target" in done.stderr
    memory.record("make", {"target": "deploy"}, error=done.stderr)
    assert not allowed(memory, "make", {"target": "deploy"})
    (tmp_path / "Makefile").write_text(MAKEFILE + "test:\n\t@echo testing\n")
    assert not allowed(memory, "make", {"target": "deploy"})
    (tmp_path / "Makefile").write_text(MAKEFILE + "deploy: build\n\t@echo deployed\n")
    assert allowed(memory, "make", {"target": "deploy"})
    assert run(tmp_path, "make", "deploy").stdout.strip().endswith("deployed")


def test_a_guarded_edit_of_the_makefile_lifts_only_if_it_puts_the_target_in(
    tmp_path: Path,
) -> None:
    """Tool evidence: the edit's new text decides (also for a Makefile the observer cannot see)."""
    (tmp_path / "Makefile").write_text(MAKEFILE)
    memory = memory_in(tmp_path)
    memory.record("bash", {"command": "make deploy"}, error=NO_DEPLOY)
    assert not allowed(memory, "bash", {"command": "make deploy"})
    other = {"path": "Makefile", "old_string": "build:", "new_string": "build: app.py"}
    memory.record("edit_file", other, ok=True)
    assert not allowed(memory, "bash", {"command": "make deploy"})
    add = {"path": "Makefile", "old_string": "build:", "new_string": "deploy:\n\techo\nbuild:"}
    memory.record("edit_file", add, ok=True)
    assert allowed(memory, "bash", {"command": "make deploy"})


class _Blind:
    """An observer that sees nothing (the tools act on another machine)."""

    def observe(self, paths: Sequence[str]) -> Mapping[str, str]:
        return {}

    def changed(self, tokens: Mapping[str, str]) -> list[str]:
        return []


def test_without_a_makefile_under_the_root_any_makefile_edit_lifts_as_before(
    tmp_path: Path,
) -> None:
    """A Makefile elsewhere: no condition, so any edit of a Makefile lifts the ban."""
    for observer in (None, _Blind()):
        memory = memory_in(tmp_path, observer=observer)
        memory.record("bash", {"command": "make deploy"}, error=NO_DEPLOY)
        (ban,) = memory.constraints()
        assert ban.params.depends == ()
        edit = {"path": "/srv/Makefile", "old_string": "build:", "new_string": "build: a"}
        memory.record("edit_file", edit, ok=True)
        assert allowed(memory, "bash", {"command": "make deploy"})


def test_git_merge_that_leaves_the_makefile_keeps_make_and_syntax_bans(tmp_path: Path) -> None:
    """A merge changes files, not the Makefile nor the file a syntax error names."""
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "Makefile").write_text(MAKEFILE)
    (tmp_path / "bad.py").write_text("def f(:\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "start")
    git(tmp_path, "checkout", "-qb", "feature")
    (tmp_path / "spec.md").write_text("spec\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "spec")
    git(tmp_path, "checkout", "-q", "main")
    memory = memory_in(tmp_path)
    syntax = run(tmp_path, sys.executable, "bad.py").stderr
    assert "SyntaxError" in syntax
    memory.record("bash", {"command": "make deploy"}, error=NO_DEPLOY)
    memory.record("bash", {"command": "python bad.py"}, error=syntax)
    git(tmp_path, "merge", "-q", "feature")
    memory.record("bash", {"command": "git merge feature"}, ok=True)
    assert not allowed(memory, "bash", {"command": "make deploy"})
    assert not allowed(memory, "bash", {"command": "python bad.py"})
    (tmp_path / "bad.py").write_text("def f():\n    pass\n")
    assert allowed(memory, "bash", {"command": "python bad.py"})
    assert not allowed(memory, "bash", {"command": "make deploy"})


# -- missing programs -----------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_missing_program_is_refused_at_once_until_it_appears(tmp_path: Path) -> None:
    """First repeat refused; an unrelated edit keeps it; the program on PATH lifts it."""
    memory = memory_in(tmp_path)
    args = {"command": "scarguard_no_such_tool --flag"}
    error = run(tmp_path, "bash", "-c", args["command"]).stderr
    assert "command not found" in error
    memory.record("bash", args, error=error)
    assert not allowed(memory, "bash", args)
    memory.record("edit_file", {"path": "a.py", "old_string": "x", "new_string": "y"}, ok=True)
    memory.record("bash", {"command": "git merge feature"}, ok=True)
    assert not allowed(memory, "bash", args)
    assert "scarguard_no_such_tool" in memory.constraints()[0].params.depends
    program = tmp_path / "bin" / "scarguard_no_such_tool"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\necho ok\n")
    program.chmod(0o755)
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = f"{program.parent}{os.pathsep}{path}"
    try:
        assert allowed(memory, "bash", args)
    finally:
        os.environ["PATH"] = path


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_missing_program_installed_under_the_root_by_another_path_is_lifted(
    tmp_path: Path,
) -> None:
    """An install scarguard did not see puts it in .venv/bin, which this PATH lacks: lifted.

    Already there when it failed (the tool's shell lacked it too): kept until it changes.
    """
    memory = memory_in(tmp_path)
    args = {"command": "scarguard_no_such_lint ."}
    error = run(tmp_path, "bash", "-c", args["command"]).stderr
    memory.record("bash", args, error=error)
    memory.record("bash", {"command": "./scripts/bootstrap.sh"}, ok=True)  # installs, unseen
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "scarguard_no_such_lint").write_text("not a bin folder\n")
    assert not allowed(memory, "bash", args)
    program = tmp_path / ".venv" / "bin" / "scarguard_no_such_lint"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\necho ok\n")
    program.chmod(0o755)
    assert allowed(memory, "bash", args)

    other = {"command": "scarguard_no_such_lint --fix"}
    memory.record("bash", other, error=run(tmp_path, "bash", "-c", other["command"]).stderr)
    assert not allowed(memory, "bash", other)  # there, but not on the PATH it ran with
    program.write_text("#!/bin/sh\necho reinstalled\n")
    assert allowed(memory, "bash", other)


def test_an_install_lifts_a_missing_program(tmp_path: Path) -> None:
    """Tool evidence: a successful install may have put it on PATH (also on another machine)."""
    memory = memory_in(tmp_path)
    args = {"command": "scarguard_no_such_tool"}
    memory.record("bash", args, error="bash: scarguard_no_such_tool: command not found")
    assert not allowed(memory, "bash", args)
    memory.record("bash", {"command": "pip install scarguard-no-such-tool"}, ok=True)
    assert allowed(memory, "bash", args)


# -- edits and creates ----------------------------------------------------------------------


def test_a_conflicting_create_holds_while_the_file_exists(tmp_path: Path) -> None:
    """Editing the existing file keeps the ban; deleting it lifts it."""
    (tmp_path / "app.py").write_text("x = 1\n")
    memory = memory_in(tmp_path)
    args = {"path": "app.py", "content": "new\n"}
    memory.record("create_file", args, error="FileExistsError: [Errno 17] File exists: 'app.py'")
    assert not allowed(memory, "create_file", args)
    (tmp_path / "app.py").write_text("x = 2\n")
    assert not allowed(memory, "create_file", args)
    (tmp_path / "app.py").unlink()
    assert allowed(memory, "create_file", args)


def test_an_edit_without_its_text_holds_until_the_text_appears(tmp_path: Path) -> None:
    """A change that does not put the search text in keeps the ban; one that does lifts it."""
    (tmp_path / "app.py").write_text("def add(a, b):\n    return a - b\n")
    memory = memory_in(tmp_path)
    args = {"path": "app.py", "old_string": "def multiply", "new_string": "def times"}
    memory.record("edit_file", args, error="Error: old_string not found in app.py")
    assert not allowed(memory, "edit_file", args)
    (tmp_path / "app.py").write_text("def add(a, b):\n    return a + b\n")
    assert not allowed(memory, "edit_file", args)
    (tmp_path / "app.py").write_text("def  multiply(a, b):\n    return a * b\n")
    assert allowed(memory, "edit_file", args)  # judged loosely: blanks may differ


# -- manifests and nondeterminism -------------------------------------------------------------


def test_a_makefile_edit_does_not_make_a_pytest_ban_stale(tmp_path: Path) -> None:
    """pytest does not read the Makefile; an edit of the code it tests lifts its ban."""
    (tmp_path / "Makefile").write_text(MAKEFILE)
    memory = memory_in(tmp_path)
    args = {"command": "pytest"}
    error = "FAILED test_app.py::test_add - assert -1 == 3\n1 failed\nexit code 1"
    memory.record("bash", args, error=error)
    memory.record("bash", args, error=error)
    assert not allowed(memory, "bash", args)
    edit = {"path": "Makefile", "old_string": "build:", "new_string": "build: app.py"}
    memory.record("edit_file", edit, ok=True)
    (tmp_path / "Makefile").write_text(MAKEFILE.replace("build:", "build: app.py"))
    assert not allowed(memory, "bash", args)
    memory.record("edit_file", {"path": "app.py", "old_string": "-", "new_string": "+"}, ok=True)
    assert allowed(memory, "bash", args)


def test_a_result_that_varies_with_nothing_changed_is_not_refused_at_two(tmp_path: Path) -> None:
    """Failed, passed, failed twice with nothing changed: a warning saying so, not a refusal."""
    memory = memory_in(tmp_path)
    args = {"command": "pytest test_flaky.py"}
    error = "FAILED test_flaky.py::test_timing\n1 failed\nexit code 1"
    memory.record("bash", args, error=error)
    memory.record("bash", args, ok=True)
    memory.record("bash", args, error=error)
    memory.record("bash", args, error=error)
    decision = memory.check("bash", args)
    assert decision.allowed
    assert "varies" in decision.message
    memory.record("bash", args, error=error)
    memory.record("bash", args, error=error)
    assert not allowed(memory, "bash", args)


def test_a_deterministic_kind_is_refused_at_the_first_repeat_even_after_a_success(
    tmp_path: Path,
) -> None:
    """An edit that succeeded once and then failed is refused at its first repeat."""
    (tmp_path / "a.py").write_text("x = 1\n")
    memory = memory_in(tmp_path)
    args = {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}
    memory.record("edit_file", args, ok=True)
    (tmp_path / "a.py").write_text("x = 2\n")
    memory.record("edit_file", args, error="Error: old_string not found in a.py")
    assert not allowed(memory, "edit_file", args)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_a_failing_make_recipe_is_stale_only_when_a_rule_it_reaches_changes(
    tmp_path: Path,
) -> None:
    """Editing another rule or a comment keeps `make test` refused; its own recipe lifts it."""
    (tmp_path / "Makefile").write_text("test: lint\n\t@exit 1\nlint:\n\t@true\nbuild:\n\t@true\n")
    memory = memory_in(tmp_path)
    for _ in range(2):  # a failing recipe is not deterministic: two failures
        done = run(tmp_path, "make", "test")
        assert done.returncode != 0
        memory.record("make", {"target": "test"}, error=f"{done.stderr}\nexit code 2")
    assert not allowed(memory, "make", {"target": "test"})
    (tmp_path / "Makefile").write_text(
        "# the build\ntest: lint\n\t@exit 1\nlint:\n\t@true\nbuild: lint\n\tmkdir -p out\n"
    )
    memory.record("edit_file", {"path": "Makefile", "old_string": "b", "new_string": "c"}, ok=True)
    assert not allowed(memory, "make", {"target": "test"})
    (tmp_path / "Makefile").write_text("test: lint\n\t@exit 1\nlint:\n\t@echo linting\n")
    assert allowed(memory, "make", {"target": "test"})  # a prerequisite's recipe changed


def test_a_merge_that_reports_no_change_lifts_nothing(tmp_path: Path) -> None:
    """`git merge` answering `Already up to date.` changed nothing; a real merge did."""
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "app.py").write_text("x = 1\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "start")
    memory = memory_in(tmp_path)
    tests = {"command": "pytest"}
    error = "FAILED test_app.py::test_x - assert 1 == 2\n1 failed\nexit code 1"
    memory.record("bash", tests, error=error)
    memory.record("bash", tests, error=error)
    assert not allowed(memory, "bash", tests)
    git(tmp_path, "branch", "feature")
    merge = run(tmp_path, "git", "merge", "feature")
    assert "Already up to date." in merge.stdout
    memory.record("bash", {"command": "git merge feature"}, ok=True, result=merge.stdout)
    assert not allowed(memory, "bash", tests)
    git(tmp_path, "checkout", "-q", "feature")
    (tmp_path / "app.py").write_text("x = 2\n")
    git(tmp_path, "commit", "-qam", "fix")
    git(tmp_path, "checkout", "-q", "main")
    merge = run(tmp_path, "git", "merge", "feature")
    assert "app.py" in merge.stdout
    memory.record("bash", {"command": "git merge feature"}, ok=True, result=merge.stdout)
    assert allowed(memory, "bash", tests)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("bash", {"command": "cd sub && make deploy"}),
        ("bash", {"command": "make -C sub deploy"}),
        ("make", {"target": "deploy", "cwd": "sub"}),
        ("bash", {"command": "npm run deploy"}),  # a script ran make somewhere
    ],
)
def test_a_make_run_elsewhere_is_not_judged_by_the_root_makefile(
    tmp_path: Path, tool: str, args: dict[str, str]
) -> None:
    """No condition: the ban depends on its tokens (a Makefile edit lifts it as before)."""
    (tmp_path / "Makefile").write_text(MAKEFILE)
    memory = memory_in(tmp_path)
    memory.record(tool, args, error=NO_DEPLOY)
    (ban,) = memory.constraints()
    assert ban.params.depends == ()
    (tmp_path / "Makefile").write_text(MAKEFILE + "test:\n\t@true\n")
    assert allowed(memory, tool, args)


def test_a_missing_program_in_a_container_is_not_judged_by_the_local_path(
    tmp_path: Path,
) -> None:
    """A `container=` argument: PATH here says nothing; any change lifts it as before."""
    memory = memory_in(tmp_path)
    args = {"command": "scarguard_no_such_tool", "container": "web"}
    memory.record("bash", args, error="bash: scarguard_no_such_tool: command not found")
    memory.record("bash", args, error="bash: scarguard_no_such_tool: command not found")
    assert not allowed(memory, "bash", args)
    assert memory.constraints()[0].params.depends == ()
    memory.record("bash", {"command": "git merge feature"}, ok=True)
    assert allowed(memory, "bash", args)


def test_an_edit_whose_text_appears_with_escapes_read_is_lifted(tmp_path: Path) -> None:
    """A search text written with `\\n` escapes matches the lines it stands for."""
    (tmp_path / "a.py").write_text("x = 1\n")
    memory = memory_in(tmp_path)
    args = {"path": "a.py", "old_string": "def f():\\n    return 1", "new_string": "pass"}
    memory.record("edit_file", args, error="Error: old_string not found in a.py")
    assert not allowed(memory, "edit_file", args)
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    assert allowed(memory, "edit_file", args)
