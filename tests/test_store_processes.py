"""Many processes on one store, for every kind a second process can open (SQLite, JSON,
PostgreSQL): nothing lost, no lock errors, survives SIGKILL and fork."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from helpers.factories import failure
from helpers.shared import Shared
from helpers.waiting import wait_until
from scarguard.model import Scope
from scarguard.receipts import verify_store
from scarguard.stores import open_store

pytestmark = pytest.mark.slow

WRITER = Path(__file__).parent / "helpers" / "writer.py"
SCOPE = Scope("w", "p")


def spawn(location: str, count: int, tag: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WRITER), location, str(count), tag],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_four_processes_of_500_records_lose_nothing(shared: Shared) -> None:
    """4 processes x 500 one-transaction records: no errors, 2000 distinct ids, chain verifies."""
    path = shared.location("shared")
    writers = [spawn(path, 500, f"t{n}") for n in range(4)]
    acked: list[int] = []
    for writer in writers:
        out, err = writer.communicate(timeout=180)
        lines = out.split()
        assert writer.returncode == 0 and "ERROR" not in out, (out[-500:], err[-2000:])
        assert lines[-1] == "DONE"
        acked.extend(int(x) for x in lines[:-1])
    assert len(acked) == len(set(acked)) == 2000
    store = open_store(path)
    stored = store.failures(SCOPE)
    assert len(stored) == 2000 and {f.id for f in stored} == set(acked)
    counters = store.counters(SCOPE)
    assert counters["sig:edit_failed"].count == 2000
    assert all(counters[f"tool:t{n}"].count == 500 for n in range(4))
    report = verify_store(store)
    assert report.valid and report.count == 2000, report
    store.close()
    shared.check_integrity(path)


@pytest.mark.parametrize("acks", [25, 120, 300])
def test_sigkill_mid_stream_keeps_every_acknowledged_record(
    shared: Shared, tmp_path: Path, acks: int
) -> None:
    """A writer killed after N acknowledgements: the store reopens with all N, and verifies."""
    path = shared.location("crash")
    for round_ in range(2):  # the second round writes on top of the first crash's leftovers
        writer = spawn(path, 0, f"r{round_}")
        assert writer.stdout is not None
        acked = []
        while len(acked) < acks:
            line = writer.stdout.readline()
            assert line and not line.startswith("ERROR"), line
            acked.append(int(line))
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
        writer.stdout.close()
        writer.stderr.close()  # type: ignore[union-attr]
        store = open_store(path)
        ids = {f.id for f in store.failures(SCOPE)}
        assert set(acked) <= ids
        report = verify_store(store)
        assert report.valid and report.count == len(ids), report
        with store.transaction(SCOPE) as tx:  # writable after the crash
            stored = tx.add_failure(failure(0))
            tx.receipt("failure", {"id": stored.id}, stored.at)
        assert not list(tmp_path.glob("*.tmp-*"))
        store.close()
    shared.check_integrity(path)


def _child_writes(store: object, count: int) -> None:
    for i in range(count):
        with store.transaction(SCOPE) as tx:  # type: ignore[attr-defined]
            stored = tx.add_failure(failure(i, session="child"))
            tx.bump("child", stored.at)
            tx.receipt("failure", {"id": stored.id}, stored.at)
    store.close()  # type: ignore[attr-defined]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_writes_with_its_own_connection(shared: Shared) -> None:
    """A store used in the parent keeps working in a forked child and in the parent after it."""
    path = shared.location("fork")
    store = open_store(path)
    with store.transaction(SCOPE) as tx:
        tx.add_failure(failure(0, session="parent"))
        tx.receipt("failure", {"id": 1}, 1.0)
    assert store.failures(SCOPE)  # the parent's connection is open and has read
    before = store.generation()
    context = multiprocessing.get_context("fork")
    children = [context.Process(target=_child_writes, args=(store, 50)) for _ in range(2)]
    for child in children:
        child.start()
    with store.transaction(SCOPE) as tx:  # the parent writes while the children do
        tx.add_failure(failure(1, session="parent"))
        tx.receipt("failure", {"id": 2}, 2.0)
    for child in children:
        child.join(timeout=60)
        assert child.exitcode == 0
    assert len(store.failures(SCOPE)) == 102
    assert store.counters(SCOPE)["child"].count == 100
    report = verify_store(store)
    assert report.valid and report.count == 102
    if shared.kind == "postgres":  # the children's commits reach the parent by notification
        assert wait_until(lambda: store.generation()[0] != before[0])  # type: ignore[index]
    store.close()
    shared.check_integrity(path)


_RELEASE_AT_FORK: list[threading.Event] = []


def _release_holders() -> None:  # runs before scarguard's own before-fork hooks
    while _RELEASE_AT_FORK:
        _RELEASE_AT_FORK.pop().set()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_release_holders)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_child_forked_while_another_thread_holds_a_transaction_can_write(
    shared: Shared,
) -> None:
    """A fork while another thread is inside a write transaction leaves the child able to write."""
    path = shared.location("fork-tx")
    store = open_store(path)
    inside, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.transaction(SCOPE) as tx:
            tx.add_failure(failure(0, session="holder"))
            inside.set()
            release.wait(timeout=60)  # set by the fork (before the child is created)

    holder = threading.Thread(target=hold)
    holder.start()
    assert inside.wait(timeout=60)
    _RELEASE_AT_FORK.append(release)
    child = multiprocessing.get_context("fork").Process(target=_child_writes, args=(store, 3))
    child.start()
    holder.join(timeout=60)
    child.join(timeout=60)
    if child.is_alive():
        child.kill()
        child.join()
    assert child.exitcode == 0
    assert len(store.failures(SCOPE)) == 4
    assert store.counters(SCOPE)["child"].count == 3
    store.close()
