"""Advisory file locks for the JSON store: shared for reads, exclusive for transactions.

``fcntl.flock`` locks belong to an open file description, so every lock opens the lock
file anew: two threads of one process then exclude each other exactly as two processes do,
and a child created by ``fork`` inherits no lock it did not take. The kernel drops the lock
when the process dies, so a killed writer never leaves the store locked.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from scarguard.errors import StoreError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["file_lock"]


@contextmanager
def file_lock(path: str, *, exclusive: bool) -> Iterator[None]:
    """Hold an advisory lock on ``path`` (created if missing) for the ``with`` block.

    Raises:
        StoreError: The lock file cannot be created or locked, or the platform has no
            ``fcntl`` (the JSON store needs POSIX file locks).
    """
    if fcntl is None:  # pragma: no cover - Windows
        raise StoreError("the JSON store needs POSIX file locks (fcntl)", path=path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise StoreError(f"cannot create the lock file {path}: {exc.strerror}", path=path) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
