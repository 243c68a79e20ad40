"""The SQLite store: the default, shared safely by many threads and processes on one file.

The discipline, and why:

* **WAL journal, ``synchronous=NORMAL``** (``FULL`` with ``durable=True``): readers never
  block the writer and a commit costs one WAL append instead of a journal round trip.
* **Every write is one ``BEGIN IMMEDIATE`` … ``COMMIT``**: the write lock is taken at the
  start, so a read-then-write transaction (bump a counter, append a receipt) can never fail
  half way with ``SQLITE_BUSY`` on lock upgrade, as a deferred ``BEGIN`` (sqlite-utils'
  ``atomic()``) does under concurrent writers. Any exception rolls back, and the rollback
  never masks the exception in flight.
* **One connection per thread, new ones after ``fork``** (see ``_conn``), and busy
  past ``busy_timeout`` retried by tenacity, then raised as :class:`StoreError`.
* **Cheap revalidation**: :meth:`SQLiteStore.generation` changes when anyone commits and
  costs no statement while the WAL-index header shows no commit (``_token``). A transaction
  reads ``PRAGMA data_version`` once right after ``BEGIN IMMEDIATE``, so it can tell the
  token at its lock (``begin_generation``) and right after its commit
  (``commit_generation``: the same ``data_version``, the own counter it set).
* **Receipts** live in the same file and are appended in the same transaction as what they
  attest; the schema keeps the chain from forking (the ``seq`` key, and a trigger that
  lets a receipt on only as the next one, linked to the head). A checkpoint of the head is
  kept beside the store (``<path>.head``) to catch a truncated or rolled-back file.
* :meth:`SQLiteStore.clear` leaves the chain alone (it is append-only); receipts are the
  engine's to append, and a store never invents one.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from scarguard._fork import writing
from scarguard.model import Scope
from scarguard.receipts import Chain, FileCheckpoint, Receipt
from scarguard.stores._sql import CHAIN_SQL, TABLES, SQLReads
from scarguard.stores.records import import_records
from scarguard.stores.sqlite._conn import Connections
from scarguard.stores.sqlite._schema import SQL
from scarguard.stores.sqlite._token import ChangeToken
from scarguard.stores.sqlite._tx import Writing

__all__ = ["SQLiteStore"]

_T = TypeVar("_T")


class SQLiteStore(SQLReads):
    """Keep the failure memory in one SQLite file shared by threads and processes.

    Args:
        path: The database file (``~`` is expanded); missing parent folders are created.
        durable: Use ``synchronous=FULL``: a commit survives a power cut, at about 1 ms.
            The default (``NORMAL``) survives a crash of the process, not of the machine.
        busy_timeout_ms: How long SQLite waits for another writer before reporting busy.
        receipts: Whether to keep the tamper-evident receipt chain.
        receipt_key: HMAC key for the chain (default: ``SCARGUARD_RECEIPT_KEY``).

    Raises:
        StoreError: The path is a folder, cannot be created, or is not an SQLite file (a
            file that is not SQLite is left byte-for-byte untouched).
        SchemaVersionError: The file was written by a newer scarguard (left untouched).
    """

    _sql = SQL

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        durable: bool = False,
        busy_timeout_ms: int = 5000,
        receipts: bool = True,
        receipt_key: bytes | str | None = None,
    ) -> None:
        # the real file, so that every process finds the same -wal, -shm and .head beside it
        self._path = os.path.realpath(os.path.expanduser(os.fspath(path)))
        self.receipts = receipts
        self._key = receipt_key
        self._db = Connections(self._path, durable=durable, busy_timeout_ms=busy_timeout_ms)
        self._token = ChangeToken(self._path, self._db)

    @property
    def location(self) -> str:
        """The database file's absolute path."""
        return self._path

    @property
    def checkpoint_path(self) -> str:
        """Where the chain's checkpoint is kept: ``<path>.head``."""
        return self._path + ".head"

    def transaction(self, scope: Scope) -> Writing:
        """Hold SQLite's write lock (``BEGIN IMMEDIATE``); roll back if the body raises."""
        return Writing(self._db, self._token, scope, receipts=self.receipts, key=self._key)

    def generation(self) -> Hashable:
        """Return ``(connection, PRAGMA data_version, own commits)``: changes when anyone commits.

        Without a statement while the WAL-index header shows no commit; trusted for 1 ms
        without reading the header when it showed nothing new (commits by other processes
        are seen 1 ms later at most; this process's at once): see ``_token``.
        """
        return self._token.read()

    def peek_generation(self) -> Hashable | None:
        """Return the change token if it is known without a statement; else ``None``.

        What an event loop asks (it never waits on the store): one ``pread`` of the
        ``-shm`` file, no SQLite lock (``_token.ChangeToken.peek``); ``None`` sends the
        check off the loop, to :meth:`generation`.
        """
        return self._token.peek()

    def _read(self, read: Callable[[sqlite3.Connection], _T], *, snapshot: bool = False) -> _T:
        """Run ``read`` on this thread's connection, in one read transaction if asked."""
        if snapshot:
            with self._db.snapshot() as conn:
                return read(conn)
        try:
            with writing():  # fork waits for a statement (the child closes this connection)
                return read(self._db.get())
        except sqlite3.Error as exc:
            raise self._db.error("read failed", exc) from exc

    def _write(self, statements: Iterable[tuple[str, tuple[Any, ...]]]) -> None:
        self._db.still_the_file()
        conn = self._db.get()
        with self._db.write(conn):
            self._db.keep_head(conn, 0, None)  # the chain may change: read it next time
            for sql, params in statements:
                conn.execute(sql, params)
        self._token.bump()

    def clear(self, scope: Scope) -> None:
        """Delete the tenant's failures, counters and constraints; the chain stays."""
        self._write(SQL.clear((scope.workspace, scope.project)))

    def wipe(self) -> None:
        """Delete every tenant's records, the receipt chain and its checkpoint."""
        self._write((f"DELETE FROM {table}", ()) for table in (*TABLES, "receipts"))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.checkpoint_path)

    @property
    def checkpoints(self) -> FileCheckpoint:
        """The checkpoint of the verified head, in :attr:`checkpoint_path`."""
        return FileCheckpoint(self.checkpoint_path, self._key)

    @contextmanager
    def read_chain(self) -> Iterator[Chain]:
        """The chain, read in one snapshot (this thread's connection, a read transaction)."""
        with self._db.snapshot() as conn:
            rows = conn.execute(CHAIN_SQL)
            yield Chain((Receipt(*row) for row in rows), key=self._key)

    def purge_failures(self, scope: Scope, before: float) -> int:
        """Delete the tenant's failures recorded before ``before`` (one transaction)."""
        with self.transaction(scope) as tx:
            return tx.purge_failures(before)

    def compact_receipts(self, scope: Scope, before: float, at: float) -> int:
        """Delete receipts sealed before ``before`` behind a ``compact`` receipt."""
        if not self.receipts:
            return 0
        with self.transaction(scope) as tx:
            return tx.compact_receipts(before, at)

    def import_(self, scope: Scope, records: Iterable[Mapping[str, Any]]) -> int:
        """Add exported records to the tenant in one transaction (all or nothing)."""
        with self.transaction(scope) as tx:
            return import_records(tx, records)

    def close(self) -> None:
        """Close every thread's connection; the store may not be used afterwards."""
        self._token.close()
        self._db.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({self._path!r})"
