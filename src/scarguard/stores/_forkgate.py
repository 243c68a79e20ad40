"""Keep ``fork`` out of SQLite write transactions held by other threads.

SQLite keeps the lock state of every open file in the process's memory. A child created by
``fork`` while another thread of the parent is inside ``BEGIN IMMEDIATE`` inherits that
memory saying "a connection of this process holds the write lock", and no thread of the
child ever releases it: every write of the child then reports "database is locked" for as
long as it lives. So a write transaction is a short critical section that ``fork`` waits
for: before forking, the forking thread waits until no *other* thread is inside one, and
holds new ones back until the fork is done (in the parent and the child).

The forking thread's own transaction (a fork from inside a ``with store.transaction()``)
is not waited for: that would wait for itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["writing"]

_cond = threading.Condition(threading.Lock())
_active: dict[int, int] = {}  # thread ident -> nesting depth of its write transactions
_forking = False


@contextmanager
def writing() -> Iterator[None]:
    """Mark the calling thread as inside a write transaction for the ``with`` block."""
    me = threading.get_ident()
    with _cond:
        while _forking and me not in _active:
            _cond.wait()
        _active[me] = _active.get(me, 0) + 1
    try:
        yield
    finally:
        with _cond:
            depth = _active.pop(me) - 1
            if depth:
                _active[me] = depth
            _cond.notify_all()


def _before_fork() -> None:
    global _forking
    _cond.acquire()
    _forking = True
    me = threading.get_ident()
    while any(ident != me for ident in _active):
        _cond.wait()


def _after_fork_in_parent() -> None:
    global _forking
    _forking = False
    _cond.notify_all()
    _cond.release()


def _after_fork_in_child() -> None:
    global _cond, _active, _forking
    me = threading.get_ident()
    _active = {ident: depth for ident, depth in _active.items() if ident == me}
    _forking = False
    _cond = threading.Condition(threading.Lock())


if hasattr(os, "register_at_fork"):  # not on Windows (no fork there either)
    os.register_at_fork(
        before=_before_fork,
        after_in_parent=_after_fork_in_parent,
        after_in_child=_after_fork_in_child,
    )
