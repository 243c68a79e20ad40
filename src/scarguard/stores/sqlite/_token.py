"""The SQLite store's change token: who committed since, known without a statement.

The token is ``(connection, PRAGMA data_version, own commits)``. ``data_version`` changes
when another connection commits; the own counter covers this process's commits, which
``data_version`` does not show to the connection that made them. The number of the calling
thread's connection is part of it because ``data_version`` values of two connections are
not comparable (a new connection starts from the same small value whatever was committed
before it opened): a token read on one thread never equals one read on another, and a
memory remembers each thread's token its index was found current under
(``learning.index.keep_token``).

The statement runs only when the WAL-index header in the ``-shm`` file moved since the
thread last read the token (``_shm``): a commit by any connection moves it, so the token is
as current as the statement would make it, at the cost of a 96-byte ``pread``. That read is
itself skipped for :data:`FRESH_FOR` after it found nothing new, unless this process
committed to the file since. So another process's commit is seen by every check that starts
``FRESH_FOR`` (1 ms) after it or later, and this process's, by any store on the file, by the
next check. Every :data:`STAT_EVERY` seconds a ``stat`` also checks that the file at the path
is still the one open (``Connections.still_the_file``): a file created afresh changes it.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Hashable

from scarguard._fork import writing
from scarguard.stores.sqlite._conn import Connections
from scarguard.stores.sqlite._shm import WalIndex

__all__ = ["FRESH_FOR", "STAT_EVERY", "ChangeToken"]

_monotonic = time.monotonic
STAT_EVERY = 0.5
"""Seconds between checks, on the read path, that the database file is still the one open."""
FRESH_FOR = 0.001
"""Seconds a thread's change token is trusted without reading the WAL-index header again.

The staleness bound for commits by other processes: a check starting at least this long
after such a commit sees it. Commits made in this process, by any store on the file, are
seen by the next check.
"""


class _FileCommits:
    """This process's commits to one database file, by any of its stores."""

    __slots__ = ("counter", "last")

    def __init__(self) -> None:
        self.counter = itertools.count(1)
        self.last = 0


_COMMITS: dict[str, _FileCommits] = {}
"""The real path of a database file -> this process's commits to it."""


class ChangeToken:
    """The change token of one store's database file (see the module's notes).

    Args:
        path: The database file's real path.
        db: The store's connections (the token's statement runs on the calling thread's).
    """

    def __init__(self, path: str, db: Connections) -> None:
        self._db = db
        self._commits = _COMMITS.setdefault(path, _FileCommits())
        # (header, own commits, token) as last trusted by any thread: what peek() answers
        # while the header stays the same
        self._trusted: tuple[bytes | None, int, Hashable] | None = None
        self._next_stat = 0.0
        self._wal = WalIndex(path)
        self._wal.refresh()

    @property
    def own(self) -> int:
        """This process's latest commit to the file, by any store on it."""
        return self._commits.last

    def bump(self) -> int:
        """Count one own commit (just made) and return the value it set.

        Values are unique (``next`` on ``itertools.count`` is atomic), though two threads
        committing at once may set them out of order. That is harmless: the threads use
        different connections, so a commit by another thread after this one moves this
        thread's ``data_version``, and one before this transaction's lock is already in its
        ``data_version``. A token equal to a transaction's ``commit_generation`` therefore
        means no other commit since; an overwritten counter only makes :meth:`read` differ
        (reload). No lock: none may be held across ``fork``. The counter is the file's,
        shared by every store on it in this process, so one store's commit moves the
        others' tokens too.
        """
        commits = self._commits
        commits.last = value = next(commits.counter)
        return value

    def read(self) -> Hashable:
        """Return the token as of now (at most :data:`FRESH_FOR` old for other processes)."""
        now = _monotonic()
        local = self._db.local
        seen = getattr(local, "generation", None)
        own = self._commits.last
        if seen is not None and now < seen[3] and seen[1] == own:
            trusted: Hashable = seen[2]  # read less than FRESH_FOR ago, nothing since here
            return trusted
        if now >= self._next_stat:  # a stat per half second on the hot path; writes: always
            self._next_stat = now + STAT_EVERY
            if not self._db.still_the_file():
                own = self.bump()
            self._wal.refresh()
        header = self._wal.read()
        if seen is not None and seen[0] == header and seen[1] == own:
            cached: Hashable = seen[2]  # the same bytes as a header trusted before
            local.generation = (header, own, cached, now + FRESH_FOR)
            self._trusted = (header, own, cached)
            return cached
        with writing():
            version = int(self._db.get().execute("PRAGMA data_version").fetchone()[0])
        token = (self._db.serial(), version, own)
        # the header was read before the statement: a commit in between moves it again, so
        # the next call reads the statement again (never a token older than the header)
        if self._wal.trusted(header):
            local.generation = (header, own, token, now + FRESH_FOR)
            self._trusted = (header, own, token)
        else:
            local.generation = None
        return token

    def peek(self) -> Hashable | None:
        """Return the token if it is known without a statement; else ``None``.

        The token some thread last read, while the WAL-index header is still the bytes it
        trusted then and this process committed nothing since, so nobody did: one ``pread``
        of the ``-shm`` file, no SQLite lock. ``None`` when the header moved, or the
        half-second check that the file is still the one open is due.
        """
        trusted = self._trusted
        if trusted is None or trusted[1] != self._commits.last:
            return None
        if _monotonic() >= self._next_stat:
            return None
        header = self._wal.read()
        return trusted[2] if header == trusted[0] else None

    def close(self) -> None:
        """Stop reading the WAL-index header."""
        self._wal.close()
