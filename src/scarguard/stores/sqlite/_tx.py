"""The SQLite store's write transaction: what a ``with store.transaction(scope)`` holds.

:class:`Writing` is the context manager, a class rather than a generator because every
failure record goes through it: ``BEGIN IMMEDIATE`` under the fork gate, ``PRAGMA
data_version`` read at once (the change token at the lock), the body, the held counter bumps,
``COMMIT``; anything raised rolls back, and the rollback never masks it; an SQLite error
becomes :class:`~scarguard.errors.StoreError` naming the file. :class:`SQLiteTransaction` is
what the body gets: the shared SQL methods, plus the failure, counter and receipt writes with
this driver's statements.
"""

from __future__ import annotations

import functools
import operator
import sqlite3
from collections.abc import Hashable, Iterable, Sequence
from contextlib import AbstractContextManager
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from scarguard._fork import writing
from scarguard.model import Constraint, Failure, Scope
from scarguard.receipts import GENESIS, Appending, ChainWriter, Receipt, reseal
from scarguard.stores._files import prefix_end
from scarguard.stores._sql import (
    CONSTRAINT_SQL,
    INSERT_COLUMNS,
    RESET_MANY_PREFIXES,
    SQLTransaction,
    constraint_from,
)
from scarguard.stores.sqlite._conn import Connections, rollback
from scarguard.stores.sqlite._schema import (
    BUMP_MANY_ROWS,
    INSERT_FAILURE,
    INSERT_RECEIPT,
    PUT_CONSTRAINT,
    SQL,
    TENANT,
    bump_many_sql,
)

__all__ = ["SQLiteTransaction", "Writing"]

_HEAD = "SELECT seq, hash FROM receipts ORDER BY seq DESC LIMIT 1"
_KEYS_PER_STATEMENT = 400
"""Keys bound in one ``IN (...)``: with the tenant's two, under SQLite's oldest limit of 999."""
_DATA_VERSION = "PRAGMA data_version"
_failure_values = operator.itemgetter(*INSERT_COLUMNS)
"""A failure row's values in ``INSERT_COLUMNS`` order."""


class _OwnCommits(Protocol):
    """This process's commits to the file (the store's ``_token.ChangeToken``)."""

    @property
    def own(self) -> int: ...

    def bump(self) -> int: ...


@functools.lru_cache(maxsize=RESET_MANY_PREFIXES)
def _reset_ranges(n: int) -> str:
    """Return the ``DELETE`` of the tenant's counters in ``n`` key ranges, ``[start, end)``.

    Parameters: the tenant, each range's start and end, the tenant again.
    """
    ranges = ", ".join(["(?, ?)"] * n)
    return (
        f"DELETE FROM counters WHERE {TENANT} AND key IN (SELECT c.key FROM (VALUES {ranges})"
        " AS r JOIN counters AS c ON c.workspace = ? AND c.project = ?"
        " AND c.key >= r.column1 AND c.key < r.column2)"
    )


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


