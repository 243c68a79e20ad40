"""The SQLite change token read on another thread: a check there decides on what the file says.

``SQLiteStore.generation`` is the calling thread's connection's ``PRAGMA data_version`` (and
the store's own commits), and the memory keeps one token for the index it cached. The
values of two connections are not comparable (a fresh connection starts at the same small
value whatever was committed before it opened), so a token read on another thread must
never pass for the one the index was loaded at. Another process bans or lifts a call;
the next check, on a thread that did not load the index, must see it: on SQLite, and on
every other store kind a second process can open (``helpers.shared``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from helpers.peer import Peer
from helpers.shared import Shared
from scarguard import FailureMemory
from scarguard.errors import ToolBlocked
from scarguard.guard.decorator import guarded_tool
from scarguard.model import Constraint, Scope

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("header_read_at_every_check")]

TOOL = "deploy"
ARGS = {"target": "prod"}
BAN = "for _ in range(2): m.record('deploy', {'target': 'prod'}, error='permission denied')"
LIFT = "result = len(m.forget(tool='deploy'))"
_T = TypeVar("_T")


def on_thread(work: Callable[[], _T]) -> _T:
    """Run ``work`` on a new thread; return what it returned."""
    out: list[_T] = []
    thread = threading.Thread(target=lambda: out.append(work()))
    thread.start()
    thread.join()
    assert out, "the thread raised"
    return out[0]


@pytest.fixture
def path(shared: Shared) -> str:
    """The memory both processes open, for each store kind they can share (``helpers.shared``)."""
    return shared.location("memory")


def test_a_lift_by_another_process_is_allowed_on_a_new_thread(
    path: str, peer: Peer, shared: Shared
) -> None:
    peer.run(BAN)
    memory = FailureMemory(path)
    try:
        assert not memory.check(TOOL, ARGS).allowed  # loaded on this thread
        before = memory.store.generation()
        peer.run(LIFT)
        shared.noticed(memory.store, before)
        assert on_thread(lambda: memory.check(TOOL, ARGS).allowed)
    finally:
        memory.close()


def test_a_ban_by_another_process_is_refused_on_a_new_thread(
    path: str, peer: Peer, shared: Shared
) -> None:
    memory = FailureMemory(path)
    try:
        assert memory.check(TOOL, ARGS).allowed  # loaded on this thread
        before = memory.store.generation()
        peer.run(BAN)
        shared.noticed(memory.store, before)
        assert not on_thread(lambda: memory.check(TOOL, ARGS).allowed)
    finally:
        memory.close()


def test_a_lift_by_another_process_is_allowed_to_an_async_tool(
    path: str, peer: Peer, shared: Shared
) -> None:
    """The async driver checks on the memory's store worker thread: a sync check on this
    thread loaded the index, another process lifts the ban, the async call runs."""
    peer.run(BAN)
    memory = FailureMemory(path)

    @guarded_tool(memory)
    async def deploy(target: str) -> str:
        return f"deployed {target}"

    try:
        assert not memory.check(TOOL, ARGS).allowed
        before = memory.store.generation()
        peer.run(LIFT)
        shared.noticed(memory.store, before)
        assert asyncio.run(deploy("prod")) == "deployed prod"
    finally:
        memory.close()


def test_a_ban_by_another_process_refuses_an_async_tool(
    path: str, peer: Peer, shared: Shared
) -> None:
    memory = FailureMemory(path)

    @guarded_tool(memory)
    async def deploy(target: str) -> str:
        return f"deployed {target}"

    try:
        assert memory.check(TOOL, ARGS).allowed
        before = memory.store.generation()
        peer.run(BAN)
        shared.noticed(memory.store, before)
        with pytest.raises(ToolBlocked):
            asyncio.run(deploy("prod"))
    finally:
        memory.close()


def test_threads_checking_in_turn_load_the_constraints_once_each(tmp_path: Path) -> None:
    """Each thread's token is remembered for the index: two threads checking in turn do not
    reload every constraint on every check (tokens of two connections never compare)."""
    path = tmp_path / "memory.db"  # SQLite's tokens: one per connection, so one per thread
    memory = FailureMemory(path)
    try:
        for _ in range(2):
            memory.record(TOOL, ARGS, error="permission denied")
        loads: list[object] = []
        load = memory.store.load_constraints

        def counted(scope: Scope) -> list[Constraint]:
            loads.append(scope)
            return load(scope)

        memory.store.load_constraints = counted  # type: ignore[method-assign]
        turns = [threading.Event(), threading.Event()]
        refused: list[bool] = []

        def checker(me: int) -> None:
            for _ in range(20):
                turns[me].wait(5)
                turns[me].clear()
                refused.append(not memory.check(TOOL, ARGS).allowed)
                turns[1 - me].set()

        threads = [threading.Thread(target=checker, args=(i,)) for i in (0, 1)]
        for thread in threads:
            thread.start()
        turns[0].set()
        for thread in threads:
            thread.join()
        assert refused == [True] * 40
        assert len(loads) <= 2
    finally:
        memory.close()
