"""Retention: Policy limits, FailureMemory.purge() and `scarguard purge`."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scarguard import ConfigurationError, FailureMemory, Policy
from scarguard.policy import DAY
from scarguard.stores import JSONStore
from scarguard.testing import FakeClock

MAKE_ERROR = "make: *** No rule to make target 'build'.  Stop."

def _history(memory: FailureMemory, clock: FakeClock, days_apart: float) -> None:
    memory.record("make", {"target": "build"}, error=MAKE_ERROR)
    memory.record("shell", {"command": "mkae"}, error="bash: mkae: command not found")
    clock.advance(days=days_apart)
    memory.record("shell", {"command": "pyhton"}, error="bash: pyhton: command not found")


@pytest.mark.parametrize("suffix", [".db", ".json"])
def test_policy_retention_purges_when_a_memory_opens(tmp_path: Path, suffix: str) -> None:
    """Failures and receipts past retention go on open; constraints stay, the chain verifies."""
    clock = FakeClock()
    path = tmp_path / f"memory{suffix}"
    forever = {"exact_call": None}  # the learned rule outlives the failures it came from
    with FailureMemory(path, clock=clock, project="p", policy=Policy(ttl=forever)) as memory:
        _history(memory, clock, days_apart=40)
        learned = memory.constraints()
        assert learned and memory.verify().valid
    keep = Policy(failure_retention=30 * DAY, receipt_retention=30 * DAY, ttl=forever)
    with FailureMemory(path, clock=clock, project="p", policy=keep) as memory:
        assert [f.args["command"] for f in memory.recent_failures()] == ["pyhton"]
        assert memory.constraints() == learned  # the learned evidence is kept
        assert memory.stats().failures_by_tool == {"make": 1, "shell": 2}  # the counters
        report = memory.verify()
        assert report.valid and report.start > 1, report
    with FailureMemory(path, clock=clock, project="p") as memory:  # no retention: nothing more
        assert len(memory.recent_failures()) == 1 and memory.verify().valid


def test_purge_by_hand_reports_what_it_deleted(tmp_path: Path) -> None:
    """purge(older_than) deletes this tenant's old failures only; receipts=False keeps them."""
    clock = FakeClock()
    path = tmp_path / "memory.db"
    with FailureMemory(path, clock=clock, project="other") as other:
        other.record("shell", {"command": "gti"}, error="bash: gti: command not found")
    with FailureMemory(path, clock=clock, project="p") as memory:
        _history(memory, clock, days_apart=10)
        report = memory.purge(5 * DAY, receipts=False)
        assert (report.failures, report.receipts) == (2, 0)
        assert report.failures_before == clock() - 5 * DAY and report.receipts_before is None
        assert memory.verify().start == 1
        assert memory.purge(5 * DAY).receipts > 0 and memory.verify().valid
    with FailureMemory(path, clock=clock, project="other") as other:
        assert len(other.recent_failures()) == 1


@pytest.mark.parametrize("bad", [0, -1.0, True, "30d"])
def test_retention_must_be_a_positive_number_of_seconds(bad: object) -> None:
    """Policy and purge() refuse a retention that is not a positive number."""
    with pytest.raises(ConfigurationError, match="failure_retention"):
        Policy(failure_retention=bad)  # type: ignore[arg-type]
    with FailureMemory(":memory:") as memory, pytest.raises(ConfigurationError):
        memory.purge(bad)  # type: ignore[arg-type]


@pytest.mark.slow
def test_a_purged_json_store_is_read_and_written_by_another_process(tmp_path: Path) -> None:
    """After the journal is rewritten, a fresh store sees the kept failures and appends."""
    clock = FakeClock()
    path = tmp_path / "memory.json"
    with FailureMemory(path, clock=clock) as memory:
        _history(memory, clock, days_apart=3)
        assert memory.purge(DAY).failures == 2
    code = (
        "from scarguard import FailureMemory;"
        f"m = FailureMemory({str(path)!r});"
        "m.record('shell', {'command': 'nmp'}, error='bash: nmp: command not found');"
        "print(sorted(f.args['command'] for f in m.recent_failures()), m.verify().valid)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    assert done.stdout.strip() == "['nmp', 'pyhton'] True"
    assert len(JSONStore(path).failures(FailureMemory(path).scope)) == 2


def scarguard(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SCARGUARD_PATH"}
    env.update(COLUMNS="80", NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "scarguard", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)  # fmt: skip


@pytest.mark.slow
def test_scarguard_purge_older_than(tmp_path: Path) -> None:
    """`purge --older-than 30d --yes` deletes old failures, compacts receipts, verify passes."""
    path = tmp_path / "memory.db"
    clock = FakeClock(time.time() - 40 * DAY)
    with FailureMemory(path, clock=clock, workspace="w", project="p") as memory:
        _history(memory, clock, days_apart=39.9)
    where = ["--path", str(path), "-w", "w", "-p", "p"]
    asked = scarguard("purge", "--older-than", "30d", *where, cwd=tmp_path)
    assert asked.returncode == 2 and "confirm with --yes" in asked.stderr
    done = scarguard("purge", "--older-than", "30d", "--yes", *where, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("deleted 2 failures recorded before")
    assert lines[1].startswith("compacted ") and "receipts behind a compact receipt" in lines[1]
    assert all(len(line) <= 80 for line in lines)
    verify = scarguard("verify", "--path", str(path), cwd=tmp_path)
    assert verify.returncode == 0 and "older ones compacted" in " ".join(verify.stdout.split())
    again = scarguard("purge", "--older-than", "30d", "--yes", *where, cwd=tmp_path)
    assert again.stdout.splitlines() == [
        again.stdout.splitlines()[0], "no receipt old enough to compact"
    ] and again.stdout.startswith("deleted 0 failures")


@pytest.mark.slow
@pytest.mark.parametrize("age", ["0d", "soon", "-3d", "2026-01-01"])
def test_scarguard_purge_needs_a_duration(tmp_path: Path, age: str) -> None:
    """A bad --older-than is a usage error, and no store is created."""
    done = scarguard("purge", "--older-than", age, "--yes", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert not (tmp_path / ".scarguard").exists()


@pytest.mark.slow
def test_scarguard_purge_on_a_missing_store_creates_nothing(tmp_path: Path) -> None:
    """purge opens an existing store only (exit 3)."""
    done = scarguard("purge", "--older-than", "30d", "--yes", cwd=tmp_path)
    assert done.returncode == 3 and "no scarguard memory" in done.stderr
    assert not (tmp_path / ".scarguard").exists()
