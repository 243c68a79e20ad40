"""The fast path: a call nothing known applies to is allowed without being described.

Counted, never timed: fingerprints computed (``canonical.fingerprint``) and SQL statements
issued (sqlite3's trace callback on the store's connection).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.shared import Shared
from scarguard import FailureMemory, Policy, canonical
from scarguard.errors import ToolBlocked
from scarguard.guard.decorator import guarded_tool
from scarguard.testing import FakeClock

MISSING = "ENOENT: no such file or directory"


class Counted:
    """Count fingerprints computed and statements run on this thread's connection."""

    def __init__(self, memory: FailureMemory, monkeypatch: pytest.MonkeyPatch) -> None:
        self.fingerprints = 0
        self.statements: list[str] = []
        real = canonical.fingerprint

        def counting(tool: str, args: Any) -> str:
            self.fingerprints += 1
            return real(tool, args)

        monkeypatch.setattr(canonical, "fingerprint", counting)
        conn: sqlite3.Connection = memory.store._db.get()  # type: ignore[attr-defined]
        conn.set_trace_callback(self.statements.append)

    def reset(self) -> None:
        self.fingerprints = 0
        self.statements.clear()


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[FailureMemory]:
    memory = FailureMemory(tmp_path / "memory.db", clock=FakeClock(), success_batch=1000)
    for i in range(3):  # constraints about read_file: the index is not empty
        memory.record("read_file", {"path": f"missing-{i}.py"}, error=MISSING)
    yield memory
    memory.close()


