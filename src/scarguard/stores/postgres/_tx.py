"""One write transaction of the PostgreSQL store (see ``_store`` for the locking)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import psycopg

from scarguard.errors import StoreError
from scarguard.model import Constraint, Failure, Scope
from scarguard.receipts import Appending, ChainWriter, Receipt
from scarguard.stores._sql import CONSTRAINT_SQL, INSERT_COLUMNS, SQLTransaction, constraint_from
from scarguard.stores.postgres._conn import Connection
from scarguard.stores.postgres._schema import (
    BUMP,
    BUMP_MANY,
    INSERT_FAILURE,
    INSERT_RECEIPT,
    PUT_CONSTRAINT,
    SQL,
    TENANT,
)

__all__ = ["Opened", "Pipelined", "PostgresTransaction"]

_LOCK_HEAD = "SELECT seq, hash FROM receipt_head FOR UPDATE"


class Pipelined:
    """A connection in pipeline mode, for one write transaction.

    :meth:`queue` sends a statement whose result nobody reads without waiting for it;
    :meth:`execute` sends one whose result is read (rows, ``rowcount``) and waits for it and
    for everything queued before: one round trip for all of them. A failure record is then
    three round trips (the locks and the failure; the counters; the receipt and the commit)
    instead of one per statement.
    """

    __slots__ = ("conn", "pipeline")

    def __init__(self, conn: Connection, pipeline: psycopg.Pipeline) -> None:
        self.conn = conn
        self.pipeline = pipeline

    def queue(self, sql: str, params: Sequence[Any] = (), /) -> psycopg.Cursor[Any]:
        """Send a statement; its result (and error, if any) comes with the next wait."""
        return self.conn.execute(sql, params)

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> psycopg.Cursor[Any]:
        """Send a statement and wait for its result (and those queued before it)."""
        cursor = self.conn.execute(sql, params)
        self.pipeline.sync()
        return cursor


class Opened:
    """A write transaction being run by ``PostgresStore._pipelined``."""

    __slots__ = ("begin", "changed", "link", "own")

    def __init__(self, link: Pipelined) -> None:
        self.link = link
        self.begin: tuple[int, int] = (0, 0)
        self.changed = True
        self.own: int | None = None


class PostgresTransaction(Appending, SQLTransaction):
    """One write transaction on one tenant, on a connection inside ``BEGIN``.

    Args:
        conn: The connection, holding the tenant's lock.
        scope: The tenant.
        receipts: Whether :meth:`receipt` appends to the chain.
        key: The chain's HMAC key (``None``: ``SCARGUARD_RECEIPT_KEY``).
        error: Builds the store's :class:`StoreError`.
        begin: The generation token when the locks were taken.
    """

    _sql = SQL
    _put_constraint = PUT_CONSTRAINT
    _conn: Pipelined

    def __init__(
        self,
        conn: Pipelined,
        scope: Scope,
        *,
        receipts: bool,
        key: bytes | str | None,
        error: Callable[[str], StoreError],
        begin: Hashable = None,
    ) -> None:
        self._chain_on = receipts
        self._chain_key = key
        self._error = error
        self._conn = conn
        self._tenant = (scope.workspace, scope.project)
        self.changed = False
        self._begin = begin
        self.committed: Hashable | None = None  # set by the store after its commit
        self._head: tuple[int, str] | None = None  # the chain's head, once locked and read

    @property
    def begin_generation(self) -> Hashable:
        """``(commits seen elsewhere, own commits)`` once the locks were taken."""
        return self._begin

    @property
    def commit_generation(self) -> Hashable | None:
        """The token right after this commit; ``None`` while open or after a rollback."""
        return self.committed

    def add_failure(self, failure: Failure) -> Failure:
        row = failure.to_row()
        values = (*self._tenant, *(row[c] for c in INSERT_COLUMNS))
        found = self._conn.execute(INSERT_FAILURE, values).fetchone()
        self.changed = True
        if found is None:
            return failure._with_id(None)
        self._head = (int(found[1]), str(found[2]))  # locked by the insert until commit
        return failure._with_id(int(found[0]))

    def bump(self, key: str, now: float, by: int = 1) -> int:
        found = self._conn.execute(BUMP, (*self._tenant, key, by, now)).fetchone()
        self.changed = True
        return int(found[0]) if found else 0

    def bump_many(self, keys: Sequence[str], now: float, by: int = 1) -> None:
        if not keys:
            return
        # Distinct keys (ON CONFLICT cannot touch a row twice), sorted: rows lock in one order.
        tally = sorted(Counter(keys).items())
        names = [key for key, _ in tally]
        amounts = [n * by for _, n in tally]
        self._conn.queue(BUMP_MANY, (*self._tenant, now, names, amounts))
        self.changed = True

    def remove_constraints(self, keys: Iterable[str]) -> list[Constraint]:
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return []
        sql = f"DELETE FROM constraints WHERE {TENANT} AND key = ANY(%s) RETURNING {CONSTRAINT_SQL}"
        found = {
            c.key: c for c in map(constraint_from, self._conn.execute(sql, (*self._tenant, wanted)))
        }
        self.changed = self.changed or bool(found)
        return [found[k] for k in wanted if k in found]

    def _chain_head(self) -> tuple[int, str]:
        if self._head is None:
            found = self._conn.execute(_LOCK_HEAD).fetchone()
            if found is None:
                raise self._error("the receipt_head row is missing")
            self._head = (int(found[0]), str(found[1]))
        return self._head

    def _append_receipt(self, receipt: Receipt) -> None:
        values = (receipt.seq, receipt.prev, receipt.type, receipt.at_ms, receipt.payload)
        self._conn.queue(INSERT_RECEIPT, (*values, receipt.hash, receipt.seq, receipt.hash))
        self._head = (receipt.seq, receipt.hash)
        self.changed = True


if TYPE_CHECKING:  # mypy: the transaction gives the chain its primitives
    _CHAIN_WRITER: type[ChainWriter] = PostgresTransaction
