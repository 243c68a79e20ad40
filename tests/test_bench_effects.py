"""The effects world of the benchmark acts on real files as it claims to."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from _effects import Oracle, World, effects_world, run_session


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path, seed=1)


def test_a_create_creates_and_a_second_create_conflicts(world: World, tmp_path: Path) -> None:
    """create_file writes the file; reading it succeeds; creating it again fails."""
    assert world.execute("read_file", {"path": "notes/todo.md"})[0] is not None
    assert world.execute("create_file", {"path": "notes/todo.md", "content": "x\n"})[0] is None
    assert (tmp_path / "notes/todo.md").read_text() == "x\n"
    assert world.execute("read_file", {"path": "notes/todo.md"}) == (None, "x\n")
    error, _ = world.execute("create_file", {"path": "notes/todo.md", "content": "x\n"})
    assert error is not None and "File exists" in error


def test_an_edit_changes_the_file_so_the_identical_edit_then_fails(world: World) -> None:
    """After a successful edit its search text is gone: the same edit fails afterwards."""
    fix = {"path": "app.py", "old": "return a - b", "new": "return a + b"}
    assert world.execute("edit_file", fix)[0] is None
    error, _ = world.execute("edit_file", fix)
    assert error == "Error: old_string not found in app.py"


def test_tests_fail_until_an_edit_fixes_the_code(world: World) -> None:
    """pytest fails until app.py is fixed, then passes."""
    assert world.execute("run", {"command": "pytest"})[0] is not None
    world.execute("edit_file", {"path": "app.py", "old": "return a - b", "new": "return a + b"})
    assert world.execute("run", {"command": "pytest"}) == (None, "1 passed in 0.01s")


@pytest.mark.parametrize(
    ("command", "appears"),
    [
        ("python gen_notes.py", "docs/NOTES.md"),
        ("git merge feature", "spec/SPEC.md"),
    ],
)
def test_files_appear_through_commands_that_do_not_name_them(
    world: World, tmp_path: Path, command: str, appears: str
) -> None:
    """A generator and a merge create files the command never names."""
    assert not (tmp_path / appears).exists()
    assert world.execute("run", {"command": command})[0] is None
    assert (tmp_path / appears).is_file()
    assert world.execute("read_file", {"path": appears})[0] is None


def test_the_makefile_gains_a_target_through_an_edit(world: World, tmp_path: Path) -> None:
    """make build fails until an edit adds the target, then builds build/out.txt."""
    error, _ = world.execute("make", {"target": "build"})
    assert error is not None and "No rule to make target 'build'" in error
    add = {"path": "Makefile", "old": "# TODO: build target\n", "new": "build:\n\tmkdir -p b\n"}
    assert world.execute("edit_file", add)[0] is None
    assert world.execute("make", {"target": "build"})[0] is None
    assert (tmp_path / "build/out.txt").is_file()


def test_a_dry_run_changes_nothing(world: World, tmp_path: Path) -> None:
    """execute(dry=True) answers what would happen without touching a file."""
    fix = {"path": "app.py", "old": "return a - b", "new": "return a + b"}
    before = (tmp_path / "app.py").read_text()
    assert world.execute("edit_file", fix, dry=True)[0] is None
    assert world.execute("run", {"command": "python gen_notes.py"}, dry=True)[0] is None
    assert (tmp_path / "app.py").read_text() == before
    assert not (tmp_path / "docs/NOTES.md").exists()


def test_the_oracle_needs_evidence_before_it_refuses() -> None:
    """The oracle refuses only identical repeats of failures and calls on paths seen missing."""
    oracle = Oracle()
    read = {"path": "ghost.py"}
    assert not oracle.evidence("read_file", read)
    oracle.learn("read_file", read, "FileNotFoundError: [Errno 2] No such file or directory")
    assert oracle.evidence("read_file", read)
    assert oracle.evidence("edit_file", {"path": "ghost.py", "old": "a", "new": "b"})
    assert not oracle.evidence("read_file", {"path": "app.py"})


def test_missing_path_evidence_ends_when_the_path_appears_by_any_means(
    world: World, tmp_path: Path
) -> None:
    """A path a generator wrote is no evidence against an edit of it that fails otherwise."""
    oracle = Oracle(tmp_path)
    edit = {"path": "docs/NOTES.md", "old": "(empty)", "new": "todo"}
    error, _ = world.execute("read_file", {"path": "docs/NOTES.md"})
    oracle.learn("read_file", {"path": "docs/NOTES.md"}, error)
    assert oracle.evidence("edit_file", edit)  # still missing now
    assert world.execute("run", {"command": "python gen_notes.py"})[0] is None
    assert not oracle.evidence("edit_file", edit)
    assert world.execute("edit_file", edit)[0] is None
    error, _ = world.execute("edit_file", edit)  # its text is gone: it fails for another reason
    assert error == "Error: old_string not found in docs/NOTES.md"
    assert not oracle.evidence("edit_file", edit)
    oracle.learn("edit_file", edit, error)
    assert oracle.evidence("edit_file", edit)  # a failure of this very call is evidence


def test_sessions_are_deterministic_per_seed() -> None:
    """The same seed gives the same session, on a fresh folder each time."""
    assert run_session(3, 20, 40, "scarguard", None) == run_session(3, 20, 40, "scarguard", None)


def test_the_oracle_floor_is_below_the_unguarded_agent() -> None:
    """The floor wastes fewer calls than the agent alone and refuses nothing that works."""
    result = effects_world([1], 20, 60)
    assert result["oracle"]["mean"]["refused_would_succeed"] == 0
    assert result["oracle"]["mean"]["wasted"] < result["unguarded"]["mean"]["wasted"]
