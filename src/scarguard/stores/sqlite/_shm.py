"""Notice a commit to an SQLite file in WAL mode without a statement: the WAL-index header.

In WAL mode every connection to a database shares the ``-shm`` file, whose first 96 bytes
are two copies of the WAL-index header (https://www.sqlite.org/walformat.html, "The
WAL-Index Header"). A writer updates it at every commit: ``iChange`` counts transactions,
``mxFrame`` is the last valid frame, the salts change when the log restarts. A reader that
finds both copies identical, and identical to what it saw before, knows that nobody
committed since; SQLite's own readers rely on the same check. Reading it is one ``pread``
of 96 bytes, where ``PRAGMA data_version`` is a statement. (It is not memory-mapped: the
first connection to a database truncates the ``-shm`` file, and a mapped page past the end
of a file kills the process with ``SIGBUS``; a short read is only a short read.)

It is only ever a shortcut: the store's change token stays ``PRAGMA data_version`` plus its
own commit counter, read again whenever the header moved, was half written, or cannot be
read (no ``-shm`` file, not POSIX, an exclusive-locking or in-memory WAL index). The open
file's identity is checked again every time the store checks its own file (twice a
second), so a ``-shm`` file deleted and created afresh is opened afresh.

The descriptors are never closed. SQLite locks the ``-shm`` file with POSIX advisory locks,
which belong to the process and the file: closing *any* descriptor of the file releases
every lock this process holds on it, those of every SQLite connection included (SQLite
shares one descriptor per file among its connections for that reason). So one read-only
descriptor per ``-shm`` file is opened per process and kept for the life of the process.
"""

from __future__ import annotations

import os

__all__ = ["WalIndex"]

_HEADER = 48
"""Bytes in one copy of the WAL-index header."""
_IS_INIT = 12
"""Offset of ``isInit``: zero while the WAL index is being (re)built."""
_OPENED: dict[tuple[int, int], int] = {}
"""``(st_dev, st_ino)`` of a ``-shm`` file -> this process's read-only descriptor of it."""


def _descriptor(path: str, identity: tuple[int, int]) -> int | None:
    known = _OPENED.get(identity)
    if known is not None:
        return known
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        st = os.fstat(fd)
    except OSError:
        return None
    # kept even when it turns out to be another file or a second one: never closed (above)
    found = (st.st_dev, st.st_ino)
    return _OPENED.setdefault(found, fd) if found == identity else None


class WalIndex:
    """Read the WAL-index header of one database from its ``-shm`` file.

    Args:
        path: The database file (its ``-shm`` file is beside it).
    """

    def __init__(self, path: str) -> None:
        self.path = f"{path}-shm"
        self._fd: int | None = None
        self._identity: tuple[int, int] | None = None
        self.enabled = os.name == "posix"

    def read(self) -> bytes | None:
        """Return both copies of the header as they are now (``None``: cannot be read).

        Bytes equal to ones :meth:`trusted` accepted are trusted too: the one read of a
        check that nothing moved.
        """
        fd = self._fd
        if fd is None:
            return None
        try:
            return os.pread(fd, 2 * _HEADER, 0)
        except OSError:
            return None

    @staticmethod
    def trusted(both: bytes | None) -> bool:
        """Return whether what :meth:`read` returned is a whole, settled header."""
        if both is None or len(both) < 2 * _HEADER:
            return False  # unreadable, or truncated by a first connection rebuilding it
        first = both[:_HEADER]
        return first == both[_HEADER:] and bool(first[_IS_INIT])  # else: being written

    def header(self) -> bytes | None:
        """Return the current header, or ``None`` when it cannot be trusted right now."""
        both = self.read()
        return both[:_HEADER] if both is not None and self.trusted(both) else None

    def refresh(self) -> None:
        """Find the ``-shm`` file again: it may have been created or replaced since."""
        if not self.enabled:
            return
        try:
            st = os.stat(self.path)
        except OSError:
            self.close()
            return
        identity = (st.st_dev, st.st_ino)
        if identity != self._identity or self._fd is None:
            self._fd = _descriptor(self.path, identity)
            self._identity = identity if self._fd is not None else None

    def close(self) -> None:
        """Stop reading the header (the descriptor stays open: see the module's notes)."""
        self._fd, self._identity = None, None
