"""Fork safety: the write gate, and what a forked child forgets."""

from __future__ import annotations

import os
import threading

import pytest

from helpers.forking import in_child
from scarguard import _fork

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


class Owner:
    """Something holding a per-process resource; remembers whether it was told to forget."""

    forgotten = False

    def forget(self) -> None:
        self.forgotten = True


def test_a_tracked_owner_forgets_in_the_child_only() -> None:
    """The child runs ``forget(owner)``; the parent's owner is left as it was."""
    owner = Owner()
    _fork.track(owner, Owner.forget)
    try:
        assert in_child(lambda: owner.forgotten)
        assert not owner.forgotten
    finally:
        _fork.untrack(owner)


def test_an_untracked_owner_is_not_touched() -> None:
    """After ``untrack`` (a closed store) nothing is forgotten in a child."""
    owner = Owner()
    _fork.track(owner, Owner.forget)
    _fork.untrack(owner)
    assert in_child(lambda: not owner.forgotten)


def test_functions_registered_in_child_run_in_the_child() -> None:
    """A function registered with ``in_child`` runs in every later child, not in the parent."""
    ran: list[str] = []

    @_fork.in_child
    def note() -> None:
        ran.append("child")

    assert in_child(lambda: ran == ["child"])
    assert ran == []


def test_fork_waits_for_another_threads_write_transaction() -> None:
    """A fork waits while another thread is inside ``writing()``; the child is never inside it."""
    inside, leave, order = threading.Event(), threading.Event(), []

    def writer() -> None:
        with _fork.writing():
            inside.set()
            leave.wait(5)
            order.append("left")

    thread = threading.Thread(target=writer)
    thread.start()
    inside.wait(5)
    threading.Timer(0.2, leave.set).start()
    forked_after_leaving = in_child(lambda: True)
    order.append("forked")
    thread.join()
    assert forked_after_leaving
    assert order == ["left", "forked"]


def test_the_forking_threads_own_transaction_is_not_waited_for() -> None:
    """Forking from inside ``writing()`` does not wait for itself; the child may write too."""

    def child_writes() -> bool:
        with _fork.writing():
            return True

    with _fork.writing():
        assert in_child(child_writes)


def test_the_child_knows_whether_it_was_forked_from_inside_the_gate() -> None:
    """``forked_inside()`` is true in a child forked from inside ``writing()`` only."""
    assert not in_child(_fork.forked_inside)
    with _fork.writing():
        assert in_child(_fork.forked_inside)
