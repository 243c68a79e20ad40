"""The storage contract every backend implements.

The engine does all its learning inside :meth:`Store.transaction`: one atomic unit per
record (``BEGIN IMMEDIATE`` in SQLite, a file lock in JSON, a mutex in memory), so that
counters read, constraints written and receipts appended never interleave with another
writer. Reads outside a transaction serve ``check()`` and reporting.

Counters are materialised: ``patterns()`` and the learning rules read them by key instead of
counting history, so the cost of a call does not grow with the number of stored failures.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

import attrs

from scarguard.model import Constraint, Failure, Scope
from scarguard.receipts import ChainReader

__all__ = [
    "VERIFY_COVERS",
    "VERIFY_NOT_COVERED",
    "CounterValue",
    "Store",
    "Transaction",
    "failure_identity",
]


def failure_identity(failure: Failure) -> tuple[Any, ...]:
    """Return what tells one stored failure from another, whatever its store-given id."""
    return (failure.at, failure.session, failure.tool, failure.fingerprint, failure.signature)


@attrs.frozen
class CounterValue:
    """A materialised counter.

    Attributes:
        count: The current count.
        last_at: When it was last bumped.
    """

    count: int
    last_at: float


VERIFY_COVERS = (
    "the receipt chain: every failure, success batch and constraint learned, lifted,"
    " evicted or forgotten, as recorded, with its order, end and checkpoint"
)
"""What ``verify()`` checks."""
VERIFY_NOT_COVERED = (
    "the current constraint and counter tables: a constraint deleted or edited in the"
    " store directly (not through scarguard) is not detected"
)
"""What ``verify()`` does not check."""


@runtime_checkable
class Transaction(Protocol):
    """One atomic unit of work on one tenant (workspace and project).

    Besides the writes, a transaction tells the generation tokens around it, so that the
    engine can apply what it wrote to a cached constraint index instead of reloading it:
    when the token it loaded the index under equals :attr:`begin_generation`, nobody
    committed in between, and after the block its index plus its own delta is current as
    of :attr:`commit_generation`.
    """

    @property
    def begin_generation(self) -> Hashable:
        """The token :meth:`Store.generation` gave when this transaction took its write lock.

        Taken before any of this transaction's writes and under its lock, so a writer that
        committed before the lock was taken is reflected, and none of the same tenant (or
        file) can commit between then and this transaction's commit. A store may report a
        token that :meth:`Store.generation` never returned (never one that hides a commit):
        comparing it to a cached token then fails, and the engine reloads.
        """
        ...

    @property
    def commit_generation(self) -> Hashable | None:
        """The token :meth:`Store.generation` returns right after this transaction committed.

        Valid while no other writer has committed since (any later commit makes
        :meth:`Store.generation` differ from it). ``None`` while the transaction is open,
        after a rollback, or when the store cannot tell. A transaction that changed nothing
        gives :attr:`begin_generation`.
        """
        ...

    def add_failure(self, failure: Failure) -> Failure:
        """Store ``failure``; return it with the id the store gave it."""
        ...

    def bump(self, key: str, now: float, by: int = 1) -> int:
        """Add ``by`` to counter ``key`` (creating it at zero) and return the new count."""
        ...

    def bump_many(self, keys: Sequence[str], now: float, by: int = 1) -> None:
        """Add ``by`` to each counter in ``keys``, in as few round trips as the store can.

        The batch form of :meth:`bump`: recording one failure bumps several counters, and
        this costs one statement instead of one per key. A key given twice is bumped twice.

        Args:
            keys: The counters to bump; each is created at zero when absent. An empty
                sequence changes nothing (and does not count as a change of the store).
            now: The time stored as each counter's ``last_at``.
            by: How much to add to each counter per occurrence of its key (may be zero or
                negative, as in :meth:`bump`).
        """
        ...

    def count(self, key: str) -> int:
        """Return the counter ``key`` (zero when absent)."""
        ...

    def reset(self, prefix: str) -> int:
        """Delete every counter whose key starts with ``prefix``; return how many."""
        ...

    def reset_many(self, prefixes: Sequence[str]) -> int:
        """Delete every counter whose key starts with any of ``prefixes``; return how many.

        The batch form of :meth:`reset`, in as few statements as the store can (a batched
        success write resets the counters of every call in the batch). An empty sequence
        changes nothing.
        """
        ...

    def constraint(self, key: str) -> Constraint | None:
        """Return the constraint stored under ``key``, expired or not."""
        ...

    def put_constraint(self, constraint: Constraint) -> None:
        """Insert or replace the constraint with the same key."""
        ...

    def remove_constraints(self, keys: Iterable[str]) -> list[Constraint]:
        """Delete the constraints with these keys; return the ones that existed."""
        ...

    def constraints(self) -> list[Constraint]:
        """Return every stored constraint of the tenant, oldest first."""
        ...

    def receipt(self, type: str, payload: Mapping[str, Any], at: float) -> None:
        """Append a receipt to the chain in this transaction (no-op when receipts are off)."""
        ...


@runtime_checkable
class Store(ChainReader, Protocol):
    """A backend for :class:`~scarguard.FailureMemory`.

    Storage only: besides its records, a store gives the receipt chain the primitives of
    :class:`~scarguard.receipts.ChainReader` (``receipts``, ``checkpoints``,
    ``read_chain()``), over which :func:`scarguard.receipts.verify_store` verifies it.

    Implementations: :class:`~scarguard.stores.MemoryStore`, ``SQLiteStore``, ``JSONStore``
    and ``PostgresStore``. All pass ``tests/test_store_contract.py``.
    """

    @property
    def location(self) -> str:
        """A human-readable location (a path, ``:memory:``, a URL without password)."""
        ...

    def transaction(self, scope: Scope) -> AbstractContextManager[Transaction]:
        """Open one atomic write transaction on ``scope``'s tenant."""
        ...

    def generation(self) -> Hashable:
        """Return a cheap token that changes whenever any writer commits."""
        ...

    def load_constraints(self, scope: Scope) -> list[Constraint]:
        """Return every stored constraint of the tenant, oldest first."""
        ...

    def failures(
        self,
        scope: Scope,
        *,
        limit: int | None = None,
        since: float | None = None,
        tool: str | None = None,
        signature: str | None = None,
    ) -> list[Failure]:
        """Return the tenant's failures, newest first, filtered as asked."""
        ...

    def counters(self, scope: Scope, prefix: str = "") -> dict[str, CounterValue]:
        """Return the tenant's counters whose keys start with ``prefix``."""
        ...

    def clear(self, scope: Scope) -> None:
        """Delete the tenant's failures, counters and constraints (and nothing else)."""
        ...

    def wipe(self) -> None:
        """Delete everything of every tenant. Explicit and separate from :meth:`clear`."""
        ...

    def purge_failures(self, scope: Scope, before: float) -> int:
        """Delete the tenant's failures recorded before ``before``; return how many.

        Counters and constraints stay: they are the learned evidence, one row per key.
        """
        ...

    def compact_receipts(self, scope: Scope, before: float, at: float) -> int:
        """Delete the receipts sealed before ``before``, keeping the chain verifiable.

        The newest receipt always stays; when any is deleted, a ``compact`` receipt sealed
        at ``at`` names the first one kept and the hash it links to (see
        :mod:`scarguard.receipts`), in one transaction on ``scope``. Returns how many were
        deleted (0 when receipts are off).
        """
        ...

    def export(self, scope: Scope) -> Iterator[dict[str, Any]]:
        """Yield the tenant's records (failures, counters, constraints) as JSON-safe dicts."""
        ...

    def import_(self, scope: Scope, records: Iterable[Mapping[str, Any]]) -> int:
        """Add records produced by :meth:`export` to the tenant; return how many."""
        ...

    def close(self) -> None:
        """Release connections and file handles. The store may not be used afterwards."""
        ...
