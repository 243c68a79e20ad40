"""The ``scarguard`` command as a whole: opening stores, exit codes, help, the entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import run
from scarguard import FailureMemory
from scarguard.cli import EXIT_OK, EXIT_STORE, EXIT_USAGE

INSPECTION = ["show", "guard", "verify", "export", "stats", "forget --all --yes", "import"]


pytestmark = pytest.mark.usefixtures("cli_cwd")  # in tmp_path, no $SCARGUARD_PATH


@pytest.mark.parametrize("command", INSPECTION)
def test_missing_store_exits_3_with_one_line_and_creates_nothing(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every command on a missing store prints one clear line, exits 3, creates nothing."""
    missing = tmp_path / "nowhere" / "memory.db"
    assert run(*command.split(), "--path", str(missing)) == EXIT_STORE
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no scarguard memory at" in err
    assert not missing.exists() and not missing.parent.exists()


@pytest.mark.parametrize("command", INSPECTION)
def test_missing_default_store_is_not_created(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --path the default .scarguard/memory.db is checked, never created."""
    assert run(*command.split()) == EXIT_STORE
    assert ".scarguard" in capsys.readouterr().err
    assert not (tmp_path / ".scarguard").exists()


def test_unreadable_store_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file that is not a store is reported in one line and left untouched."""
    bad = tmp_path / "bad.db"
    bad.write_text("not a database")
    assert run("show", "--path", str(bad)) == EXIT_STORE
    assert "not an SQLite database" in capsys.readouterr().err
    assert bad.read_text() == "not a database"


def test_stats_counts_and_size(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """stats reports counts per tool, kind, blame and the size on disk."""
    assert run("stats", "--path", str(db), "-w", "acme", "-p", "web", "--json") == EXIT_OK
    data = json.loads(capsys.readouterr().out)
    assert data["failures"] == 6
    assert data["failures_by_blame"]["harness"] == 2
    assert data["failures_by_signature"]["edit_failed"] == 2
    assert data["size_bytes"] > 0
    assert run("stats", "--path", str(db), "-w", "acme", "-p", "web") == EXIT_OK
    out = capsys.readouterr().out
    assert "on disk" in out and "Per blame" in out


@pytest.mark.parametrize("command", ["demo", "show", "guard", "forget", "verify", "export",
                                     "import", "stats"])  # fmt: skip
def test_every_command_has_help_with_examples(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--help of every command shows examples."""
    assert run(command, "--help") == EXIT_OK
    assert "examples:" in capsys.readouterr().out


def test_no_command_and_unknown_option_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    """argparse errors and a missing command exit 2."""
    assert run() == EXIT_USAGE
    assert run("show", "--bogus") == EXIT_USAGE
    assert run("demo", "--steps", "0") == EXIT_USAGE
    assert "exit codes" in capsys.readouterr().err


@pytest.mark.slow
def test_console_entry_point_runs_in_a_subprocess(db: Path) -> None:
    """python -m scarguard verify exits with the command's code."""
    done = subprocess.run(
        [sys.executable, "-m", "scarguard", "verify", "--path", str(db)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "intact" in done.stdout
    missing = subprocess.run(
        [sys.executable, "-m", "scarguard", "show", "--path", str(db.parent / "no.db")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert missing.returncode == EXIT_STORE and "no scarguard memory" in missing.stderr


def test_show_and_verify_a_postgresql_memory(capsys: pytest.CaptureFixture[str]) -> None:
    """The inspection commands open a PostgreSQL URL like a file path."""
    from helpers.postgres import drop_schema, new_schema, require_postgres, url_for

    require_postgres()
    schema = new_schema()
    url = url_for(schema)
    try:
        with FailureMemory(url, workspace="fleet", project="api") as memory:
            memory.record(
                "edit_file", {"path": "a.py", "old_string": "x"}, error="old_string not found"
            )
        capsys.readouterr()
        assert run("show", "--path", url, "-w", "fleet", "-p", "api", "--json") == 0
        shown = json.loads(capsys.readouterr().out)
        assert shown["constraints"][0]["tool"] == "edit_file"
        assert run("verify", "--path", url) == 0
    finally:
        drop_schema(schema)


def test_scarguard_path_with_a_tilde_finds_the_store(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SCARGUARD_PATH=~/memory.db (unexpanded, as from an env file) reads the home store."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SCARGUARD_PATH", "~/memory.db")
    monkeypatch.chdir(tmp_path / "..")
    assert run("verify", "-w", "acme", "-p", "web") == EXIT_OK
    assert "receipt chain intact" in capsys.readouterr().out


