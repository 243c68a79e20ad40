"""A ban that names what was missing lifts as soon as the world supplies it (real tools).

The newest learning rules keep a ban only while its condition holds (``learning.semantic``)
and let a passing suite stand for its selections (``learning.lifting``). Each case here runs
the real program (``make``, ``bash``, ``pytest``, ``git``) before and after the world
changed, so a ban kept after the change is a refusal of a call that would now succeed; and
each checks a change that must not lift, so the fixes do not lift everything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from shlex import quote as shlex_quote

import pytest

from helpers.engine import memory_in
from helpers.git import git
from scarguard import FailureMemory
from scarguard.adapters._shell_changes import installs
from scarguard.adapters._test_runs import selected_tests
from scarguard.learning._make import make_defines, make_sources
from scarguard.learning.semantic import covered_by
from scarguard.testing import FakeClock

MAKEFILE = "build:\n\tmkdir -p build\n"
needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def sh(
    root: Path, command: str, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command], cwd=root, capture_output=True, text=True, env=env
    )


def allowed(memory: FailureMemory, args: Mapping[str, str]) -> bool:
    return memory.check("bash", dict(args)).allowed


def banned_by_make(root: Path, memory: FailureMemory, command: str) -> dict[str, str]:
    """Run ``command`` (a make call that lacks a rule) for real, record it, expect a ban."""
    done = sh(root, command)
    assert done.returncode != 0 and "No rule to make target" in done.stderr
    args = {"command": command}
    memory.record("bash", args, error=done.stderr)
    assert not allowed(memory, args)
    (ban,) = memory.constraints()
    assert ban.params.depends[0] == "make_target"
    return args


# -- make: what a built-in rule or an indented rule makes ---------------------------------


def test_the_sources_of_make_s_built_in_rules() -> None:
    """A target with no suffix is made from X.c, X.sh...; X.o from X.c...; X.c from X.y."""
    plain = make_sources("hello")
    assert {"hello.c", "hello.sh", "hello.o", "hello.cpp", "hello.y", "RCS/hello,v"} <= set(plain)
    assert {"main.c", "main.cc", "main.s"} <= set(make_sources("main.o"))
    assert "src/parse.y" in make_sources("src/parse.c")
    assert "hello" not in plain and len(plain) == len(set(plain))
    assert make_sources("$(OUT)") == () and make_sources("") == ()


def test_an_indented_rule_defines_its_target() -> None:
    """GNU make reads a rule line that starts with spaces (not a tab: that is a recipe)."""
    assert make_defines("build:\n\tmkdir build\n  deploy: build\n\techo\n", "deploy")
    assert not make_defines("build:\n\t  deploy: build\n", "deploy")  # a recipe line
    assert not make_defines("   # deploy: later\n", "deploy")  # a comment


@needs_make
@pytest.mark.parametrize(
    ("source", "text"),
    [
        ("greet.sh", "echo hello\n"),
        pytest.param(
            "greet.c",
            '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n',
            marks=pytest.mark.skipif(shutil.which("cc") is None, reason="needs cc"),
        ),
    ],
)
def test_a_source_for_a_built_in_rule_lifts_a_missing_target(
    tmp_path: Path, source: str, text: str
) -> None:
    """``make greet`` fails for want of a rule; ``greet.sh`` (or ``greet.c``) appears, and
    make's built-in rules build it: allowed, and make does build it. An unrelated new file
    before that keeps the ban."""
    (tmp_path / "Makefile").write_text(MAKEFILE)
    memory = memory_in(tmp_path)
    args = banned_by_make(tmp_path, memory, "make greet")
    (tmp_path / "NOTES.md").write_text("greet is coming\n")
    (tmp_path / "greet.txt").write_text("not a source of a built-in rule\n")
    assert not allowed(memory, args)
    (tmp_path / source).write_text(text)
    assert allowed(memory, args)
    assert sh(tmp_path, "make greet").returncode == 0 and (tmp_path / "greet").exists()


@needs_make
def test_a_source_lifts_a_missing_target_whatever_files_the_output_named(tmp_path: Path) -> None:
    """The output names many files before make stops for want of a rule: the sources of the
    built-in rules are still watched (the bound on watched paths drops the output's files)."""
    objects = [f"mod{i}.o" for i in range(12)]
    rules = "".join(f"{o}:\n\t@echo cc -c src/{o[:-2]}.c -o build/{o}\n" for o in objects)
    (tmp_path / "Makefile").write_text(f"build: {' '.join(objects)}\n\t@echo linked\n{rules}")
    memory = memory_in(tmp_path)
    done = sh(tmp_path, "make build greet")
    assert done.returncode != 0 and "No rule to make target 'greet'" in done.stderr
    assert done.stdout.count("cc -c src/") == 12
    args = {"command": "make build greet"}
    memory.record("bash", args, error=done.stdout + done.stderr)
    assert not allowed(memory, args)
    (tmp_path / "greet.sh").write_text("echo hello\n")
    assert allowed(memory, args)
    assert sh(tmp_path, "make build greet").returncode == 0


@needs_make
def test_a_guarded_write_of_a_source_lifts_a_missing_target(tmp_path: Path) -> None:
    """Tool evidence, for a Makefile the observer cannot judge later: writing ``greet.sh``
    through a tool lifts ``make greet``; writing ``README.md`` does not."""
    (tmp_path / "Makefile").write_text(MAKEFILE)
    memory = memory_in(tmp_path)
    args = banned_by_make(tmp_path, memory, "make greet")
    memory.record("write_file", {"path": "README.md", "content": "# greet\n"}, ok=True)
    assert not allowed(memory, args)
    memory.record("write_file", {"path": "greet.sh", "content": "echo hello\n"}, ok=True)
    assert allowed(memory, args)


@needs_make
def test_an_indented_rule_added_to_the_makefile_lifts_a_missing_target(tmp_path: Path) -> None:
    """The Makefile gains ``  deploy: build`` (spaces before it): make runs it, so must we."""
    (tmp_path / "Makefile").write_text(MAKEFILE)
    memory = memory_in(tmp_path)
    args = banned_by_make(tmp_path, memory, "make deploy")
    (tmp_path / "Makefile").write_text(MAKEFILE + "  deploy: build\n\t@echo deployed\n")
    assert allowed(memory, args)
    assert sh(tmp_path, "make deploy").stdout.strip().endswith("deployed")


@needs_make
@pytest.mark.parametrize(
    "makefile",
    [
        "OBJS = main.o\nbuild: $(OBJS)\n\t@echo built\nmain.o:\n\t@echo compiling; {fix}\n",
        "build:\n\t@$(MAKE) --no-print-directory main.o\n\t@echo built\nmain.o:\n\t@{fix}\n",
    ],
    ids=["variable-prerequisite", "recursive-make"],
)
def test_a_failing_recipe_reached_indirectly_lifts_when_its_rule_is_fixed(
    tmp_path: Path, makefile: str
) -> None:
    """``make build`` fails in the rule of ``main.o``, which it reaches through ``$(OBJS)``
    (or by running make again): fixing that rule makes ``make build`` succeed, so the ban
    lifts; an edit of a comment before that does not."""
    (tmp_path / "Makefile").write_text(makefile.format(fix="exit 1"))
    memory = memory_in(tmp_path)
    args = {"command": "make build"}
    for _ in range(2):
        done = sh(tmp_path, args["command"])
        assert done.returncode != 0
        memory.record("bash", args, error=done.stdout + done.stderr)
    (ban,) = memory.constraints()
    assert ban.params.depends[0] == "make_rule"
    assert not allowed(memory, args)
    (tmp_path / "Makefile").write_text("# build it\n" + makefile.format(fix="exit 1"))
    assert not allowed(memory, args)
    (tmp_path / "Makefile").write_text(makefile.format(fix="touch main.o"))
    assert allowed(memory, args)
    assert sh(tmp_path, args["command"]).stdout.strip().endswith("built")


@needs_make
def test_a_missing_prerequisite_lifts_when_the_file_appears(tmp_path: Path) -> None:
    """``No rule to make target 'gen.txt', needed by 'build'``: the file appears, make runs."""
    (tmp_path / "Makefile").write_text("build: gen.txt\n\t@cat gen.txt\n")
    memory = memory_in(tmp_path)
    args = banned_by_make(tmp_path, memory, "make build")
    (tmp_path / "other.txt").write_text("x\n")
    assert not allowed(memory, args)
    (tmp_path / "gen.txt").write_text("generated\n")
    assert allowed(memory, args)
    assert sh(tmp_path, "make build").stdout.strip() == "generated"


@needs_make
def test_a_branch_whose_makefile_defines_the_target_lifts_it(tmp_path: Path) -> None:
    """``git checkout`` through the shell tool brings a Makefile with ``deploy``: lifted (the
    observer reads it); a branch whose Makefile still lacks it keeps the ban."""
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "Makefile").write_text(MAKEFILE)
    git(tmp_path, "add", "Makefile")
    git(tmp_path, "commit", "-q", "-m", "build")
    git(tmp_path, "checkout", "-q", "-b", "docs")
    (tmp_path / "README.md").write_text("docs\n")
    (tmp_path / "Makefile").write_text(MAKEFILE + "docs:\n\t@echo docs\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "docs")
    git(tmp_path, "checkout", "-q", "-b", "deploy", "main")
    (tmp_path / "Makefile").write_text(MAKEFILE + "deploy: build\n\t@echo deployed\n")
    git(tmp_path, "commit", "-q", "-am", "deploy")
    git(tmp_path, "checkout", "-q", "main")
    memory = memory_in(tmp_path)
    args = banned_by_make(tmp_path, memory, "make deploy")
    for branch, lifted in (("docs", False), ("deploy", True)):
        switch = {"command": f"git checkout -q {branch}"}
        assert sh(tmp_path, switch["command"]).returncode == 0
        memory.record("bash", switch, ok=True)
        assert allowed(memory, args) is lifted, branch
    assert sh(tmp_path, "make deploy").stdout.strip().endswith("deployed")


# -- command not found: in the command itself, or in a script it runs ----------------------


@needs_bash
def test_a_program_missing_inside_a_script_lifts_when_the_script_changes(tmp_path: Path) -> None:
    """``./run.sh`` fails with ``scarguard_nope: command not found`` from its second line:
    the script is fixed (by hand, or by ``sed`` through the shell tool): the call runs."""
    script = tmp_path / "run.sh"
    for fix in ("by hand", "through the tool"):
        script.write_text("echo start\nscarguard_nope --x\n")
        script.chmod(0o755)
        memory = memory_in(tmp_path)
        args = {"command": "./run.sh"}
        for _ in range(2):
            done = sh(tmp_path, args["command"])
            assert "scarguard_nope: command not found" in done.stderr
            memory.record("bash", args, error=done.stderr)
        assert not allowed(memory, args)
        memory.record("bash", {"command": "git status"}, ok=True)
        assert not allowed(memory, args)
        if fix == "by hand":
            script.write_text("echo start\necho fixed\n")
        else:
            sed = {"command": "sed -i s/scarguard_nope/echo/ run.sh"}
            assert sh(tmp_path, sed["command"]).returncode == 0
            memory.record("bash", sed, ok=True)
        assert allowed(memory, args), fix
        assert sh(tmp_path, args["command"]).returncode == 0


@needs_bash
def test_a_program_missing_from_the_command_itself_still_waits_for_the_program(
    tmp_path: Path,
) -> None:
    """The command names the program: refused at its first repeat, an edit elsewhere keeps
    it, the program appearing in ``node_modules/.bin`` lifts it."""
    memory = memory_in(tmp_path)
    args = {"command": "scarguard_nope_lint src"}
    memory.record("bash", args, error=sh(tmp_path, args["command"]).stderr)
    assert not allowed(memory, args)
    memory.record("edit_file", {"path": "a.py", "old_string": "x", "new_string": "y"}, ok=True)
    assert not allowed(memory, args)
    program = tmp_path / "node_modules" / ".bin" / "scarguard_nope_lint"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\necho linted\n")
    program.chmod(0o755)
    assert allowed(memory, args)


# -- a syntax error of the interpreter's version -------------------------------------------

MATCH = 'def f(x):\n    match x:\n        case 1:\n            return "one"\nprint(f(1))\n'


def _pyenv_versions() -> tuple[str | None, str | None]:
    """A pyenv Python without ``match`` (3.9 or older) and one with it, if installed."""
    if shutil.which("pyenv") is None:
        return None, None
    done = subprocess.run(["pyenv", "versions", "--bare"], capture_output=True, text=True)
    if done.returncode != 0:
        return None, None
    old = new = None
    for line in done.stdout.split():
        parts = line.split(".")
        if len(parts) == 3 and parts[0] == "3" and parts[1].isdigit():
            if 6 <= int(parts[1]) <= 9:
                old = line
            elif int(parts[1]) >= 10:
                new = line
    return old, new


@needs_bash
def test_a_syntax_error_of_an_old_interpreter_lifts_when_the_version_pin_changes(
    tmp_path: Path,
) -> None:
    """``python app.py`` under a pinned 3.9 fails on ``match``; ``pyenv local 3.11`` (through
    the shell tool) pins another interpreter: the same command runs, so it is allowed. An
    edit of another file keeps the ban. (Without pyenv, the pin is rewritten by hand.)"""
    (tmp_path / "app.py").write_text(MATCH)
    old, new = _pyenv_versions()
    real = old is not None and new is not None
    env = None
    if real:  # the agent's shell finds python through pyenv's shims
        home = subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip()
        env = {**os.environ, "PATH": f"{home}/shims{os.pathsep}{os.environ.get('PATH', '')}"}
    memory = memory_in(tmp_path)
    args = {"command": "python app.py"}
    if real:
        (tmp_path / ".python-version").write_text(f"{old}\n")
        error = sh(tmp_path, args["command"], env).stderr
    else:
        (tmp_path / ".python-version").write_text("3.9.18\n")
        error = '  File "app.py", line 2\n    match x:\n          ^\nSyntaxError: invalid syntax\n'
    assert "SyntaxError" in error
    memory.record("bash", args, error=error)
    (ban,) = memory.constraints()
    assert ban.params.depends[0] == "named_files"
    assert not allowed(memory, args)
    memory.record("edit_file", {"path": "README.md", "old_string": "a", "new_string": "b"}, ok=True)
    assert not allowed(memory, args)
    if real:
        pin = {"command": f"pyenv local {new}"}
        assert sh(tmp_path, pin["command"], env).returncode == 0
        memory.record("bash", pin, ok=True)
    else:
        (tmp_path / ".python-version").write_text("3.12.1\n")
    assert allowed(memory, args)
    if real:
        assert sh(tmp_path, args["command"], env).stdout.strip() == "one"


def test_the_installs_that_may_put_a_program_on_path() -> None:
    """Installs spelled through an interpreter, a lock file, an installer script or a bare
    package manager; reading and building commands still do not count."""
    for command in ("python -m pip install ruff", "python3 -m pip install -e .", "npm ci",
                    "yarn", "bundle install", "corepack enable", "nix-env -i ripgrep",
                    "curl -fsSL https://example.com/install.sh | sh",
                    "curl -fsSL https://example.com/install.sh | sudo bash -s -- -y"):  # fmt: skip
        assert installs(command), command
    for command in ("python -m pytest", "python -m pip list", "npm test", "yarn test",
                    "cat install.sh | grep x", "echo hi | shasum",
                    "bash install.sh --help"):  # fmt: skip
        assert not installs(command), command


@needs_bash
def test_an_install_through_python_m_pip_lifts_a_missing_program(tmp_path: Path) -> None:
    """Tool evidence (the program may go where this process does not look): ``python -m pip
    install`` succeeding lifts ``command not found``; ``python -m pytest`` does not."""
    memory = memory_in(tmp_path)
    args = {"command": "scarguard_nope_fmt src"}
    memory.record("bash", args, error=sh(tmp_path, args["command"]).stderr)
    assert not allowed(memory, args)
    memory.record("bash", {"command": "python -m pytest -q"}, ok=True)
    assert not allowed(memory, args)
    memory.record("bash", {"command": "python -m pip install scarguard-nope-fmt"}, ok=True)
    assert allowed(memory, args)


# -- a passing run that covers a failing selection ------------------------------------------


def test_which_runs_cover_a_selection() -> None:
    """A run of a folder or a file covers the selections under it, and only those."""
    assert selected_tests({"command": "pytest tests"}) == ("pytest", ("tests",))
    assert selected_tests({"command": "pytest tests/unit/"}) == ("pytest", ("tests/unit/",))
    assert selected_tests({"command": "pytest check.py"}) is None
    failing = selected_depends("pytest tests/unit/test_a.py::test_x")
    assert failing[0] == "tests" and failing[3:] == ("tests/unit/test_a.py::test_x",)
    for command in ("pytest", "pytest tests", "pytest ./tests/", "pytest tests/unit/test_a.py",
                    "pytest tests/other tests/unit", "pytest ."):  # fmt: skip
        assert covered_by(failing, {"command": command}), command
    for command in ("pytest tests/other", "pytest tests/unit/test_b.py", "pytest tests/uni"):
        assert not covered_by(failing, {"command": command}), command
    timed = {"command": "pytest", "timeout": 600, "description": "the whole suite"}
    assert covered_by(failing, timed)  # a longer timeout runs the same tests
    assert not covered_by(failing, {"command": "pytest", "env": {"CI": "1"}})
    case = selected_depends("pytest tests/unit/test_a.py::test_x[slow-2]")
    assert covered_by(case, {"command": "pytest tests/unit/test_a.py::test_x"})
    assert not covered_by(case, {"command": "pytest tests/unit/test_a.py::test_xy"})


def selected_depends(command: str) -> tuple[str, ...]:
    """The ``tests`` refinement a failing ``command`` gets (via the memory, as learned)."""
    memory = FailureMemory(":memory:", clock=FakeClock())
    error = "FAILED tests/unit/test_a.py::test_x - assert 0\n1 failed in 0.01s"
    for _ in range(2):
        memory.record("bash", {"command": command}, error=error)
    (ban,) = memory.constraints()
    return ban.params.depends


PASSING = "def test_x():\n    assert True\n"
FLAKY = "import os\n\ndef test_x():\n    assert os.environ.get('SCARGUARD_PASS') == '1'\n"


def pytest_run(root: Path, command: str, *, passing: bool) -> subprocess.CompletedProcess[str]:
    """Run ``command`` (a pytest command line) for real; the flaky test passes if asked."""
    words = command.split()[1:]
    env = {"PATH": "", "SCARGUARD_PASS": "1" if passing else "0"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *words],
        cwd=root, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


LONG = (
    "import os\n\ndef test_x():\n    print('log line ' * 2000)\n"
    "    data = {f'key{i}': 'v' * 40 for i in range(200)}\n"
    "    assert os.environ.get('SCARGUARD_PASS') == '1', data\n"
)


@pytest.mark.slow
def test_a_passing_suite_lifts_a_selection_whose_failing_output_was_long(tmp_path: Path) -> None:
    """The failing run printed tens of kilobytes before pytest's summary (``1 failed`` comes
    last): it is still a run whose tests failed, and the passing suite lifts its ban."""
    (tmp_path / "test_flaky.py").write_text(LONG)
    memory = memory_in(tmp_path)
    selection = {"command": "pytest test_flaky.py"}
    for _ in range(2):
        done = pytest_run(tmp_path, selection["command"], passing=False)
        assert done.returncode == 1 and len(done.stdout) > 16384
        assert "1 failed" in done.stdout[-200:]
        memory.record("bash", selection, error=done.stdout)
    assert not allowed(memory, selection)
    assert pytest_run(tmp_path, "pytest", passing=True).returncode == 0
    done_ok = memory.record("bash", {"command": "pytest"}, ok=True, result="1 passed")
    assert len(done_ok.lifted) == 1
    assert allowed(memory, selection)


@pytest.mark.slow
@pytest.mark.parametrize("passing", ["pytest tests", "pytest tests/", "pytest tests/test_a.py"])
def test_a_passing_run_of_the_folder_lifts_the_ban_of_a_selection_in_it(
    tmp_path: Path, passing: str
) -> None:
    """A flaky ``pytest tests/test_a.py::test_x`` failed twice (real runs, nothing changed
    since), then ``pytest tests`` passed, the flaky test included: the selection is allowed.
    A passing run of another folder before that lifts nothing."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "test_o.py").write_text(PASSING)
    (tmp_path / "tests" / "test_a.py").write_text(FLAKY)
    memory = memory_in(tmp_path)
    selection = {"command": "pytest tests/test_a.py::test_x"}
    for _ in range(2):
        done = pytest_run(tmp_path, selection["command"], passing=False)
        assert done.returncode == 1
        memory.record("bash", selection, error=done.stdout)
    assert not allowed(memory, selection)
    elsewhere = {"command": "pytest other"}
    assert pytest_run(tmp_path, elsewhere["command"], passing=False).returncode == 0
    memory.record("bash", elsewhere, ok=True, result="1 passed")
    assert not allowed(memory, selection)
    done = pytest_run(tmp_path, passing, passing=True)
    assert done.returncode == 0 and "1 passed" in done.stdout
    memory.record("bash", {"command": passing}, ok=True, result="1 passed")
    assert allowed(memory, selection)


@pytest.mark.parametrize(
    ("command", "create"),
    [
        ("python3 tool.py", {"helper.py": "X = 1\n"}),
        ("python3 tool.py", {"helper/__init__.py": "X = 1\n"}),
        ("python3 -m app", {"app/__init__.py": "", "app/__main__.py": "print('hi')\n"}),
    ],
)  # fmt: skip
def test_a_module_created_by_hand_lifts_its_module_not_found_ban(
    tmp_path: Path, command: str, create: dict[str, str]
) -> None:
    """Python names the module, not a file: helper.py or a helper package supplies it."""
    (tmp_path / "tool.py").write_text("import helper\n")
    memory = memory_in(tmp_path)
    args = {"command": command}
    done = sh(tmp_path, command.replace("python3", shlex_quote(sys.executable), 1))
    assert done.returncode != 0 and "No module named" in done.stderr
    for _ in range(3):
        memory.record("bash", args, error=done.stderr)
    assert not allowed(memory, args)
    (tmp_path / "notes.txt").write_text("unrelated\n")
    assert not allowed(memory, args)
    for name, text in create.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert allowed(memory, args)
    assert sh(tmp_path, command.replace("python3", shlex_quote(sys.executable), 1)).returncode == 0


def test_a_node_module_supplied_by_a_file_or_an_install_lifts_the_ban(tmp_path: Path) -> None:
    """`Cannot find module './util'` by util.js; `Cannot find module 'left-pad'` by an install."""
    memory = memory_in(tmp_path)
    local = {"command": "node main.js"}
    memory.record("bash", local, error="Error: Cannot find module './util'\nRequire stack:")
    memory.record("bash", local, error="Error: Cannot find module './util'\nRequire stack:")
    package = {"command": "node server.js"}
    for _ in range(2):
        memory.record("bash", package, error="Error: Cannot find module 'left-pad'")
    assert not allowed(memory, local) and not allowed(memory, package)
    (tmp_path / "util.js").write_text("module.exports = 1;\n")
    assert allowed(memory, local) and not allowed(memory, package)
    (tmp_path / "node_modules" / "left-pad").mkdir(parents=True)
    assert allowed(memory, package)


@needs_bash
def test_a_script_made_executable_lifts_its_permission_ban(tmp_path: Path) -> None:
    """chmod +x moves no mtime and changes no byte: the token's kind says it may run now."""
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\necho ok\n")
    script.chmod(0o644)
    memory = memory_in(tmp_path)
    args = {"command": "./run.sh"}
    done = sh(tmp_path, "./run.sh")
    assert done.returncode != 0 and "Permission denied" in done.stderr
    for _ in range(3):
        memory.record("bash", args, error=done.stderr)
    assert not allowed(memory, args)
    os.utime(script)  # touched, the same bytes: not a change
    assert not allowed(memory, args)
    script.chmod(0o755)
    assert allowed(memory, args)
    assert sh(tmp_path, "./run.sh").returncode == 0


@pytest.mark.parametrize("conftest", ["conftest.py", "tests/conftest.py"])
def test_a_fixture_added_to_a_conftest_lifts_the_failing_run(tmp_path: Path, conftest: str) -> None:
    """`fixture 'db' not found` names the test file: the conftest.py files are watched too."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_a(db):\n    assert db\n")
    memory = memory_in(tmp_path)
    args = {"command": "pytest -q"}
    run = f"{shlex_quote(sys.executable)} -m pytest -q -p no:cacheprovider"
    done = sh(tmp_path, run)
    assert done.returncode != 0 and "fixture 'db' not found" in done.stdout
    for _ in range(3):
        memory.record("bash", args, error=done.stdout[-3000:])
    assert not allowed(memory, args)
    (tmp_path / "notes.txt").write_text("unrelated\n")
    assert not allowed(memory, args)
    fixture = "import pytest\n\n\n@pytest.fixture\ndef db():\n    return 1\n"
    (tmp_path / conftest).write_text(fixture)
    assert allowed(memory, args)
    assert sh(tmp_path, run).returncode == 0


def test_an_install_into_the_workspace_venv_lifts_module_not_found(tmp_path: Path) -> None:
    """pip run outside the guarded tools adds an entry to .venv's site-packages: it lifts."""
    site = tmp_path / ".venv" / "lib" / f"python3.{sys.version_info.minor}" / "site-packages"
    site.mkdir(parents=True)
    memory = memory_in(tmp_path)
    args = {"command": ".venv/bin/python -c 'import zzz_not_installed'"}
    error = "ModuleNotFoundError: No module named 'zzz_not_installed'"
    for _ in range(3):
        memory.record("bash", args, error=error)
    assert not allowed(memory, args)
    (tmp_path / "notes.txt").write_text("unrelated\n")
    assert not allowed(memory, args)
    (site / "zzz_not_installed").mkdir()  # what `pip install` leaves
    assert allowed(memory, args)