def test_clean_tool_is_allowed_without_fingerprint_or_statement(
    memory: FailureMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool that never failed and that no constraint concerns: no fingerprint is
    computed and no statement runs, check and success record included."""

    @guarded_tool(memory)
    def run_query(x: int) -> int:
        return x

    assert run_query(0) == 0  # the first check loads the index
    counted = Counted(memory, monkeypatch)
    for i in range(1, 50):
        assert run_query(i) == i
    assert counted.fingerprints == 0
    assert counted.statements == []
    assert run_query.stats.calls == 50 and run_query.stats.succeeded == 50
    decision = run_query.last_decision  # built when asked: the call as described
    assert decision is not None and decision.allowed and decision.call.tool == "run_query"
    assert decision.call.args == {"x": 49} and counted.fingerprints == 1


def test_fast_path_successes_are_counted_in_one_bounded_flush(
    memory: FailureMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batched write of fast-path successes does not grow with their number."""

    @guarded_tool(memory)
    def run_query(x: int) -> int:
        return x

    run_query(0)
    counted = Counted(memory, monkeypatch)
    flushes = []
    for n in (5, 200):
        memory.flush()
        counted.reset()
        for i in range(n):
            run_query(i)
        memory.flush()
        flushes.append(len(counted.statements))
    assert flushes[0] == flushes[1] <= 10
    assert counted.fingerprints == 0
    assert memory.stats().successes_by_tool["run_query"] == 206


def test_flush_of_described_successes_is_bounded(
    memory: FailureMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Described successes (a tool with targets, while constraints name targets) reset
    their own failure records in one statement, however many distinct calls there are."""
    memory.record("read_text", {"path": "warm.py"}, ok=True)  # lifts what a read lifts
    memory.flush()
    counted = Counted(memory, monkeypatch)
    sizes = []
    for n in (3, 90):
        counted.reset()
        for i in range(n):
            memory.record("read_text", {"path": f"file-{n}-{i}.py"}, ok=True, result=i)
        memory.flush()
        deletes = [s for s in counted.statements if s.lstrip().upper().startswith("DELETE")]
        assert len(deletes) <= 2
        sizes.append(len(counted.statements))
    assert sizes[0] == sizes[1]
    assert counted.fingerprints == 90  # each call of the last batch described once
    assert memory.stats().successes_by_tool["read_text"] == 94


def test_a_tool_that_failed_leaves_the_fast_path(
    memory: FailureMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a tool failed, its calls are described and checked again (its failure record
    is reset by its success, its repeat refused)."""
    calls: list[str] = []

    @guarded_tool(memory)
    def deploy(target: str) -> str:
        calls.append(target)
        if target == "prod":
            raise PermissionError("permission denied")
        return "ok"

    deploy("staging")
    with pytest.raises(PermissionError):
        deploy("prod")
    counted = Counted(memory, monkeypatch)
    assert deploy("staging") == "ok"
    assert counted.fingerprints >= 1
    with pytest.raises(PermissionError):
        deploy("prod")
    with pytest.raises(ToolBlocked):
        deploy("prod")
    assert calls == ["staging", "prod", "staging", "prod"]


def test_another_memory_failure_moves_the_tool_off_the_fast_path(tmp_path: Path) -> None:
    """A failure recorded through another connection to the file is seen at the next check
    (the WAL-index header moved): the identical call is then refused at once."""
    path = tmp_path / "shared.db"
    clock = FakeClock()
    ours = FailureMemory(path, clock=clock)
    theirs = FailureMemory(path, clock=clock)
    try:
        assert ours.attempt("deploy", {"target": "prod"}).__enter__().refused is False
        for _ in range(2):
            theirs.record("deploy", {"target": "prod"}, error="permission denied")
        with ours.attempt("deploy", {"target": "prod"}) as attempt:
            assert attempt.refused
    finally:
        ours.close()
        theirs.close()


def test_fast_path_loop_is_warned_from_the_third_identical_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Identical results of one call are noticed without fingerprinting each call: the
    fingerprint is computed once a result repeats, and the loop warning comes as before,
    also when a volatile argument differs on every call."""
    memory = FailureMemory(":memory:", clock=FakeClock(), policy=Policy(loop_warn=3))
    memory.check("status", {})

    @guarded_tool(memory)
    def status(job: str, request_id: str) -> str:
        return f"{job}: running"

    fingerprints = 0
    real = canonical.fingerprint

    def counting(tool: str, args: Any) -> str:
        nonlocal fingerprints
        fingerprints += 1
        return real(tool, args)

    monkeypatch.setattr(canonical, "fingerprint", counting)
    for i in range(20):  # distinct jobs, distinct results: nothing to fingerprint
        status(f"job-{i}", request_id=f"r{i}")
    assert fingerprints == 0
    for i in range(3):
        status("build", request_id=f"again-{i}")
        assert not (status.last_decision and status.last_decision.warnings)
    status("build", request_id="fourth")
    decision = status.last_decision
    assert decision is not None and decision.allowed and decision.warnings
    assert "returned the same result 3 times" in decision.message
    assert memory.convergence().status.value == "looping"


def test_wal_index_spares_the_change_statement(tmp_path: Path) -> None:
    """The SQLite change token runs no statement while the WAL-index header is unchanged,
    and moves as soon as another connection commits."""
    path = tmp_path / "token.db"
    ours = FailureMemory(path)
    theirs = FailureMemory(path)
    try:
        store = ours.store
        first = store.generation()
        statements: list[str] = []
        store._db.get().set_trace_callback(statements.append)  # type: ignore[attr-defined]
        assert store.generation() == first and statements == []
        theirs.record("bash", {"command": "make"}, error="exit code 2")
        assert store.generation() != first
        assert statements == ["PRAGMA data_version"]
    finally:
        ours.close()
        theirs.close()


def test_a_constrained_tool_is_described_once_and_runs_no_statement(
    memory: FailureMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool with constraints of its own is checked on one fingerprint against the index
    the change token just vouched for: no statement, check and success record included."""

    @guarded_tool(memory)
    def read_file(path: str, offset: int = 0) -> str:
        return f"{path}@{offset}"

    for _ in range(2):  # the index is loaded; the first read lifts what a read lifts
        assert read_file("present.py") == "present.py@0"
    counted = Counted(memory, monkeypatch)
    for i in range(1, 40):
        assert read_file(f"present-{i % 7}.py", i) == f"present-{i % 7}.py@{i}"
    assert counted.fingerprints == 39
    assert counted.statements == []
    decision = read_file.last_decision
    assert decision is not None and decision.allowed and not decision.warnings
    assert decision.call.args == {"path": "present-4.py", "offset": 39}
    assert read_file.stats.calls == 41 and read_file.stats.succeeded == 41
    with pytest.raises(ToolBlocked):  # its constraints still refuse
        read_file("missing-1.py")
    assert read_file.stats.blocked == 1


def test_a_clean_tools_failure_after_the_fast_check_is_recorded_and_propagates(
    memory: FailureMemory,
) -> None:
    """A call allowed on the fast path that raises: the very exception reaches the caller
    (its traceback ends in the tool), it is recorded, counted, and its repeat refused."""
    error = PermissionError("permission denied")

    @guarded_tool(memory)
    def deploy(target: str) -> str:
        if target == "prod":
            raise error
        return "ok"

    assert deploy("staging") == "ok"
    with pytest.raises(PermissionError) as info:
        deploy("prod")
    assert info.value is error
    assert info.traceback[-1].name == "deploy"
    assert [f.tool for f in memory.recent_failures()].count("deploy") == 1
    stats = deploy.stats
    assert (stats.calls, stats.succeeded, stats.failures) == (2, 1, 1)
    decision = deploy.last_decision
    assert decision is not None and decision.allowed and decision.call.args == {"target": "prod"}
    with pytest.raises(PermissionError):
        deploy("prod")
    with pytest.raises(ToolBlocked):
        deploy("prod")


_OTHER_PROCESS = """
import sys
from scarguard import FailureMemory
memory = FailureMemory(sys.argv[1], project="shared")
for _ in range(2):
    memory.record("deploy", {"target": "prod"}, error="permission denied")
memory.close()
"""


def test_another_process_failure_is_refused_at_the_next_guarded_call(shared: Shared) -> None:
    """Failures another process commits are seen at this process's next check, after calls
    of the tool took the fast path: the identical call is refused without running."""
    import subprocess
    import sys

    path = shared.location("shared")
    memory = FailureMemory(path, project="shared")
    runs: list[str] = []

    @guarded_tool(memory, on_block="return")
    def deploy(target: str) -> str:
        runs.append(target)
        return "deployed"

    try:
        for _ in range(3):
            assert deploy("prod") == "deployed"  # never failed here: the fast path
        done = subprocess.run(
            [sys.executable, "-c", _OTHER_PROCESS, str(path)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        answer = deploy("prod")
        assert "refused" in answer and runs == ["prod"] * 3
        assert deploy("staging") == "deployed"  # another call of the tool still runs
    finally:
        memory.close()


def test_a_replaced_record_still_sees_every_outcome(memory: FailureMemory) -> None:
    """A memory whose record() is its own (a subclass's) records clean calls through it."""
    seen: list[Any] = []

    class Recording(FailureMemory):
        def record(self, *args: Any, **kwargs: Any) -> Any:
            seen.append(kwargs.get("result"))
            return super().record(*args, **kwargs)

    other = Recording(":memory:", clock=FakeClock())

    @guarded_tool(other)
    def run_query(x: int) -> int:
        return x

    assert [run_query(i) for i in range(3)] == [0, 1, 2]
    assert seen == [0, 1, 2]
    other.close()
