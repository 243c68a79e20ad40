"""Connections kept one per thread, for the stores that hold driver connections.

A driver connection (SQLite, psycopg) must not be used by two threads at once, nor carried
into a forked child: the child would share the parent's file descriptors, lock state or
server session. So each thread gets its own connection, every connection opened is
registered so that :meth:`PerThread.close` closes them all, and a forked child forgets the
inherited ones (``scarguard._fork``). A driver says what the child does with them
(:attr:`PerThread._close_in_child`): keep them alive unclosed (closing a psycopg connection
would end the parent's session), or close them (SQLite, which must not keep the parent's
per-file state alive in the child).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from scarguard import _fork

__all__ = ["PerThread"]



class _Closable(Protocol):
    def close(self) -> None: ...


_C = TypeVar("_C", bound=_Closable)

_ABANDONED: list[Any] = []  # inherited across fork: kept alive, never closed


class PerThread(Generic[_C]):
    """The registry of one store's connections, one per thread (a driver's class builds on it).

    The subclass opens its connections, registers each with :meth:`_register`, and keeps
    the current thread's in :attr:`_local` (``_local.conn``); it calls :meth:`_track` once
    it is open, so that a forked child runs :meth:`forget`.
    """

    _close_errors: ClassVar[tuple[type[Exception], ...]] = ()
    """What closing a connection may raise (the driver's error): ignored by :meth:`close`."""
    _close_in_child: ClassVar[bool] = False
    """Whether a forked child closes the connections it inherited (else keeps them alive,
    unused), when none of them can be in use: the fork came from outside ``_fork.writing``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._local = threading.local()
        self._all: list[_C] = []
        self._closed = False

    def _track(self) -> None:
        _fork.track(self, PerThread.forget)

    def _register(self, conn: _C) -> _C:
        """Register a connection just opened, so that :meth:`close` closes it; return it."""
        with self._lock:
            self._all.append(conn)
        return conn

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def forget(self) -> None:
        """Drop connections inherited across ``fork`` (called in the child)."""
        inherited, self._all = self._all, []
        if self._close_in_child and not _fork.forked_inside():
            for conn in inherited:
                with contextlib.suppress(*self._close_errors):
                    conn.close()
        else:
            _ABANDONED.extend(inherited)
        self._local = threading.local()
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close every thread's connection; later use raises the store's error."""
        with self._lock:
            connections, self._all = self._all, []
            self._closed = True
        self._local = threading.local()
        with _fork.writing():  # a fork waits: the child never inherits one half closed
            for conn in connections:
                with contextlib.suppress(*self._close_errors):  # closing never matters more
                    conn.close()
        _fork.untrack(self)
