"""The README's quick start works on a fresh folder: the demo's second run refuses repeats."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DEMO_COMMAND = "pip install . && scarguard demo"
TEST_COMMAND = 'pip install -e ".[test]" && pytest'


def _quick_start() -> str:
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 1, "the quick start has exactly one block of commands"
    return blocks[0]


def test_quick_start_is_exactly_two_commands() -> None:
    """The quick start block holds the demo command and the test command, nothing else."""
    commands = [line for line in _quick_start().splitlines() if line.strip()]
    assert commands == [DEMO_COMMAND, TEST_COMMAND]


def test_ci_runs_the_readme_test_command() -> None:
    """.ci/run installs the test extra and runs plain pytest (a command line of its own),
    as the README says."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert '-e ".[test' in ci
    assert re.search(r"^\s*pytest( -q)?$", ci, re.MULTILINE)


def _demo(cwd: Path, *, console_script: bool = False) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "scarguard"
    argv = [str(script), "demo"] if console_script else [sys.executable, "-m", "scarguard", "demo"]
    env = {k: v for k, v in os.environ.items() if k not in ("SCARGUARD_PATH", "NO_COLOR")}
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.slow
def test_demo_twice_in_a_clean_folder_refuses_what_the_first_run_learned(tmp_path: Path) -> None:
    """Run 1 learns from mistakes into .scarguard/memory.db; run 2 refuses them up front."""
    script = Path(sys.executable).parent / "scarguard"
    first = _demo(tmp_path, console_script=script.exists())
    assert "starts with an empty memory" in first.stdout
    assert "learned in an earlier run" not in first.stdout
    assert "run `scarguard demo` again" in first.stdout
    assert "\033[" not in first.stdout  # not a terminal: no colours

    store = tmp_path / ".scarguard" / "memory.db"
    with sqlite3.connect(store) as conn:
        learned = {tool for (tool,) in conn.execute("SELECT tool FROM constraints")}
    conn.close()
    assert learned == {"edit_file", "make"}

    second = _demo(tmp_path)
    assert "starts with 2 constraints learned in an earlier run" in second.stdout
    assert "refused before running: learned in an earlier run" in second.stdout.replace(
        "REFUSED   before running", "refused before running"
    )
    refused_edit = second.stdout.split(" 2  edit_file", 1)[1].split("\n\n", 1)[0]
    assert "learned in an earlier run" in refused_edit and "FAILED" not in refused_edit
    with sqlite3.connect(store) as conn:
        (edit_failures,) = conn.execute(
            "SELECT count(*) FROM failures WHERE signature = 'edit_failed'"
        ).fetchone()
    conn.close()
    assert edit_failures == 1  # the second run's identical edit never ran
