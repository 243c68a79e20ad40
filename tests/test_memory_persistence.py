"""The engine on real files: what one process learns, a fresh process refuses."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers.shared import SHARED_KINDS, Shared
from scarguard import FailureMemory
from scarguard.stores import MemoryStore
from scarguard.testing import FakeClock

RECORD = """
from scarguard import FailureMemory
memory = FailureMemory({path!r}, workspace="acme", project="web")
args = {{"path": "app.py", "old_string": "def main(", "new_string": "def run("}}
memory.record("edit_file", args, error="Error: old_string not found in app.py")
memory.close()
"""

CHECK = """
from scarguard import FailureMemory
memory = FailureMemory({path!r}, workspace="acme", project="web")
args = {{"path": "app.py", "old_string": "def main(", "new_string": "def run("}}
decision = memory.check("edit_file", args)
print("allowed" if decision.allowed else "refused")
print(decision.message)
"""


def run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


# Cases named by the store file (PostgreSQL, a schema, by its kind).
FILE_IDS = ["memory.db", "memory.json", "postgres"]


@pytest.mark.slow
@pytest.mark.parametrize("shared", SHARED_KINDS, ids=FILE_IDS, indirect=True)
def test_failure_recorded_in_one_process_blocks_the_call_in_the_next(shared: Shared) -> None:
    """A second, freshly started process refuses the call the first one saw fail."""
    path = shared.location("memory")
    run(RECORD.format(path=path))
    out = run(CHECK.format(path=path)).splitlines()
    assert out[0] == "refused"
    assert "edit_file" in out[1]


@pytest.mark.slow
@pytest.mark.parametrize("shared", SHARED_KINDS, ids=FILE_IDS, indirect=True)
def test_other_process_constraints_are_seen_without_reopening(shared: Shared) -> None:
    """An open memory sees a constraint another process just wrote, on its next check."""
    path = shared.location("memory")
    memory = FailureMemory(path, workspace="acme", project="web")
    args = {"path": "app.py", "old_string": "def main(", "new_string": "def run("}
    assert memory.check("edit_file", args).allowed
    run(RECORD.format(path=path))
    assert not memory.check("edit_file", args).allowed
    memory.close()


@pytest.mark.slow
def test_other_tenants_in_the_same_file_are_unaffected(shared: Shared) -> None:
    """A constraint learned for one project does not refuse the call in another project."""
    path = shared.location("memory")
    run(RECORD.format(path=path))
    other = FailureMemory(path, workspace="acme", project="api")
    assert other.check(
        "edit_file", {"path": "app.py", "old_string": "def main(", "new_string": "def run("}
    ).allowed
    other.close()


def test_receipt_chain_covers_engine_records(tmp_path: Path) -> None:
    """Every failure and batched success the engine writes verifies as one chain."""
    memory = FailureMemory(tmp_path / "memory.db")
    for i in range(5):
        memory.record("bash", {"command": f"job {i}"}, error="exit code 1")
        memory.record("read_file", {"path": f"{i}.py"}, ok=True)
    report = memory.verify()
    assert report.valid
    assert report.count >= 6
    memory.close()


class CountingStore(MemoryStore):
    """A memory store that counts full constraint loads."""

    def __init__(self) -> None:
        super().__init__()
        self.loads = 0

    def load_constraints(self, scope):  # type: ignore[no-untyped-def]
        self.loads += 1
        return super().load_constraints(scope)


def test_own_writes_update_the_cached_index_without_reloading() -> None:
    """After its own failures and successes, a memory checks without reloading every rule."""
    clock = FakeClock()
    store = CountingStore()
    memory = FailureMemory(store, clock=clock)
    memory.check("bash", {"command": "warm up"})
    loads = store.loads
    for i in range(20):
        clock.advance(5)
        memory.record(
            "edit_file", {"path": "a.py", "old_string": f"s{i}"}, error="old_string not found"
        )
        assert not memory.check("edit_file", {"path": "a.py", "old_string": f"s{i}"}).allowed
        memory.record("read_file", {"path": f"{i}.py"}, ok=True)
    assert store.loads == loads


def test_another_writer_forces_a_reload_and_is_seen() -> None:
    """A constraint written by another memory on the same store is seen at the next check."""
    clock = FakeClock()
    store = CountingStore()
    mine = FailureMemory(store, clock=clock)
    other = FailureMemory(store, clock=clock)
    args = {"path": "a.py", "old_string": "x"}
    assert mine.check("edit_file", args).allowed
    other.record("edit_file", args, error="old_string not found")
    assert not mine.check("edit_file", args).allowed


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_records_under_its_own_session(shared: Shared) -> None:
    """A child forked from a process with an open memory writes under a session of its own."""
    memory = FailureMemory(shared.location("memory"))
    memory.record("bash", {"command": "parent"}, error="exit code 1")
    pid = os.fork()
    if pid == 0:  # the child: record, then leave without running the parent's cleanup
        code = 0
        try:
            memory.record("bash", {"command": "child"}, error="exit code 1")
        except BaseException:
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    sessions = {f.tool + f.args["command"]: f.session for f in memory.recent_failures(10)}
    assert sessions["bashchild"] != sessions["bashparent"]
    memory.close()
