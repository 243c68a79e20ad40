"""A deadline on every PostgreSQL round trip, whatever the network does.

A server that stops answering without closing the connection (a frozen proxy, a half-open
TCP connection) would block a read forever: TCP keepalives and ``tcp_user_timeout`` do not
fire while something on the path still acknowledges packets. Every blocking operation of a
:class:`BoundedConnection` (psycopg runs them all through ``Connection.wait``) is registered
with one watchdog thread per process; a round trip that outlives ``io_timeout`` has its
socket shut down, so the blocked call fails at once with a ``psycopg.OperationalError``
saying how long it waited, and the connection is replaced on next use.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg

from scarguard import _fork

__all__ = ["BoundedConnection", "watchdog"]

_TICK = 0.25
"""How often the watchdog looks at the deadlines (seconds): a cut comes at most this late."""


class _Watchdog:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._due: dict[int, tuple[float, BoundedConnection]] = {}
        self._ids = 0
        self._pid = 0

    @contextlib.contextmanager
    def bounded(self, conn: BoundedConnection, seconds: float) -> Iterator[None]:
        """Cut ``conn`` if the block has not finished ``seconds`` from now."""
        with self._lock:
            self._ids += 1
            ticket = self._ids
            self._due[ticket] = (time.monotonic() + seconds, conn)
            if self._pid != os.getpid():  # first use, or a forked child: no thread yet
                self._pid = os.getpid()
                name = "scarguard-pg-deadline"
                threading.Thread(target=self._run, name=name, daemon=True).start()
        try:
            yield
        finally:
            with self._lock:
                self._due.pop(ticket, None)

    def _run(self) -> None:
        pid = os.getpid()
        while self._pid == pid:
            time.sleep(_TICK)
            now = time.monotonic()
            with self._lock:
                late = [(t, c) for t, (at, c) in self._due.items() if at <= now]
                for ticket, _ in late:
                    del self._due[ticket]
            for _, conn in late:
                conn.cut()


    def reset(self) -> None:
        """In a forked child: a fresh lock (the parent's may have been held) and no thread."""
        self._lock = threading.Lock()
        self._due = {}
        self._pid = 0


watchdog = _Watchdog()
_fork.in_child(watchdog.reset)


class BoundedConnection(psycopg.Connection[tuple[Any, ...]]):
    """A psycopg connection whose every round trip ends within ``io_timeout`` seconds."""

    io_timeout: float = 10.0
    _cut_after: float | None = None

    def wait(self, *args: Any, **kwargs: Any) -> Any:
        """Run one blocking operation under the watchdog (see the module docstring)."""
        with watchdog.bounded(self, self.io_timeout):
            try:
                return super().wait(*args, **kwargs)
            except psycopg.OperationalError as exc:
                if self._cut_after is None:
                    raise
                raise psycopg.OperationalError(
                    f"no answer from the server within {self._cut_after:g} s"
                    " (the connection was closed and is replaced on next use)"
                ) from exc

    def cut(self) -> None:
        """Shut the socket down (from the watchdog): the blocked round trip fails now."""
        self._cut_after = self.io_timeout
        with contextlib.suppress(OSError, psycopg.Error, ValueError):
            sock = socket.socket(fileno=os.dup(self.pgconn.socket))
            try:
                sock.shutdown(socket.SHUT_RDWR)
            finally:
                sock.close()
