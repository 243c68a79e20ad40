"""What the SQLite and PostgreSQL stores share: columns, row converters, query text, reads.

The two stores keep the same tables and ask the same questions of them; their SQL differs
mainly in the placeholder (``?`` for sqlite3, ``%s`` for psycopg). :class:`Dialect` builds
that shared text once per placeholder, :class:`SQLTransaction` holds the transaction methods
whose code is the same in both, and :class:`SQLReads` the reads a store serves outside a
transaction. What really differs stays in each store: how a write transaction takes its
locks (``BEGIN IMMEDIATE`` vs advisory locks), how the generation is tracked
(``data_version`` vs NOTIFY), the statements that write (``INSERT OR REPLACE`` vs
``ON CONFLICT``, ``lastrowid`` vs ``RETURNING``) and how driver errors become
:class:`~scarguard.errors.StoreError`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

import attrs

from scarguard.model import Constraint, Failure, Scope
from scarguard.receipts import COMPACT
from scarguard.stores._files import prefix_end
from scarguard.stores.protocol import CounterValue
from scarguard.stores.records import export_records

__all__ = [
    "CHAIN_SQL",
    "CONSTRAINT_COLUMNS",
    "CONSTRAINT_SQL",
    "FAILURE_COLUMNS",
    "FAILURE_SQL",
    "INSERT_COLUMNS",
    "RESET_MANY_PREFIXES",
    "TABLES",
    "Connection",
    "Dialect",
    "SQLReads",
    "SQLTransaction",
    "constraint_from",
    "failure_from",
    "load_constraints",
]

RESET_MANY_PREFIXES = 100
"""Prefixes per ``DELETE`` of ``reset_many`` (200 parameters, under every driver's limit)."""

_T = TypeVar("_T")

FAILURE_COLUMNS = tuple(f.name for f in attrs.fields(Failure))
"""The columns of ``Failure.to_row()``, in a fixed order (``id`` included)."""
CONSTRAINT_COLUMNS = tuple(f.name for f in attrs.fields(Constraint))
"""The columns of ``Constraint.to_row()``, in a fixed order."""
INSERT_COLUMNS = tuple(c for c in FAILURE_COLUMNS if c != "id")
"""The columns a new failure is inserted with (the store gives the ``id``)."""
FAILURE_SQL = ", ".join(FAILURE_COLUMNS)
CONSTRAINT_SQL = ", ".join(CONSTRAINT_COLUMNS)
TABLES = ("failures", "counters", "constraints")
"""A tenant's tables (the receipt chain belongs to no tenant)."""
CHAIN_SQL = "SELECT seq, prev, type, at_ms, payload, hash FROM receipts ORDER BY seq"
"""The whole receipt chain, oldest first, as ``Receipt`` fields."""


def failure_from(row: Sequence[Any]) -> Failure:
    """Build a failure from a row selected as ``FAILURE_SQL``."""
    return Failure.from_row(dict(zip(FAILURE_COLUMNS, row, strict=True)))


def constraint_from(row: Sequence[Any]) -> Constraint:
    """Build a constraint from a row selected as ``CONSTRAINT_SQL``."""
    return Constraint.from_row(dict(zip(CONSTRAINT_COLUMNS, row, strict=True)))


class Cursor(Protocol):
    """What both drivers' cursors offer that the shared code uses."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """What both drivers' connections offer that the shared code uses."""

    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Cursor: ...


class Dialect:
    """The shared query text for one placeholder style, built once.

    Args:
        mark: The driver's placeholder: ``?`` (sqlite3) or ``%s`` (psycopg).
    """

    def __init__(self, mark: str) -> None:
        self.mark = mark
        self.tenant = tenant = f"workspace = {mark} AND project = {mark}"
        """The condition selecting one tenant: parameters ``(workspace, project)``."""
        self.count = f"SELECT count FROM counters WHERE {tenant} AND key = {mark}"
        self.constraint = (
            f"SELECT {CONSTRAINT_SQL} FROM constraints WHERE {tenant} AND key = {mark}"
        )
        self.constraints = (
            f"SELECT {CONSTRAINT_SQL} FROM constraints WHERE {tenant} ORDER BY created_at, key"
        )
        self.failures = f"SELECT {FAILURE_SQL} FROM failures WHERE {tenant}"
        self.all_failures = f"{self.failures} ORDER BY id"
        self.failure_identities = (
            f"SELECT at, session, tool, fingerprint, signature FROM failures WHERE {tenant}"
            f" AND at >= {mark} AND at <= {mark}"
        )  # the columns of protocol.failure_identity, in its order
        self.counters = f"SELECT key, count, last_at FROM counters WHERE {tenant}"
        self._filters = (f"at >= {mark}", f"tool = {mark}", f"signature = {mark}")
        self._from = f" AND key >= {mark}"
        self._between = f" AND key >= {mark} AND key < {mark}"

    def key_range(self, prefix: str) -> tuple[str, list[str]]:
        """Return the SQL and parameters selecting keys that start with ``prefix``."""
        end = prefix_end(prefix)
        if end is None:
            return self._from, [prefix]
        return self._between, [prefix, end]

    def select_failures(
        self,
        tenant: tuple[str, str],
        limit: int | None,
        since: float | None,
        tool: str | None,
        signature: str | None,
    ) -> tuple[str, list[Any]]:
        """Return the query of ``failures()``: newest first, filtered, limited.

        Raises:
            ValueError: ``limit`` is negative.
        """
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be None or >= 0, not {limit}")
        sql = self.failures
        params: list[Any] = [*tenant]
        for condition, value in zip(self._filters, (since, tool, signature), strict=True):
            if value is not None:
                sql += f" AND {condition}"
                params.append(value)
        sql += " ORDER BY id DESC"
        if limit is not None:
            sql += f" LIMIT {self.mark}"
            params.append(limit)
        return sql, params

    def select_counters(self, tenant: tuple[str, str], prefix: str) -> tuple[str, list[Any]]:
        """Return the query of ``counters()``: keys under ``prefix`` (a range, not ``LIKE``)."""
        where, params = self.key_range(prefix)
        return f"{self.counters}{where} ORDER BY key", [*tenant, *params]

    def clear(self, tenant: tuple[str, str]) -> list[tuple[str, tuple[Any, ...]]]:
        """Return the statements deleting the tenant's failures, counters and constraints."""
        return [(f"DELETE FROM {table} WHERE {self.tenant}", tenant) for table in TABLES]


def load_constraints(conn: Connection, sql: Dialect, tenant: tuple[str, str]) -> list[Constraint]:
    """Return the tenant's constraints, oldest first, then by key."""
    return [constraint_from(r) for r in conn.execute(sql.constraints, tenant)]


class SQLTransaction:
    """The write-transaction methods whose code both SQL stores share.

    A subclass sets :attr:`_sql` and :attr:`_put_constraint`, and ``_conn`` (inside its
    ``BEGIN``), ``_tenant`` and ``changed`` when it is built.
    """

    _sql: ClassVar[Dialect]
    _put_constraint: ClassVar[str]
    _conn: Connection
    _tenant: tuple[str, str]
    changed: bool

    if TYPE_CHECKING:

        def receipt(self, type: str, payload: Mapping[str, Any], at: float) -> None:
            """Append a receipt (each store's own statement)."""

    def count(self, key: str) -> int:
        row = self._conn.execute(self._sql.count, (*self._tenant, key)).fetchone()
        return int(row[0]) if row else 0

    def failure_identities(self, since: float, until: float) -> set[tuple[Any, ...]]:
        sql = self._sql.failure_identities
        return {tuple(r) for r in self._conn.execute(sql, (*self._tenant, since, until))}

    def reset(self, prefix: str) -> int:
        where, params = self._sql.key_range(prefix)
        sql = f"DELETE FROM counters WHERE {self._sql.tenant}{where}"
        deleted = self._conn.execute(sql, (*self._tenant, *params)).rowcount
        self.changed = self.changed or deleted > 0
        return deleted

    def reset_many(self, prefixes: Sequence[str]) -> int:
        deleted = 0
        for start in range(0, len(prefixes), RESET_MANY_PREFIXES):
            ranges = []
            params: list[Any] = [*self._tenant]
            for prefix in prefixes[start : start + RESET_MANY_PREFIXES]:
                where, bounds = self._sql.key_range(prefix)
                ranges.append(f"({where.removeprefix(' AND ')})")
                params.extend(bounds)
            sql = f"DELETE FROM counters WHERE {self._sql.tenant} AND ({' OR '.join(ranges)})"
            deleted += self._conn.execute(sql, params).rowcount
        self.changed = self.changed or deleted > 0
        return deleted

    def constraint(self, key: str) -> Constraint | None:
        row = self._conn.execute(self._sql.constraint, (*self._tenant, key)).fetchone()
        return constraint_from(row) if row else None

    def put_constraint(self, constraint: Constraint) -> None:
        row = constraint.to_row()
        self._conn.execute(self._put_constraint, (*self._tenant, *row.values()))
        self.changed = True

    def constraints(self) -> list[Constraint]:
        return load_constraints(self._conn, self._sql, self._tenant)

    def purge_failures(self, before: float) -> int:
        """Delete the tenant's failures recorded before ``before``; return how many."""
        sql = f"DELETE FROM failures WHERE {self._sql.tenant} AND at < {self._sql.mark}"
        deleted = int(self._conn.execute(sql, (*self._tenant, before)).rowcount)
        self.changed = self.changed or deleted > 0
        return deleted

    def compact_receipts(self, before: float, at: float) -> int:
        """Delete receipts sealed before ``before`` but the newest; seal a ``compact`` one."""
        mark = self._sql.mark
        head = self._conn.execute("SELECT max(seq) FROM receipts").fetchone()
        if not head or head[0] is None:
            return 0
        row = self._conn.execute(
            f"SELECT min(seq) FROM receipts WHERE at_ms >= {mark}", (round(before * 1000),)
        ).fetchone()
        first = min(int(row[0]) if row and row[0] is not None else int(head[0]), int(head[0]))
        found = self._conn.execute(
            f"SELECT prev FROM receipts WHERE seq = {mark}", (first,)
        ).fetchone()
        deleted = int(
            self._conn.execute(f"DELETE FROM receipts WHERE seq < {mark}", (first,)).rowcount
        )
        if deleted:
            payload = {"first_seq": first, "first_prev": str(found[0]), "deleted": deleted}
            self.receipt(COMPACT, payload, at)
        return deleted


class SQLReads(abc.ABC):
    """The reads both SQL stores serve outside a write transaction.

    A subclass sets :attr:`_sql` and implements :meth:`_read` with its driver's snapshot and
    error mapping.
    """

    _sql: ClassVar[Dialect]

    @abc.abstractmethod
    def _read(self, read: Callable[[Connection], _T], *, snapshot: bool = False) -> _T:
        """Run ``read`` on this thread's connection (in one read-only snapshot if asked)."""

    def load_constraints(self, scope: Scope) -> list[Constraint]:
        """Return the tenant's constraints, oldest first."""
        tenant = (scope.workspace, scope.project)
        return self._read(lambda conn: load_constraints(conn, self._sql, tenant))

    def failures(
        self,
        scope: Scope,
        *,
        limit: int | None = None,
        since: float | None = None,
        tool: str | None = None,
        signature: str | None = None,
    ) -> list[Failure]:
        """Return the tenant's failures, newest first (each filter served by an index)."""
        tenant = (scope.workspace, scope.project)
        sql, params = self._sql.select_failures(tenant, limit, since, tool, signature)
        return self._read(lambda conn: [failure_from(r) for r in conn.execute(sql, params)])

    def counters(self, scope: Scope, prefix: str = "") -> dict[str, CounterValue]:
        """Return the tenant's counters under ``prefix`` (a key range, not ``LIKE``)."""
        sql, params = self._sql.select_counters((scope.workspace, scope.project), prefix)
        return self._read(
            lambda conn: {k: CounterValue(c, t) for k, c, t in conn.execute(sql, params)}
        )

    def export(self, scope: Scope) -> Iterator[dict[str, Any]]:
        """Yield the tenant's records in the shared export format (one consistent snapshot)."""
        tenant = (scope.workspace, scope.project)
        queries = self._sql

        def read(conn: Connection) -> list[dict[str, Any]]:
            failures = [failure_from(r) for r in conn.execute(queries.all_failures, tenant)]
            counters = {k: CounterValue(c, t) for k, c, t in conn.execute(queries.counters, tenant)}
            constraints = load_constraints(conn, queries, tenant)
            return list(export_records(failures, counters, constraints))

        yield from self._read(read, snapshot=True)
