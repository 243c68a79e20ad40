"""What the PostgreSQL store does besides its hot transaction: upkeep and the receipt chain.

Clearing and wiping, retention (purging failures, compacting receipts), importing, and the
chain's primitives: its read in one read-only snapshot (streamed in batches) and the
checkpoint of its verified head, kept in the table ``receipt_checkpoint`` (there is no file
beside a database). Each write runs through the store's one write transaction
(``_pipelined``, see ``_store``).
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from scarguard.errors import StoreError
from scarguard.model import Scope
from scarguard.receipts import (
    GENESIS,
    Chain,
    Checkpoints,
    Receipt,
    VerifyReport,
    check_checkpoint,
    checkpoint_mac,
    verify_store,
)
from scarguard.stores._sql import CHAIN_SQL, TABLES, SQLReads
from scarguard.stores.postgres._conn import Connections
from scarguard.stores.postgres._schema import SQL
from scarguard.stores.postgres._tx import Opened, PostgresTransaction
from scarguard.stores.records import import_records

__all__ = ["PostgresUpkeep"]

_CHAIN_BATCH = 5000
_SAVE_CHECKPOINT = (
    "INSERT INTO receipt_checkpoint (id, seq, hash, mac)"
    " SELECT 1, %s, %s, %s WHERE EXISTS (SELECT 1 FROM receipts WHERE seq = %s AND hash = %s)"
    " ON CONFLICT (id) DO UPDATE SET seq = EXCLUDED.seq, hash = EXCLUDED.hash, mac = EXCLUDED.mac"
    " WHERE receipt_checkpoint.seq <= EXCLUDED.seq"
)


class _TableCheckpoint:
    """The checkpoint in the table ``receipt_checkpoint`` (there is no file beside a database)."""

    def __init__(self, store: PostgresUpkeep) -> None:
        self._store = store

    def load(self) -> tuple[int, str] | None:
        sql = "SELECT seq, hash, mac FROM receipt_checkpoint"
        row = self._store._read(lambda conn: conn.execute(sql).fetchone())
        if row is None:
            return None
        where = "in receipt_checkpoint"
        return check_checkpoint(int(row[0]), str(row[1]), row[2], self._store._key, where)

    def save(self, seq: int, head: str) -> str:
        try:
            self._store._save_checkpoint(seq, head)
        except StoreError as exc:  # the chain was checked: only the next check is weaker
            return str(exc)
        return ""


class PostgresUpkeep(SQLReads):
    """The PostgreSQL store's upkeep and chain, over its write transaction and its reads.

    :class:`~scarguard.stores.postgres.PostgresStore` is built on this and gives what it
    uses: the store's settings and connections, :meth:`_ready`, :meth:`transaction` and
    :meth:`_pipelined` (beside :meth:`_read` of the SQL reads).
    """

    receipts: bool
    _key: bytes | str | None
    _db: Connections

    @abc.abstractmethod
    def _ready(self) -> None:
        """Open the store if construction could not (or raise why it still cannot)."""

    @abc.abstractmethod
    def transaction(self, scope: Scope) -> AbstractContextManager[PostgresTransaction]:
        """Hold the tenant's write lock; roll back if the body raises."""

    @abc.abstractmethod
    def _pipelined(
        self, scope: Scope | None, *, chain_only: bool = False, what: str = "write failed"
    ) -> AbstractContextManager[Opened]:
        """Run the ``with`` block as one write transaction in pipeline mode, all or nothing."""

    def _write(
        self, scope: Scope | None, statements: Iterable[tuple[str, tuple[Any, ...]]]
    ) -> None:
        with self._pipelined(scope) as opened:
            for sql, params in statements:
                opened.link.queue(sql, params)

    def clear(self, scope: Scope) -> None:
        """Delete the tenant's failures, counters and constraints; the chain stays."""
        self._write(scope, SQL.clear((scope.workspace, scope.project)))

    def wipe(self) -> None:
        """Delete every tenant's records, the receipt chain and its checkpoint."""
        statements: list[tuple[str, tuple[Any, ...]]] = [
            (f"DELETE FROM {table}", ()) for table in (*TABLES, "receipts", "receipt_checkpoint")
        ]
        statements.append(("UPDATE receipt_head SET seq = 0, hash = %s", (GENESIS,)))
        self._write(None, statements)

    @property
    def checkpoints(self) -> Checkpoints:
        """The checkpoint of the verified head, in the table ``receipt_checkpoint``."""
        return _TableCheckpoint(self)

    @contextmanager
    def read_chain(self) -> Iterator[Chain]:
        """The chain and the head row, in one read-only snapshot (streamed in batches)."""
        self._ready()
        with self._db.snapshot() as conn:
            row = conn.execute("SELECT seq, hash FROM receipt_head").fetchone()
            head = None if row is None else (int(row[0]), str(row[1]))
            with conn.cursor(name="scarguard_chain") as cursor:
                cursor.itersize = _CHAIN_BATCH
                rows = cursor.execute(CHAIN_SQL)
                yield Chain((Receipt(*r) for r in rows), head, key=self._key)

    def purge_failures(self, scope: Scope, before: float) -> int:
        """Delete the tenant's failures recorded before ``before`` (one transaction)."""
        with self.transaction(scope) as tx:
            return tx.purge_failures(before)

    def compact_receipts(self, scope: Scope, before: float, at: float) -> int:
        """Delete receipts sealed before ``before`` behind a ``compact`` receipt.

        The chain's head row is locked first, so compactions (and appends) take turns.
        """
        if not self.receipts:
            return 0
        with self.transaction(scope) as tx:
            tx._conn.execute("SELECT seq FROM receipt_head FOR UPDATE")
            return tx.compact_receipts(before, at)

    def _save_checkpoint(self, seq: int, head: str) -> None:
        """Record ``(seq, head)`` unless a later one is saved or the chain changed meanwhile.

        Not a change of the memory: no generation bump, no notification.
        """
        mac = checkpoint_mac(seq, head, self._key)
        with self._pipelined(
            None, chain_only=True, what="cannot save the receipt checkpoint"
        ) as opened:
            opened.changed = False
            opened.link.queue(_SAVE_CHECKPOINT, (seq, head, mac, seq, head))

    def checkpoint(self) -> VerifyReport:
        """Verify the chain and record its head in ``receipt_checkpoint``; return the report.

        Keep ``report.head`` somewhere the database administrator cannot rewrite: that is
        what catches a chain and checkpoint rolled back together.
        """
        return verify_store(self)

    def import_(self, scope: Scope, records: Iterable[Mapping[str, Any]]) -> int:
        """Add exported records to the tenant in one transaction (all or nothing)."""
        with self.transaction(scope) as tx:
            return import_records(tx, records)
