"""Connections to one SQLite file: one per thread, new ones after ``fork``, busy retries.

An SQLite connection must not be used by two threads at once, nor carried into a child
process (the child would share the parent's file descriptors and lock state). So each
thread gets its own connection, and a child process forgets every inherited one: they are
kept alive but never closed there, since closing would release locks the parent holds
(the registry is :class:`~scarguard.stores._threads.PerThread`, shared with PostgreSQL).

A write transaction that finds the database busy past ``busy_timeout`` is retried a few
times with jittered waits by tenacity. The ``Retrying`` object is built only when a retry
is needed, so the common path costs one ``BEGIN IMMEDIATE`` and nothing else.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from scarguard._fork import writing
from scarguard._warnings import warn
from scarguard.errors import SchemaVersionError, StoreCorruptionWarning, StoreError
from scarguard.stores._threads import PerThread
from scarguard.stores.sqlite._schema import SCHEMA_VERSION, apply_migrations, user_version

if TYPE_CHECKING:
    import tenacity

__all__ = ["Connections", "is_busy", "rollback"]

_HEADER = b"SQLite format 3\x00"
_log = logging.getLogger("scarguard.stores.sqlite")
_SERIALS = itertools.count(1)
"""Numbers of connections (``next`` on it is atomic): see :meth:`Connections.serial`."""


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def is_busy(exc: BaseException) -> bool:
    """Return whether ``exc`` is SQLite reporting another writer ("locked", "busy")."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is open; never raise (an exception is already in flight)."""
    with contextlib.suppress(sqlite3.Error):
        if conn.in_transaction:
            conn.execute("ROLLBACK")


