"""One write transaction of the PostgreSQL store (see ``postgres.py`` for the locking)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from scarguard.errors import StoreError
from scarguard.model import Constraint, Failure, Scope
from scarguard.receipts import seal
from scarguard.stores._postgres_conn import Connection
from scarguard.stores._postgres_schema import (
    BUMP,
    BUMP_MANY,
    INSERT_FAILURE,
    INSERT_RECEIPT,
    PUT_CONSTRAINT,
    SQL,
    TENANT,
)
from scarguard.stores._sql import CONSTRAINT_SQL, INSERT_COLUMNS, SQLTransaction, constraint_from

__all__ = ["PostgresTransaction"]


class PostgresTransaction(SQLTransaction):
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
    _conn: Connection

    def __init__(
        self,
        conn: Connection,
        scope: Scope,
        *,
        receipts: bool,
        key: bytes | str | None,
        error: Callable[[str], StoreError],
        begin: Hashable = None,
    ) -> None:
        self._receipts = receipts
        self._key = key
        self._error = error
        self._conn = conn
        self._tenant = (scope.workspace, scope.project)
        self.changed = False
        self._begin = begin
        self.committed: Hashable | None = None  # set by the store after its commit

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
        return attrs.evolve(failure, id=int(found[0]) if found else None)

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
        self._conn.execute(BUMP_MANY, (*self._tenant, now, names, amounts))
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

    def receipt(self, type: str, payload: Mapping[str, Any], at: float) -> None:
        if not self._receipts:
            return
        head = self._conn.execute("SELECT seq, hash FROM receipt_head FOR UPDATE").fetchone()
        if head is None:
            raise self._error("the receipt_head row is missing")
        sealed = seal(int(head[0]) + 1, str(head[1]), type, at, payload, self._key)
        values = tuple(sealed.to_row().values())
        self._conn.execute(INSERT_RECEIPT, (*values, sealed.seq, sealed.hash))
        self.changed = True
