"""Per-thread connections of a store: each closed once by close(), never by a forked child."""

from __future__ import annotations

import os
import threading

import pytest

from helpers.forking import in_child
from scarguard.stores._threads import PerThread


class FakeConnection:
    """A connection that counts its closes and can fail to close."""

    def __init__(self, *, broken: bool = False) -> None:
        self.closes = 0
        self.broken = broken

    def close(self) -> None:
        self.closes += 1
        if self.broken:
            raise ConnectionError("already gone")


class Registry(PerThread[FakeConnection]):
    _close_errors = (ConnectionError,)

    def get(self) -> FakeConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._register(FakeConnection())
        return conn


def test_each_thread_gets_its_own_connection_and_close_closes_them_all() -> None:
    """Two threads, two connections; close() closes each once and marks the registry closed."""
    registry = Registry()
    mine = registry.get()
    assert registry.get() is mine
    theirs: list[FakeConnection] = []
    worker = threading.Thread(target=lambda: theirs.append(registry.get()))
    worker.start()
    worker.join()
    assert theirs[0] is not mine
    registry.close()
    assert (mine.closes, theirs[0].closes, registry.closed) == (1, 1, True)
    registry.close()
    assert mine.closes == 1


def test_a_connection_that_fails_to_close_does_not_stop_the_others() -> None:
    """The driver's error on close is ignored; the remaining connections are still closed."""
    registry = Registry()
    broken = registry._register(FakeConnection(broken=True))
    fine = registry._register(FakeConnection())
    registry.close()
    assert (broken.closes, fine.closes) == (1, 1)


def test_forget_drops_inherited_connections_without_closing_them() -> None:
    """What a forked child inherited is forgotten, never closed; new ones are opened."""
    registry = Registry()
    inherited = registry.get()
    registry.forget()
    fresh = registry.get()
    assert fresh is not inherited
    registry.close()
    assert (inherited.closes, fresh.closes) == (0, 1)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_forgets_the_parents_connections() -> None:
    """In a child, a tracked registry hands out a new connection and closes none of the old."""
    registry = Registry()
    registry._track()
    parent = registry.get()

    def child_forgets() -> bool:
        ok = registry.get() is not parent and parent.closes == 0
        registry.close()
        return ok and parent.closes == 0

    assert in_child(child_forgets)
    assert registry.get() is parent
    registry.close()
