"""``scarguard show`` and ``scarguard guard``: what a memory learned, filtered, as text or JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import run
from scarguard import FailureMemory
from scarguard.cli import EXIT_OK, EXIT_USAGE

pytestmark = pytest.mark.usefixtures("cli_cwd")  # in tmp_path, no $SCARGUARD_PATH




def test_show_lists_failures_patterns_and_constraints(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """show prints three aligned tables with labels, not raw error text."""
    assert run("show", "--path", str(db), "-w", "acme", "-p", "web") == EXIT_OK
    out = capsys.readouterr().out
    for heading in ("Recent failures", "Repeated patterns", "Active constraints"):
        assert heading in out
    assert "edit search string not found" in out and "rate limited" in out
    assert "exact_call" in out


def test_show_filters_and_json(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--tool, --kind and --since filter; --json prints machine-readable output."""
    base = ["show", "--path", str(db), "-w", "acme", "-p", "web", "--json"]
    assert run(*base, "--tool", "edit_file") == EXIT_OK
    data = json.loads(capsys.readouterr().out)
    assert {f["tool"] for f in data["failures"]} == {"edit_file"}
    assert all(c["tool"] == "edit_file" for c in data["constraints"])
    assert run(*base, "--kind", "rate_limited") == EXIT_OK
    data = json.loads(capsys.readouterr().out)
    assert {f["signature"] for f in data["failures"]} == {"rate_limited"}
    assert data["constraints"] == []  # a harness fault never teaches a constraint
    assert run(*base, "--since", "1h") == EXIT_OK  # the fixture's failures are two days old
    assert json.loads(capsys.readouterr().out)["failures"] == []


def test_show_other_tenant_is_empty(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Records of another workspace and project are not shown."""
    assert run("show", "--path", str(db), "--json") == EXIT_OK
    assert json.loads(capsys.readouterr().out) == {
        "failures": [], "patterns": [], "constraints": []
    }  # fmt: skip


def test_bad_since_is_a_usage_error(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unreadable --since exits 2 with the accepted forms."""
    assert run("show", "--path", str(db), "--since", "yesterday") == EXIT_USAGE
    assert "30m, 2h, 3d" in capsys.readouterr().err


def test_guard_prints_the_block(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """guard prints the PromptGuard block the LLM would see."""
    assert run("guard", "--path", str(db), "-w", "acme", "-p", "web") == EXIT_OK
    out = capsys.readouterr().out
    assert "REPEAT FAILURE GUARD" in out and "edit search string not found" in out


def test_guard_on_empty_tenant_says_so(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty block is explained on stderr, stdout stays empty."""
    assert run("guard", "--path", str(db)) == EXIT_OK
    captured = capsys.readouterr()
    assert captured.out == "" and "empty" in captured.err


def test_show_leaves_out_what_the_workspace_contradicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Once the missing file exists in the working directory, show no longer lists the fact."""
    path = tmp_path / "memory.db"
    with FailureMemory(path) as memory:
        memory.record("read_file", {"path": "notes.md"}, error="No such file or directory")
    assert run("show", "--path", str(path), "--json") == EXIT_OK
    assert [c["target"] for c in json.loads(capsys.readouterr().out)["constraints"]] == [
        "notes.md"
    ]
    (tmp_path / "notes.md").write_text("here now\n")
    assert run("show", "--path", str(path), "--json") == EXIT_OK
    assert json.loads(capsys.readouterr().out)["constraints"] == []
    assert run("guard", "--path", str(path)) == EXIT_OK
    assert "notes.md" not in capsys.readouterr().out
