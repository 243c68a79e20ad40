"""Tests for the scripted offline demo (``scarguard demo``)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from scarguard import FailureMemory
from scarguard.cli import main
from scarguard.cli.demo import PROJECT, SCRIPT, WORKSPACE, run_demo
from scarguard.cli.rendering import Style


def demo(path: Path, **options: object) -> str:
    out = io.StringIO()
    assert run_demo(path, out=out, **options) == 0  # type: ignore[arg-type]
    return out.getvalue()


def test_first_run_narrates_failures_learning_refusals_and_the_guard(tmp_path: Path) -> None:
    """The first run shows failures by label, what was learned, a refusal and the block."""
    out = demo(tmp_path / "m.db")
    assert "starts with an empty memory" in out
    assert "edit search string not found" in out and "rate limited" in out
    assert "learned   exact_call (refuse)" in out
    assert "REFUSED   before running: learned in this run" in out
    assert "LLM reads scarguard refused this edit_file call" in out
    assert "REPEAT FAILURE GUARD" in out
    assert "run `scarguard demo` again" in out
    assert "Traceback" not in out and "\033[" not in out


def test_second_run_refuses_what_the_first_learned(tmp_path: Path) -> None:
    """A second process starts with the first run's constraints and refuses the repeats."""
    path = tmp_path / "m.db"
    demo(path)
    second = demo(path)
    assert "starts with 2 constraints learned in an earlier run" in second
    assert "REFUSED   before running: learned in an earlier run" in second
    step_6 = second.split(" 6  make(target='build')", 1)[1].split("\n\n", 1)[0]
    assert "REFUSED" in step_6 and "FAILED" not in step_6
    summary = " ".join(second.split("summary:")[1].split())
    assert "5 refused before running (5 learned in an earlier run)" in summary
    with FailureMemory(path, workspace=WORKSPACE, project=PROJECT) as memory:
        assert {c.tool for c in memory.constraints()} == {"edit_file", "make"}


def test_harness_faults_teach_nothing(tmp_path: Path) -> None:
    """The rate limit is retried and recorded, but no constraint is ever learned from it.

    Both 429s of a run are stored; they are the guard's retries inside one call, so they
    count once per run.
    """
    path = tmp_path / "m.db"
    demo(path)
    demo(path)
    with FailureMemory(path, workspace=WORKSPACE, project=PROJECT) as memory:
        assert not memory.constraints(tool="call_api")
        assert memory.stats().failures_by_signature["rate_limited"] == 2
        assert len(memory.recent_failures(signature="rate_limited")) == 4


def test_fresh_starts_over_for_the_demo_tenant_only(tmp_path: Path) -> None:
    """--fresh clears the demo's workspace and project, not other tenants."""
    path = tmp_path / "m.db"
    with FailureMemory(path, workspace="other", project="p") as other:
        other.record("edit_file", {"path": "x.py", "old": "a"}, error="old_string not found")
    demo(path)
    out = demo(path, fresh=True)
    assert "starts with an empty memory" in out
    assert "learned in an earlier run" not in out
    with FailureMemory(path, workspace="other", project="p") as other:
        assert other.constraints()


def test_quiet_prints_only_the_summary(tmp_path: Path) -> None:
    """--quiet prints the three summary lines and nothing else."""
    out = demo(tmp_path / "m.db", quiet=True)
    tags = [line.split(":")[0] for line in out.splitlines() if not line.startswith(" ")]
    assert tags == ["summary", "memory", "next"]


def test_steps_limits_the_script(tmp_path: Path) -> None:
    """--steps N runs only the first N steps."""
    out = demo(tmp_path / "m.db", steps=2)
    assert " 2  edit_file" in out and " 3  " not in out
    assert "1 call ran" not in out and "2 calls ran" in out
    assert len(SCRIPT) > 2


def test_cli_demo_writes_the_default_store_in_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`scarguard demo` without --path uses .scarguard/memory.db in the working directory."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCARGUARD_PATH", raising=False)
    assert main(["demo", "--quiet"]) == 0
    assert (tmp_path / ".scarguard" / "memory.db").is_file()
    assert str(tmp_path / ".scarguard" / "memory.db") in capsys.readouterr().out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_without_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    """ANSI colours appear on a terminal and disappear with NO_COLOR."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert Style(_Terminal())("x", "red") == "\033[31mx\033[0m"
    assert Style(io.StringIO())("x", "red") == "x"
    monkeypatch.setenv("NO_COLOR", "1")
    assert Style(_Terminal())("x", "red") == "x"
