"""A test run without a selection ran every test a failing selection named (real pytest runs)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from helpers.engine import memory_in
from scarguard import FailureMemory
from scarguard.adapters._test_runs import reports_failed_tests, selected_tests
from scarguard.learning.index import ConstraintIndex
from scarguard.learning.lifting import liftable
from scarguard.model import ConstraintKind

FLAKY = "import os\n\ndef test_timing():\n    assert os.environ.get('SCARGUARD_PASS') == '1'\n"


def pytest_output(root: Path, *selection: str, passing: bool) -> str | None:
    """Run pytest in ``root`` for real; return its output if it failed, else ``None``."""
    env = {"SCARGUARD_PASS": "1" if passing else "0", "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *selection],
        cwd=root, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    return None if done.returncode == 0 else done.stdout + done.stderr


def allowed(memory: FailureMemory, args: Mapping[str, str]) -> bool:
    return memory.check("bash", dict(args)).allowed


def test_which_commands_are_test_runs_and_what_they_select() -> None:
    """Known runners with report-only options; a selection pytest would collect by itself."""
    assert selected_tests({"command": "pytest"}) == ("pytest", ())
    assert selected_tests({"command": "python -m pytest -q --tb=short"}) == ("pytest", ())
    assert selected_tests({"command": "pytest tests/test_a.py::test_x"}) == (
        "pytest",
        ("tests/test_a.py::test_x",),
    )
    assert selected_tests({"command": "cargo test parse"}) == ("cargo test", ("parse",))
    assert selected_tests({"command": "pytest -k slow"}) is None  # an option that chooses tests
    assert selected_tests({"command": "pytest check.py"}) is None  # not collected without naming it
    assert selected_tests({"command": "cd sub && pytest"}) is None
    assert selected_tests({"command": "make test"}) is None
    assert reports_failed_tests("FAILED test_a.py::test_x - assert 1 == 2\n1 failed in 0.01s")
    assert reports_failed_tests("test result: FAILED. 3 passed; 1 failed; 0 ignored")
    assert not reports_failed_tests("ERROR: file or directory not found: test_b.py\nno tests ran")


@pytest.mark.slow
def test_a_passing_suite_lifts_the_ban_of_a_selection_that_failed_twice(tmp_path: Path) -> None:
    """A flaky test failed twice before it ever passed; then the whole suite passed: allowed,
    and its count starts again (one more failure is not refused)."""
    (tmp_path / "test_flaky.py").write_text(FLAKY)
    memory = memory_in(tmp_path)
    flaky = {"command": "pytest test_flaky.py"}
    for _ in range(2):
        error = pytest_output(tmp_path, "test_flaky.py", passing=False)
        assert error is not None and "1 failed" in error
        memory.record("bash", flaky, error=error)
    assert not allowed(memory, flaky)
    assert pytest_output(tmp_path, passing=True) is None
    done = memory.record("bash", {"command": "pytest"}, ok=True, result="1 passed")
    assert done is not None and len(done.lifted) == 1
    assert allowed(memory, flaky)
    error = pytest_output(tmp_path, "test_flaky.py", passing=False)
    memory.record("bash", flaky, error=error)
    assert allowed(memory, flaky)


@pytest.mark.parametrize(
    ("failing", "error", "passing"),
    [
        # a usage error is not disproved by a run of every test
        (
            "pytest test_gone.py",
            "ERROR: file or directory not found: test_gone.py\nno tests ran in 0.01s",
            {"command": "pytest"},
        ),
        # another runner, another place, other arguments
        ("pytest test_a.py", "FAILED test_a.py::t\n1 failed", {"command": "cargo test"}),
        ("pytest test_a.py", "FAILED test_a.py::t\n1 failed", {"command": "cd sub && pytest"}),
        (
            "pytest test_a.py",
            "FAILED test_a.py::t\n1 failed",
            {"command": "pytest", "container": "web"},
        ),
        # a run that chose its tests with an option
        ("pytest test_a.py", "FAILED test_a.py::t\n1 failed", {"command": "pytest -m fast"}),
    ],
)
def test_a_success_that_did_not_run_the_selection_lifts_nothing(
    tmp_path: Path, failing: str, error: str, passing: dict[str, str]
) -> None:
    """Only the same runner, without a selection, in the same place, covers the selection."""
    memory = memory_in(tmp_path)
    args = {"command": failing}
    memory.record("bash", args, error=error)
    memory.record("bash", args, error=error)
    assert not allowed(memory, args)
    memory.record("bash", passing, ok=True, result="ok")
    assert not allowed(memory, args)


def test_a_passing_suite_run_by_another_tool_lifts_nothing(tmp_path: Path) -> None:
    """The ban is the tool's: a run through another tool may run elsewhere."""
    memory = memory_in(tmp_path)
    args = {"command": "pytest test_a.py"}
    error = "FAILED test_a.py::t - assert 1 == 2\n1 failed in 0.01s"
    memory.record("bash", args, error=error)
    memory.record("bash", args, error=error)
    memory.record("ssh_run", {"command": "pytest"}, ok=True, result="1 passed")
    assert not allowed(memory, args)
    memory.record("bash", {"command": "python -m pytest -q"}, ok=True, result="1 passed")
    assert allowed(memory, args)