class Connections(PerThread[sqlite3.Connection]):
    """Open, validate and migrate one database file, then hand out per-thread connections.

    Args:
        path: Absolute path of the database file.
        durable: ``synchronous=FULL`` instead of ``NORMAL``.
        busy_timeout_ms: SQLite's own wait for the write lock.
    """

    _close_errors = (sqlite3.Error,)
    _close_in_child = True
    """A forked child closes the connections it inherited: kept open, they would keep
    SQLite's per-file state of the parent alive in the child (its locks, the mapped
    ``-shm``), the child's new connections would share it and take no lock of their own, and
    the parent's last close would delete the ``-wal`` and ``-shm`` the child still uses.
    Closing takes no lock the parent holds (POSIX locks are not inherited) and, while the
    parent's connections hold theirs, neither checkpoints nor deletes anything. Every
    statement runs inside ``_fork.writing``, so no inherited connection is in the middle of
    one (a fork from inside one keeps them all, unclosed)."""
    retry_attempts = 3
    """How many times a busy ``BEGIN IMMEDIATE`` is tried before giving up."""
    retry_wait: tenacity.wait.wait_base | None = None
    """Wait between busy retries (default: jittered exponential; tests may set
    ``tenacity.wait_none()``). tenacity is imported only when a retry is needed."""

    def __init__(self, path: str, *, durable: bool, busy_timeout_ms: int) -> None:
        self.path = path
        self.durable = durable
        self.busy_timeout_ms = int(busy_timeout_ms)
        super().__init__()
        self._reopening = threading.Lock()
        self._open()
        self.identity = _identity(self.path)
        self._track()

    def still_the_file(self) -> bool:
        """Make sure the file at the path is the one open; reopen or raise if it is not.

        A database file deleted or replaced while open would keep receiving writes into the
        unlinked file, lost to everyone else. One ``stat`` tells. A file deleted with its
        ``-wal`` and ``-shm`` is created afresh (a warning says so; ``False`` is returned).
        A file replaced, or deleted with a write-ahead log left beside it, cannot be opened
        safely from here (that log belongs to the old file): :class:`StoreError` then says
        to open the memory again.
        """
        found = _identity(self.path)
        if found == self.identity:
            return True
        with self._reopening:
            found = _identity(self.path)
            if found == self.identity:
                return True
            leftovers = [p for p in (f"{self.path}-wal", f"{self.path}-shm") if os.path.exists(p)]
            if found is not None or leftovers:
                what = "replaced by another file" if found is not None else "deleted"
                raise self.error(
                    f"was {what} while open; nothing more is written here, so that no record"
                    " goes into the old file: open the memory again (a new FailureMemory) to"
                    " use the file now at the path"
                )
            with self._lock:
                stale, self._all = self._all, []
                self._local = threading.local()
            for conn in stale:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._open()
            self.identity = _identity(self.path)
        message = (
            f"SQLite store {self.path} was deleted while open; created it afresh (the records"
            " written before went with the deleted file)"
        )
        _log.warning(message)
        warn(message, StoreCorruptionWarning, stacklevel=4, logged=True)
        return False

    def error(self, what: str, exc: BaseException | None = None) -> StoreError:
        """Return a :class:`StoreError` naming the file, ``what`` failed and why."""
        detail = f": {exc}" if exc is not None else ""
        return StoreError(f"SQLite store {self.path}: {what}{detail}", path=self.path)

    def _open(self) -> None:
        if os.path.isdir(self.path):
            raise self.error("is a folder, not a database file")
        header: bytes | None
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(self.path, "rb") as handle:
                header = handle.read(len(_HEADER))
        except FileNotFoundError:
            header = None
        except OSError as exc:
            raise self.error("cannot create or read the file", exc) from exc
        if header and header != _HEADER:
            raise self.error("is not an SQLite database (left untouched)")
        conn = self._connect()
        if header is None:  # created just now: readable by its owner only (-wal, -shm follow)
            with contextlib.suppress(OSError):
                os.chmod(self.path, 0o600)
        try:
            with writing():
                self._check_version(conn)  # before the first write: a newer file stays as is
                conn.execute("PRAGMA journal_mode=WAL")
            if user_version(conn) < SCHEMA_VERSION:
                with self.write(conn):
                    self._check_version(conn)
                    if user_version(conn) < SCHEMA_VERSION:  # another process may have won
                        apply_migrations(conn)
        except StoreError:
            self.close()
            raise
        except sqlite3.Error as exc:
            self.close()
            raise self.error("cannot open the database", exc) from exc
        self._local.conn = conn

    def _check_version(self, conn: sqlite3.Connection) -> None:
        found = user_version(conn)
        if found > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"SQLite store {self.path} has schema version {found}, newer than the"
                f" {SCHEMA_VERSION} this scarguard reads; upgrade scarguard (file left untouched)",
                path=self.path,
            )

    def _connect(self) -> sqlite3.Connection:
        if self._closed:
            raise self.error("the store is closed")
        try:
            with writing():
                conn = sqlite3.connect(
                    self.path,
                    isolation_level=None,  # we issue BEGIN IMMEDIATE / COMMIT ourselves
                    check_same_thread=False,  # only so that close() can close every thread's
                    timeout=self.busy_timeout_ms / 1000,
                )
                conn.execute(f"PRAGMA busy_timeout = {self.busy_timeout_ms}")
                conn.execute(f"PRAGMA synchronous = {'FULL' if self.durable else 'NORMAL'}")
        except sqlite3.Error as exc:
            raise self.error("cannot open the database", exc) from exc
        return self._register(conn)

    @property
    def local(self) -> threading.local:
        """State kept per thread beside its connection (a new one with a new connection)."""
        return self._local

    def get(self) -> sqlite3.Connection:
        """Return this thread's connection, opening it on first use."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        return conn

    def serial(self) -> int:
        """The number of this thread's connection, unique in the process.

        ``PRAGMA data_version`` values of two connections are not comparable (every new
        connection starts from the same small value, whatever was committed before it
        opened), so a token built from one carries the number of its connection.
        """
        serial: int | None = getattr(self._local, "serial", None)
        if serial is None:  # a thread's state is new with each of its connections
            serial = self._local.serial = next(_SERIALS)
        return serial

    def head(self, conn: sqlite3.Connection, version: int) -> tuple[int, str] | None:
        """Return the receipt chain's head this connection committed last, if still current.

        ``PRAGMA data_version`` does not move with a connection's own commits, only with
        other connections' ones: read under the write lock, the same value as at that commit
        means the chain is as this connection left it, and the head needs no read.
        """
        kept: tuple[sqlite3.Connection, int, tuple[int, str]] | None = getattr(
            self._local, "head", None
        )
        if kept is None or kept[0] is not conn or kept[1] != version:
            return None
        return kept[2]

    def keep_head(
        self, conn: sqlite3.Connection, version: int, head: tuple[int, str] | None
    ) -> None:
        """Remember the head ``conn`` just committed at ``version`` (``None``: forget it)."""
        self._local.head = None if head is None else (conn, version, head)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """Give this thread's connection inside one read transaction, rolled back after.

        Under the fork gate (a fork waits for the read; the child closes this connection).
        An SQLite error, in the block too, becomes :class:`StoreError` naming the file.
        """
        try:
            with writing():
                conn = self.get()
                conn.execute("BEGIN")
                try:
                    yield conn
                finally:
                    rollback(conn)
        except sqlite3.Error as exc:
            raise self.error("read failed", exc) from exc

    @contextlib.contextmanager
    def write(self, conn: sqlite3.Connection) -> Iterator[None]:
        """Run the ``with`` block as one write transaction on ``conn``, all or nothing.

        ``BEGIN IMMEDIATE`` (busy retried, see :meth:`begin`) under the fork gate, then
        ``COMMIT``. Anything raised rolls back, and the rollback never masks it; an SQLite
        error becomes :class:`StoreError` naming the file.
        """
        with writing():  # no fork while this thread holds the write lock (scarguard._fork)
            self.begin(conn)
            try:
                yield
            except sqlite3.Error as exc:
                rollback(conn)
                raise self.error("write failed", exc) from exc
            except BaseException:
                rollback(conn)
                raise
            self.commit(conn)

    def commit(self, conn: sqlite3.Connection) -> None:
        """Commit ``conn``'s transaction; if that fails, roll back and raise :class:`StoreError`."""
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            rollback(conn)
            raise self.error("commit failed", exc) from exc

    def begin(self, conn: sqlite3.Connection) -> None:
        """Start a write transaction with ``BEGIN IMMEDIATE``, retrying while busy.

        Raises:
            StoreError: Still busy after the retries, or another SQLite error.
        """
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise self.error("cannot start a write transaction", exc) from exc
            self._retry_begin(conn)

    def _retry_begin(self, conn: sqlite3.Connection) -> None:
        import tenacity

        wait = self.retry_wait or tenacity.wait_random_exponential(multiplier=0.05, max=1)
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.retry_attempts),
            wait=wait,
            retry=tenacity.retry_if_exception(is_busy),
            reraise=True,
        )
        try:
            retrying(conn.execute, "BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise self.error(
                f"database is locked: still busy after {self.retry_attempts} retries of"
                f" {self.busy_timeout_ms} ms",
                exc,
            ) from exc
