"""The fast path against other writers: a call it allows is one nothing known applies to.

A tool the memory knows nothing about is allowed without a fingerprint. Once another process
(or another memory on the file) records the failures that ban a call of it, the identical
call here must be refused at once, sync or async; once another process lifts the only ban
of a tool, its call must run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from helpers.peer import Peer
from helpers.shared import Shared
from scarguard import FailureMemory
from scarguard.errors import ToolBlocked
from scarguard.guard.decorator import guarded_tool

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("header_read_at_every_check")]

BAN = "for _ in range(2): m.record('publish', {'target': 'pypi'}, error='permission denied')"
LIFT = "result = len(m.forget(tool='publish'))"


@pytest.fixture
def path(shared: Shared) -> str:
    """The memory both processes open, for each store kind they can share (``helpers.shared``)."""
    return shared.location("memory")


@pytest.fixture
def ours(path: str, peer: Peer) -> Iterator[FailureMemory]:
    memory = FailureMemory(path)
    for _ in range(2):  # something indexed: the index is not empty
        memory.record("read_file", {"path": "gone.py"}, error="ENOENT: no such file or directory")
    yield memory
    memory.close()


def test_a_ban_from_another_process_refuses_a_fast_path_tool(
    ours: FailureMemory, peer: Peer, shared: Shared
) -> None:
    """Many fast-path calls here, then the peer's first failures of the tool: the identical
    call is refused and does not run; another call of the tool still runs."""
    ran: list[str] = []

    @guarded_tool(ours)
    def publish(target: str) -> str:
        ran.append(target)
        return f"published {target}"

    for _ in range(20):
        assert publish("pypi") == "published pypi"
    before = ours.store.generation()
    peer.run(BAN)
    shared.noticed(ours.store, before)
    with pytest.raises(ToolBlocked):
        publish("pypi")
    assert publish("testpypi") == "published testpypi"
    assert ran == ["pypi"] * 20 + ["testpypi"]


def test_a_ban_from_another_memory_on_the_file_refuses_a_fast_path_tool(
    ours: FailureMemory, path: str, shared: Shared
) -> None:
    ran: list[str] = []

    @guarded_tool(ours)
    def publish(target: str) -> str:
        ran.append(target)
        return "ok"

    assert publish("pypi") == "ok"
    before = ours.store.generation()
    theirs = FailureMemory(path)
    try:
        for _ in range(2):
            theirs.record("publish", {"target": "pypi"}, error="permission denied")
        shared.noticed(ours.store, before)
        with pytest.raises(ToolBlocked):
            publish("pypi")
    finally:
        theirs.close()
    assert ran == ["pypi"]


def test_a_ban_from_another_process_refuses_an_async_fast_path_tool(
    ours: FailureMemory, peer: Peer, shared: Shared
) -> None:
    ran: list[str] = []

    @guarded_tool(ours)
    async def publish(target: str) -> str:
        ran.append(target)
        return "ok"

    async def calls() -> None:
        for _ in range(5):
            assert await publish("pypi") == "ok"
        before = ours.store.generation()
        await asyncio.get_running_loop().run_in_executor(None, peer.run, BAN)
        shared.noticed(ours.store, before)
        with pytest.raises(ToolBlocked):
            await publish("pypi")
        assert await publish("testpypi") == "ok"

    asyncio.run(calls())
    assert ran == ["pypi"] * 5 + ["testpypi"]


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_tool_whose_only_ban_another_process_lifted_runs(
    ours: FailureMemory, peer: Peer, shared: Shared, kind: str
) -> None:
    """The ban was learned here through the guarded tool; the peer forgets it: the call
    runs (and the tool's calls after its success are allowed again)."""
    ran: list[str] = []
    fail = [True, True]

    def body(target: str) -> str:
        ran.append(target)
        if fail:
            fail.pop()
            raise PermissionError("permission denied")
        return "ok"

    if kind == "sync":

        @guarded_tool(ours)
        def publish(target: str) -> str:
            return body(target)

        def call() -> str:
            return publish("pypi")

    else:

        @guarded_tool(ours, name="publish")
        async def apublish(target: str) -> str:
            return body(target)

        def call() -> str:
            return asyncio.run(apublish("pypi"))

    for _ in range(2):
        with pytest.raises(PermissionError):
            call()
    with pytest.raises(ToolBlocked):
        call()
    before = ours.store.generation()
    peer.run(LIFT)
    shared.noticed(ours.store, before)
    assert call() == "ok"
    assert call() == "ok"
    assert ran == ["pypi"] * 4