def test_a_passing_suite_lifts_its_selections_among_many_other_shell_bans(
    tmp_path: Path,
) -> None:
    """The selections a suite covers are found among the tool's test-run bans: the make bans
    around them are not lifted (the class's strategy ban is, as by any success in it), nor
    a selection's ban forgotten before."""
    memory = memory_in(tmp_path)
    error = "FAILED test_a.py::t - assert 1 == 2\n1 failed in 0.01s"
    make = "make: *** No rule to make target 'x{0}'.  Stop."
    for i in range(30):
        memory.record("bash", {"command": f"make x{i}"}, error=make.format(i))
    for selection in ("test_a.py", "test_b.py"):
        for _ in range(2):
            memory.record("bash", {"command": f"pytest {selection}"}, error=error)
    for _ in range(2):
        memory.record("bash", {"command": "pytest test_c.py"}, error=error)
    (forgotten,) = [c for c in memory.constraints() if "test_c.py" in c.params.depends]
    assert [c.key for c in memory.forget(forgotten.id)] == [forgotten.key]
    assert allowed(memory, {"command": "pytest test_c.py"})  # (the check sees it gone)
    done = memory.record("bash", {"command": "pytest"}, ok=True, result="2 passed")
    exact = [c.params.depends[3:] for c in done.lifted if c.kind is ConstraintKind.EXACT_CALL]
    assert sorted(exact) == [("test_a.py",), ("test_b.py",)]
    assert allowed(memory, {"command": "pytest test_a.py"})
    assert allowed(memory, {"command": "pytest test_b.py"})
    assert not any(allowed(memory, {"command": f"make x{i}"}) for i in range(30))


def test_an_index_finds_a_selections_ban_for_its_own_tool_until_it_is_removed(
    tmp_path: Path,
) -> None:
    """The index keeps the bans of selected test runs by tool: a covering suite of that tool
    finds them, another tool's does not, and none is found once removed."""
    memory = memory_in(tmp_path)
    error = "FAILED test_a.py::t - assert 1 == 2\n1 failed in 0.01s"
    for _ in range(2):
        memory.record("bash", {"command": "pytest test_a.py"}, error=error)
    memory.record("bash", {"command": "make x"}, error="make: *** No rule to make target 'x'.")
    rules = memory.constraints()
    (run,) = [c for c in rules if c.params.depends]
    index = ConstraintIndex.build(rules, run.created_at)
    suite = memory.describe("bash", {"command": "pytest"})
    adapter, policy = memory.adapter_for("bash"), memory.policy
    assert liftable(index, suite, adapter, policy) == [run]
    elsewhere = memory.describe("sh", {"command": "pytest"})
    assert liftable(index, elsewhere, adapter, policy) == []
    index.remove_many([run.key])
    assert liftable(index, suite, adapter, policy) == []
    assert len(index.shell_exact) == 1  # the make ban stays
