"""`scarguard stats`: calls refused and saved, shadow-mode verdicts, the per-day series."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from scarguard import FailureMemory
from scarguard.cli import main

MISSING = "FileNotFoundError: [Errno 2] No such file or directory: '{}'"
DAY = 86400.0


@pytest.fixture(autouse=True)
def _cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCARGUARD_PATH", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Three refusals over two days (yesterday and today), and a shadow-mode tenant."""
    path = tmp_path / "memory.db"
    now = [time.time() - DAY]
    with FailureMemory(path, workspace="acme", project="web", clock=lambda: now[0]) as m:
        m.record("read_file", {"path": "gone.txt"}, error=MISSING.format("gone.txt"))
        m.check("read_file", {"path": "gone.txt"})
        now[0] += DAY
        m.check("read_file", {"path": "gone.txt"})
        m.check("read_file", {"path": "gone.txt"})
    with FailureMemory(path, workspace="acme", project="shadow", enforce=False) as m:
        for path_arg, ok in (("a.txt", False), ("b.txt", True)):
            m.record("read_file", {"path": path_arg}, error=MISSING.format(path_arg))
            m.check("read_file", {"path": path_arg})
            if ok:
                m.record("read_file", {"path": path_arg}, ok=True)
            else:
                m.record("read_file", {"path": path_arg}, error=MISSING.format(path_arg))
    return path


def test_stats_shows_calls_refused_and_what_they_would_have_cost(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--price-per-call turns refusals into money saved; each day gets a row."""
    assert main(["stats", "--path", str(db), "-w", "acme", "-p", "web",
                 "--price-per-call", "0.02"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "3 calls refused (saved $0.06 at $0.02 a call)" in out
    today = time.strftime("%Y-%m-%d", time.gmtime())
    yesterday = time.strftime("%Y-%m-%d", time.gmtime(time.time() - DAY))
    rows = [line.split() for line in out.splitlines()]
    assert [yesterday, "1"] in rows and [today, "2"] in rows
    assert "scarguard forget <id>" in out
    assert "would refuse" not in out  # no shadow-mode columns without shadow-mode data
    assert max(len(line) for line in out.splitlines()[1:]) <= 80  # (line 0: the store path)


def test_stats_without_a_price_shows_the_count_only(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --price-per-call no money is mentioned."""
    assert main(["stats", "--path", str(db), "-w", "acme", "-p", "web"]) == 0
    out = capsys.readouterr().out
    assert "3 calls refused" in out and "$" not in out


def test_stats_reports_shadow_mode_precision(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A shadow tenant's stats say how many would-be refusals were right and wrong."""
    assert main(["stats", "--path", str(db), "-w", "acme", "-p", "shadow"]) == 0
    out = capsys.readouterr().out
    assert "0 calls refused" in out
    assert "2 calls would have been refused (precision 50%)" in out
    assert "of the 2 that ran, 1 failed the same way, 1 succeeded" in out
    assert max(len(line) for line in out.splitlines()[1:]) <= 80
    rows = [line.split() for line in out.splitlines()]
    header = rows.index(["id", "kind", "tool", "refused", "would", "refuse", "right", "wrong"])
    per_constraint = sorted(row[3:] for row in rows[header + 2 : header + 4])
    assert per_constraint == [["0", "1", "0", "1"], ["0", "1", "1", "0"]]


def test_stats_json_carries_the_refusal_figures(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The JSON output has the counts, the series, the verdicts and the money saved."""
    assert main(["stats", "--path", str(db), "-w", "acme", "-p", "shadow", "--json"]) == 0
    shadow = json.loads(capsys.readouterr().out)
    assert shadow["would_refuse"] == 2 and shadow["refused"] == 0
    assert shadow["shadow_verdicts"] == {"right": 1, "wrong": 1, "other": 0}
    assert shadow["shadow_precision"] == 0.5
    assert shadow["saved_usd"] is None
    assert main(["stats", "--path", str(db), "-w", "acme", "-p", "web", "--json",
                 "--price-per-call", "$0.5"]) == 0  # fmt: skip
    web = json.loads(capsys.readouterr().out)
    assert web["refused"] == 3 and web["saved_usd"] == 1.5
    assert sum(web["refused_by_day"].values()) == 3 and len(web["refused_by_day"]) == 2
    (row,) = web["by_constraint"]
    assert row["tool"] == "read_file" and row["refused"] == 3


@pytest.mark.parametrize("price", ["-1", "cheap", "nan", "inf"])
def test_a_bad_price_is_a_usage_error(
    db: Path, price: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A negative or non-numeric price exits 2 naming the problem."""
    assert main(["stats", "--path", str(db), "--price-per-call", price]) == 2
    assert "price" in capsys.readouterr().err
