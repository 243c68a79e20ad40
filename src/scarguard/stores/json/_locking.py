"""Advisory file locks for the JSON store: shared for reads, exclusive for transactions.

``fcntl.flock`` locks belong to an open file description, so every lock opens the lock
file anew: two threads of one process then exclude each other exactly as two processes do.
The kernel drops the lock when the process dies, so a killed writer never leaves the store
locked.

A child created by ``fork`` inherits the descriptors, and with them the locks, that other
threads of the parent held at that moment; those threads do not exist in the child, so it
would keep the lock until it exits (and wait for itself at its first transaction). The
child therefore closes every inherited lock descriptor but its own thread's: the parent's
thread keeps its lock, and releases it as usual.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from scarguard import _fork
from scarguard.errors import StoreError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["file_lock"]

_held: dict[int, int] = {}  # lock descriptor -> ident of the thread holding it


@_fork.in_child
def _after_fork_in_child() -> None:
    me = threading.get_ident()
    for fd, owner in list(_held.items()):
        if owner != me:
            del _held[fd]
            with contextlib.suppress(OSError):
                os.close(fd)


@contextmanager
def file_lock(path: str, *, exclusive: bool) -> Iterator[None]:
    """Hold an advisory lock on ``path`` (created if missing) for the ``with`` block.

    Raises:
        StoreError: The lock file cannot be created or locked, or the platform has no
            ``fcntl`` (the JSON store needs POSIX file locks).
    """
    if fcntl is None:  # pragma: no cover - Windows
        raise StoreError(
            f"JSON store lock {path}: the JSON store needs POSIX file locks (fcntl), which this"
            " platform does not have; use the SQLite store (a .db path, the default) instead",
            path=path,
        )
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise StoreError(f"cannot create the lock file {path}: {exc.strerror}", path=path) from exc
    _held[fd] = threading.get_ident()
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        _held.pop(fd, None)
        os.close(fd)  # closing the descriptor releases the lock
