"""``scarguard forget``, ``verify``, ``export``, ``import``: lifting, checking, moving records."""

from __future__ import annotations

import io
import json
import sqlite3
import sys
from pathlib import Path

import pytest

from helpers.cli import run
from scarguard import FailureMemory
from scarguard.cli import EXIT_BROKEN, EXIT_OK, EXIT_STORE, EXIT_USAGE

pytestmark = pytest.mark.usefixtures("cli_cwd")  # in tmp_path, no $SCARGUARD_PATH




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