class SQLiteTransaction(Appending, SQLTransaction):
    """One write transaction's operations, inside its ``BEGIN IMMEDIATE`` (see :class:`Writing`).

    Args:
        conn: The connection holding the write lock.
        scope: The tenant written.
        begin: The change token read right after ``BEGIN IMMEDIATE``.
        head: The chain's head when known without a read (``None``: read it if needed).
        receipts: Whether receipts are kept.
        key: The chain's HMAC key.
    """

    _sql = SQL
    _put_constraint = PUT_CONSTRAINT
    _conn: _HeldBumps

    def __init__(
        self,
        conn: sqlite3.Connection,
        scope: Scope,
        begin: tuple[int, int, int],
        head: tuple[int, str] | None,
        *,
        receipts: bool,
        key: bytes | str | None,
    ) -> None:
        self._conn = _HeldBumps(conn)
        self._tenant = (scope.workspace, scope.project)
        self.changed = False
        self._begin = begin
        self._commit: tuple[int, int, int] | None = None
        self.head = head
        self._chain_on = receipts
        self._chain_key = key

    @property
    def begin_generation(self) -> Hashable:
        """``(connection, data_version, own commits)`` read right after ``BEGIN IMMEDIATE``."""
        return self._begin

    @property
    def commit_generation(self) -> Hashable | None:
        """``(connection, data_version at begin, own counter this commit set)``, or ``None``."""
        return self._commit

    def add_failure(self, failure: Failure) -> Failure:
        cursor = self._conn.execute(
            INSERT_FAILURE, (*self._tenant, *_failure_values(failure.to_row()))
        )
        self.changed = True
        return failure._with_id(cursor.lastrowid)

    def bump(self, key: str, now: float, by: int = 1) -> int:
        # With the held bumps in one statement, then its count read: a RETURNING clause
        # buffers its rows in a temporary table, which costs more than the read (26.9 vs
        # 22.6 µs for six bumps and the count, in one transaction).
        self.changed = True
        self._conn.rows += [*self._tenant, key, by, now]
        return self.count(key)

    def bump_many(self, keys: Sequence[str], now: float, by: int = 1) -> None:
        if not keys:
            return
        workspace, project = self._tenant
        self._conn.rows += [v for key in keys for v in (workspace, project, key, by, now)]
        self.changed = True

    def reset_many(self, prefixes: Sequence[str]) -> int:
        # The key ranges joined from a list of values, each range a seek of the primary key:
        # OR'd together in one DELETE, SQLite plans them as a scan of all the tenant's
        # counters (a flush of 64 successes beside 100,000 stored failures took 159 ms).
        deleted = 0
        bounds: list[str] = []
        for prefix in prefixes:
            end = prefix_end(prefix)
            if end is None:  # the empty prefix, or one only of the last code point
                deleted += self.reset(prefix)
            else:
                bounds += (prefix, end)
        step = 2 * RESET_MANY_PREFIXES
        for start in range(0, len(bounds), step):
            chunk = bounds[start : start + step]
            params = (*self._tenant, *chunk, *self._tenant)
            deleted += self._conn.execute(_reset_ranges(len(chunk) // 2), params).rowcount
        self.changed = self.changed or deleted > 0
        return deleted

    def remove_constraints(self, keys: Iterable[str]) -> list[Constraint]:
        # A select and a delete per chunk of keys, not per key: an eviction past the cap
        # removes a tenth of the constraints at once.
        wanted = list(dict.fromkeys(keys))
        found: dict[str, Constraint] = {}
        for start in range(0, len(wanted), _KEYS_PER_STATEMENT):
            chunk = wanted[start : start + _KEYS_PER_STATEMENT]
            where = f"{TENANT} AND key IN ({', '.join('?' * len(chunk))})"
            params = (*self._tenant, *chunk)
            rows = self._conn.execute(
                f"SELECT {CONSTRAINT_SQL} FROM constraints WHERE {where}", params
            ).fetchall()
            if rows:
                found.update((c.key, c) for c in map(constraint_from, rows))
                self._conn.execute(f"DELETE FROM constraints WHERE {where}", params)
        self.changed = self.changed or bool(found)
        return [found[k] for k in wanted if k in found]

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
    _CHAIN_WRITER: type[ChainWriter] = SQLiteTransaction


class Writing:
    """One write transaction on this thread's connection: ``with`` gives its operations.

    Args:
        db: The store's connections.
        token: The store's change token (its own counter moves with each commit that wrote).
        scope: The tenant written.
        receipts: Whether receipts are kept.
        key: The chain's HMAC key.
    """

    __slots__ = ("_db", "_gate", "_key", "_receipts", "_scope", "_token", "_tx")

    def __init__(
        self,
        db: Connections,
        token: _OwnCommits,
        scope: Scope,
        *,
        receipts: bool,
        key: bytes | str | None,
    ) -> None:
        self._db = db
        self._token = token
        self._scope = scope
        self._receipts = receipts
        self._key = key
        self._gate: AbstractContextManager[None] | None = None
        self._tx: SQLiteTransaction | None = None

    def __enter__(self) -> SQLiteTransaction:
        db = self._db
        db.still_the_file()  # never write into a file deleted or replaced meanwhile
        conn = db.get()
        gate = writing()  # no fork while this thread holds the write lock (scarguard._fork)
        gate.__enter__()
        try:
            db.begin(conn)
            try:
                # Under the write lock: no connection can commit until ours does.
                # data_version does not move with this connection's own commit, so it is
                # also the first half of the token right after the commit.
                version = int(conn.execute(_DATA_VERSION).fetchone()[0])
            except BaseException as exc:
                rollback(conn)
                if isinstance(exc, sqlite3.Error):
                    raise db.error("write failed", exc) from exc
                raise
            # The chain's head, when known without a read: the one this connection left at
            # its last commit, if nobody committed since (same data_version).
            head = db.head(conn, version) if self._receipts else None
            begin = (db.serial(), version, self._token.own)
        except BaseException:
            gate.__exit__(None, None, None)
            raise
        self._gate = gate
        tx = self._tx = SQLiteTransaction(
            conn, self._scope, begin, head, receipts=self._receipts, key=self._key
        )
        return tx

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        tx, gate = self._tx, self._gate
        assert tx is not None and gate is not None, "a transaction exits only once it began"
        db = self._db
        conn = tx._conn.conn
        try:
            if exc is not None:
                rollback(conn)
                if isinstance(exc, sqlite3.Error):
                    raise db.error("write failed", exc) from exc
                return
            try:
                if tx._conn.rows:
                    tx._conn.send()
            except BaseException as error:
                rollback(conn)
                if isinstance(error, sqlite3.Error):
                    raise db.error("write failed", error) from error
                raise
            db.commit(conn)
        finally:
            gate.__exit__(None, None, None)
        version = tx._begin[1]
        tx._commit = (tx._begin[0], version, self._token.bump()) if tx.changed else tx._begin
        db.keep_head(conn, version, tx.head)
