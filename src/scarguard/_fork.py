"""Fork safety in one place: a gate for write transactions, and what a child forgets.

``fork`` copies a process with one thread, the one that forked. Whatever the other threads
held at that moment stays held in the child, by threads that do not exist there: a lock is
never released, a connection belongs to the parent's session, SQLite's in-memory lock state
says "this process holds the write lock". So:

* **The gate** (:func:`writing`): a write transaction, or any SQLite statement, is a short
  critical section that ``fork`` waits for. Before forking, the forking thread waits until
  no *other* thread is inside one, and holds new ones back until the fork is done (in the
  parent and the child). The forking thread's own transaction (a fork from inside a ``with
  store.transaction()``) is not waited for: that would wait for itself;
  :func:`forked_inside` tells the child whether it was inside one.
* **The registry**: in the child, every function registered with :func:`in_child` runs, in
  registration order, then every live object tracked with :func:`track` is handed to its
  function (a store forgets its inherited connections, a lock is replaced). Objects are
  held weakly: tracking one never keeps it alive.

One ``os.register_at_fork`` hook serves them all (none on Windows, which has no ``fork``).
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["forked_inside", "in_child", "track", "untrack", "writing"]

_F = TypeVar("_F", bound=Callable[[], None])

_cond = threading.Condition(threading.Lock())
_active: dict[int, int] = {}  # thread ident -> nesting depth of its write transactions
_forking = False
_functions: list[Callable[[], None]] = []
_tracked: weakref.WeakKeyDictionary[Any, Callable[[Any], None]] = weakref.WeakKeyDictionary()


class _Gate:
    """The context manager :func:`writing` returns (a class: it is on every statement)."""

    __slots__ = ("_me",)

    def __enter__(self) -> None:
        me = self._me = _get_ident()
        with _cond:
            while _forking and me not in _active:
                _cond.wait()
            _active[me] = _active.get(me, 0) + 1

    def __exit__(self, *exc: object) -> None:
        me = self._me
        with _cond:
            depth = _active.pop(me) - 1
            if depth:
                _active[me] = depth
            if _forking:  # only a fork in progress waits for a thread to leave
                _cond.notify_all()


_get_ident = threading.get_ident


def writing() -> _Gate:
    """Mark the calling thread as inside a write transaction for the ``with`` block."""
    return _Gate()


def forked_inside() -> bool:
    """In a forked child: whether the thread that forked was inside :func:`writing` then.

    Every other thread was outside it (``fork`` waited), so only that thread's connection can
    be in the middle of a statement or a transaction.
    """
    return threading.get_ident() in _active


def in_child(function: _F) -> _F:
    """Run ``function()`` in every child forked from now on (usable as a decorator)."""
    _functions.append(function)
    return function


def track(owner: Any, forget: Callable[[Any], None]) -> None:
    """Call ``forget(owner)`` in a forked child for as long as ``owner`` is alive."""
    _tracked[owner] = forget


def untrack(owner: Any) -> None:
    """Stop tracking ``owner`` (closed: nothing of it is left to forget)."""
    _tracked.pop(owner, None)


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
    for function in list(_functions):
        function()
    for owner, forget in list(_tracked.items()):
        forget(owner)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_before_fork,
        after_in_parent=_after_fork_in_parent,
        after_in_child=_after_fork_in_child,
    )
