"""Tests for the ``scarguard`` command: inspection, maintenance, exit codes."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scarguard import FailureMemory
from scarguard.cli import EXIT_BROKEN, EXIT_OK, EXIT_STORE, EXIT_USAGE, main
from scarguard.cli.rendering import parse_since

INSPECTION = ["show", "guard", "verify", "export", "stats", "forget --all --yes", "import"]


@pytest.fixture(autouse=True)
def _cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCARGUARD_PATH", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A store with two agent mistakes learned and one rate limit in workspace acme/web."""
    path = tmp_path / "memory.db"
    start = int(time.time()) - 2 * 86400  # two days ago: rules still active, --since 1h empty
    clock = iter(range(start, start + 1_000_000, 10))
    with FailureMemory(path, workspace="acme", project="web", clock=lambda: next(clock)) as m:
        for _ in range(2):
            m.record("edit_file", {"path": "a.py", "old": "x", "new": "y"},
                     error="search string not found in a.py")  # fmt: skip
            m.record("run_command", {"command": "make build"},
                     error="make: *** No rule to make target 'build'.  Stop.")  # fmt: skip
            m.record("call_api", {"url": "https://api.example.com"}, error="HTTP 429",
                     status_code=429)  # fmt: skip
    return path


def run(*argv: str) -> int:
    return main(list(argv))


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


def test_parse_since_reads_durations_and_iso() -> None:
    """Durations count back from now; ISO times are absolute."""
    assert parse_since("2h", 10_000.0) == 10_000.0 - 7200
    assert parse_since("3d", 1e6) == 1e6 - 3 * 86400
    assert parse_since("2026-01-01T00:00:00Z", 0) == 1767225600.0


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


def test_forget_without_tty_or_yes_refuses(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without a terminal and without --yes, forget lifts nothing and says how to confirm."""
    assert run("forget", "--all", "--path", str(db), "-w", "acme", "-p", "web") == EXIT_USAGE
    assert "--yes" in capsys.readouterr().err
    with FailureMemory(db, workspace="acme", project="web") as memory:
        assert memory.constraints()


def test_forget_by_tool_with_yes(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--tool with --yes lifts only that tool's constraints."""
    args = ["--path", str(db), "-w", "acme", "-p", "web"]
    assert run("forget", "--tool", "edit_file", "--yes", *args) == EXIT_OK
    assert "lifted 1 constraint" in capsys.readouterr().out
    with FailureMemory(db, workspace="acme", project="web") as memory:
        assert memory.constraints() and not memory.constraints(tool="edit_file")


def test_forget_by_id_after_confirmation(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal, forget lists the constraints and asks before lifting them."""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    with FailureMemory(db, workspace="acme", project="web") as memory:
        target = memory.constraints()[0]
    args = ["--path", str(db), "-w", "acme", "-p", "web"]
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert run("forget", target.id, *args) == EXIT_OK
    assert "nothing forgotten" in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert run("forget", target.id, *args) == EXIT_OK
    assert target.id in capsys.readouterr().out
    with FailureMemory(db, workspace="acme", project="web") as memory:
        assert target.key not in {c.key for c in memory.constraints()}


def test_forget_needs_a_selector(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """forget with nothing named is a usage error."""
    assert run("forget", "--path", str(db)) == EXIT_USAGE
    assert "--all" in capsys.readouterr().err


def test_verify_intact_chain_exits_0(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An untouched chain verifies."""
    assert run("verify", "--path", str(db)) == EXIT_OK
    assert "intact" in capsys.readouterr().out


def test_verify_tampered_chain_exits_1(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Editing one byte of a receipt payload breaks the chain at that receipt."""
    with sqlite3.connect(db) as conn:
        payload = conn.execute("SELECT payload FROM receipts WHERE seq = 2").fetchone()[0]
        tampered = (
            payload.replace("edit_file", "edit_filf", 1)
            if "edit_file" in payload
            else (payload[:-2] + ("0" if payload[-2] != "0" else "1") + payload[-1:])
        )
        assert tampered != payload
        conn.execute("UPDATE receipts SET payload = ? WHERE seq = 2", (tampered,))
    conn.close()
    assert run("verify", "--path", str(db)) == EXIT_BROKEN
    out = capsys.readouterr().out
    assert "BROKEN at receipt 2" in out
    assert run("verify", "--path", str(db), "--json") == EXIT_BROKEN
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is False and report["first_broken"] == 2 and report["reason"]


def test_export_import_round_trip(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """export writes JSON lines; import --create reads them from stdin into a new store."""
    dump = tmp_path / "dump.jsonl"
    assert run("export", "--path", str(db), "-w", "acme", "-p", "web", "-o", str(dump)) == 0
    lines = dump.read_text().splitlines()
    assert lines and all(isinstance(json.loads(line), dict) for line in lines)
    other = tmp_path / "other.db"
    assert run("import", str(dump), "--path", str(other)) == EXIT_STORE  # no --create
    monkeypatch.setattr(sys, "stdin", io.StringIO(dump.read_text()))
    assert run("import", "--path", str(other), "--create", "-w", "acme", "-p", "web") == 0
    assert "imported" in capsys.readouterr().out
    with FailureMemory(other, workspace="acme", project="web") as copy:
        assert len(copy.constraints()) == 2
        assert len(copy.recent_failures(limit=100)) == 6


def test_export_to_stdout(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without -o, export writes one JSON record per line to stdout."""
    assert run("export", "--path", str(db), "-w", "acme", "-p", "web") == EXIT_OK
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert records[0]["record"] == "header"
    assert {r["record"] for r in records} >= {"failure", "constraint"}


def test_import_rejects_garbage(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A line that is not JSON is a usage error naming the line."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"record": "header", "format": 1}\nnot json\n')
    assert run("import", str(bad), "--path", str(db)) == EXIT_USAGE
    assert "bad.jsonl:2" in capsys.readouterr().err


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


def test_import_of_a_malformed_record_is_a_usage_error_and_applies_nothing(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """JSON lines that are not valid records exit 2 naming the record; the store is unchanged."""
    before = db.read_bytes()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"record": "counter", "key": "k", "count": 1, "last_at": 1.0}\n'
        '{"record": "failure", "tool": "x"}\n'
    )
    assert run("import", str(bad), "--path", str(db), "-w", "acme", "-p", "web") == EXIT_USAGE
    err = capsys.readouterr().err
    assert "record 2" in err and err.count("\n") == 1
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM counters WHERE key = 'k'").fetchone()[0] == 0
    assert db.read_bytes() == before


def test_scarguard_path_with_a_tilde_finds_the_store(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SCARGUARD_PATH=~/memory.db (unexpanded, as from an env file) reads the home store."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SCARGUARD_PATH", "~/memory.db")
    monkeypatch.chdir(tmp_path / "..")
    assert run("verify", "-w", "acme", "-p", "web") == EXIT_OK
    assert "receipt chain intact" in capsys.readouterr().out


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
