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
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from scarguard._fork import writing
from scarguard.model import Constraint, Failure, Scope
from scarguard.receipts import (
    GENESIS,
    Appending,
    Chain,
    ChainWriter,
    FileCheckpoint,
    Receipt,
    reseal,
)
from scarguard.stores._sql import CHAIN_SQL, INSERT_COLUMNS, TABLES, SQLReads, SQLTransaction
from scarguard.stores.records import import_records
from scarguard.stores.sqlite._conn import Connections
from scarguard.stores.sqlite._schema import (
    BUMP,
    BUMP_MANY_ROWS,
    BUMP_RETURNING,
    INSERT_FAILURE,
    INSERT_RECEIPT,
    PUT_CONSTRAINT,
    SQL,
    TENANT,
    bump_many_returning_sql,
    bump_many_sql,
)
from scarguard.stores.sqlite._token import ChangeToken

__all__ = ["SQLiteStore"]

_T = TypeVar("_T")
_RETURNING = sqlite3.sqlite_version_info >= (3, 35, 0)
_HEAD = "SELECT seq, hash FROM receipts ORDER BY seq DESC LIMIT 1"


def _receipt_row(sealed: Receipt) -> tuple[Any, ...]:
    return (sealed.seq, sealed.prev, sealed.type, sealed.at_ms, sealed.payload, sealed.hash)


class _HeldBumps:
    """A transaction's connection that holds counter bumps back until a statement follows.

    A failure bumps several counters (``bump_many``) and then one more whose count it needs
    (``bump``): held back, the first ones go out in the same multi-row statement as the
    last. Any other statement, and the commit, sends them first, so every read sees them.
    """

    __slots__ = ("conn", "rows")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.rows: list[Any] = []  # the parameters of held rows, five per row

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> sqlite3.Cursor:
        if self.rows:
            self.send()
        return self.conn.execute(sql, params)

    def send(self) -> None:
        """Write the held bumps (one statement per ``BUMP_MANY_ROWS`` rows)."""
        rows, self.rows = self.rows, []
        step = BUMP_MANY_ROWS * 5
        for start in range(0, len(rows), step):
            chunk = rows[start : start + step]
            self.conn.execute(bump_many_sql(len(chunk) // 5), chunk)


class _SQLiteTransaction(Appending, SQLTransaction):
    _sql = SQL
    _put_constraint = PUT_CONSTRAINT
    _conn: _HeldBumps

    def __init__(
        self,
        store: SQLiteStore,
        conn: sqlite3.Connection,
        scope: Scope,
        begin: tuple[int, int, int],
    ) -> None:
        self._store = store
        self._conn = _HeldBumps(conn)
        self._tenant = (scope.workspace, scope.project)
        self.changed = False
        self._begin = begin
        self._commit: tuple[int, int, int] | None = None
        # The chain's head, when known without a read: the one this connection left at its
        # last commit, if nobody committed since (same ``data_version``).
        self.head = store._db.head(conn, begin[1]) if store.receipts else None
        self._chain_on = store.receipts
        self._chain_key = store._key

    @property
    def begin_generation(self) -> Hashable:
        """``(connection, data_version, own commits)`` read right after ``BEGIN IMMEDIATE``."""
        return self._begin

    @property
    def commit_generation(self) -> Hashable | None:
        """``(connection, data_version at begin, own counter this commit set)``, or ``None``."""
        return self._commit

    def add_failure(self, failure: Failure) -> Failure:
        row = failure.to_row()
        values = (*self._tenant, *(row[c] for c in INSERT_COLUMNS))
        cursor = self._conn.execute(INSERT_FAILURE, values)
        self.changed = True
        return failure._with_id(cursor.lastrowid)

    def bump(self, key: str, now: float, by: int = 1) -> int:
        self.changed = True
        if not _RETURNING:
            self._conn.execute(BUMP, (*self._tenant, key, by, now))
            return self.count(key)
        held = self._conn.rows
        if held and len(held) < BUMP_MANY_ROWS * 5 and key not in held[2::5]:
            # the held bumps and this one in one statement (each key once: one row back each)
            params, self._conn.rows = [*held, *self._tenant, key, by, now], []
            sql = bump_many_returning_sql(len(params) // 5)
            return next(int(c) for k, c in self._conn.conn.execute(sql, params) if k == key)
        row = self._conn.execute(BUMP_RETURNING, (*self._tenant, key, by, now)).fetchone()
        return int(row[0])

    def bump_many(self, keys: Sequence[str], now: float, by: int = 1) -> None:
        if not keys:
            return
        workspace, project = self._tenant
        self._conn.rows += [v for key in keys for v in (workspace, project, key, by, now)]
        self.changed = True

    def remove_constraints(self, keys: Iterable[str]) -> list[Constraint]:
        removed = []
        for key in keys:
            existing = self.constraint(key)
            if existing is not None:
                sql = f"DELETE FROM constraints WHERE {TENANT} AND key = ?"
                self._conn.execute(sql, (*self._tenant, key))
                removed.append(existing)
        self.changed = self.changed or bool(removed)
        return removed

    def _chain_head(self) -> tuple[int, str]:
        return self.head if self.head is not None else self._read_head()

    def _append_receipt(self, receipt: Receipt) -> None:
        try:
            self._conn.execute(INSERT_RECEIPT, _receipt_row(receipt))
        except sqlite3.IntegrityError:
            # The seq key or the chain's trigger: the head moved under a stale cache. The write
            # lock is held, so the head read now is the real one (the statement alone failed).
            seq, prev = self._read_head()
            receipt = reseal(receipt, seq + 1, prev, self._chain_key)
            self._conn.execute(INSERT_RECEIPT, _receipt_row(receipt))
        self.head = (receipt.seq, receipt.hash)
        self.changed = True

    def _read_head(self) -> tuple[int, str]:
        found = self._conn.execute(_HEAD).fetchone()
        return (int(found[0]), str(found[1])) if found else (0, GENESIS)


if TYPE_CHECKING:  # mypy: the transaction gives the chain its primitives
    _CHAIN_WRITER: type[ChainWriter] = _SQLiteTransaction


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

    @contextmanager
    def transaction(self, scope: Scope) -> Iterator[_SQLiteTransaction]:
        """Hold SQLite's write lock (``BEGIN IMMEDIATE``); roll back if the body raises."""
        self._db.still_the_file()  # never write into a file deleted or replaced meanwhile
        conn = self._db.get()
        with self._db.write(conn):
            # Under the write lock: no connection can commit until ours does. data_version
            # does not move with this connection's own commit, so it is also the first half
            # of the token right after the commit.
            version = int(conn.execute("PRAGMA data_version").fetchone()[0])
            serial = self._db.serial()
            tx = _SQLiteTransaction(self, conn, scope, (serial, version, self._token.own))
            yield tx
            tx._conn.send()
        tx._commit = (serial, version, self._token.bump()) if tx.changed else tx._begin
        self._db.keep_head(conn, version, tx.head)

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
