"""An in-process store: for tests, notebooks and ephemeral agents. Nothing survives the process."""

from __future__ import annotations

import bisect
import functools
import itertools
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import attrs

from scarguard.model import Constraint, Failure, Scope
from scarguard.receipts import (
    COMPACT,
    GENESIS,
    Appending,
    Chain,
    ChainWriter,
    Checkpoints,
    Receipt,
)
from scarguard.stores._held import HeldTransaction
from scarguard.stores.protocol import CounterValue, failure_identity

__all__ = ["MemoryStore"]

_Tenant = tuple[str, str]


def _drop_last(items: list[Any]) -> None:
    items.pop()


@attrs.define
class _TenantData:
    failures: list[Failure] = attrs.field(factory=list)
    counters: dict[str, CounterValue] = attrs.field(factory=dict)
    keys: list[str] = attrs.field(factory=list)
    """The counter keys, sorted: prefix resets and reads are a bisected range, not a scan."""
    constraints: dict[str, Constraint] = attrs.field(factory=dict)

    def prefixed(self, prefix: str) -> list[str]:
        """Return the counter keys that start with ``prefix``."""
        start = bisect.bisect_left(self.keys, prefix)
        end = start
        while end < len(self.keys) and self.keys[end].startswith(prefix):
            end += 1
        return self.keys[start:end]

    def set_counter(self, key: str, value: CounterValue | None) -> None:
        """Set (or with ``None`` delete) a counter, keeping the key index sorted."""
        present = key in self.counters
        if value is None:
            if present:
                del self.counters[key]
                del self.keys[bisect.bisect_left(self.keys, key)]
            return
        if not present:
            bisect.insort(self.keys, key)
        self.counters[key] = value


class _MemoryTransaction(Appending, HeldTransaction):
    """Changes applied in place, each with its undo, so a rollback costs what the body did."""

    def __init__(self, store: MemoryStore, data: _TenantData) -> None:
        self._store = store
        self.held: _TenantData = data
        self.changed = False
        self._chain_on = store.receipts
        self._chain_key = store._key
        self._undo: list[Callable[[], None]] = []
        self._begin: Hashable = store._generation
        self._commit: Hashable | None = None

    @property
    def begin_generation(self) -> Hashable:
        """The store's counter when the transaction took the lock."""
        return self._begin

    @property
    def commit_generation(self) -> Hashable | None:
        """The counter after this commit (``None`` while open or after a rollback)."""
        return self._commit

    def rollback(self) -> None:
        """Undo every change of this transaction, newest first."""
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()

    def add_failure(self, failure: Failure) -> Failure:
        stored = failure._with_id(self._store._next_id)
        self._store._next_id += 1
        self.held.failures.append(stored)
        self._undo.append(lambda: _drop_last(self.held.failures))
        self.changed = True
        return stored

    def bump(self, key: str, now: float, by: int = 1) -> int:
        data = self.held
        old = data.counters.get(key)
        value = CounterValue((old.count if old else 0) + by, now)
        data.set_counter(key, value)
        self._undo.append(functools.partial(data.set_counter, key, old))
        self.changed = True
        return value.count

    def failure_identities(self, since: float, until: float) -> set[tuple[Any, ...]]:
        return {failure_identity(f) for f in self.held.failures if since <= f.at <= until}

    def reset(self, prefix: str) -> int:
        data = self.held
        doomed = data.prefixed(prefix)
        for key in doomed:
            old = data.counters[key]
            data.set_counter(key, None)
            self._undo.append(functools.partial(data.set_counter, key, old))
        self.changed = self.changed or bool(doomed)
        return len(doomed)

    def put_constraint(self, constraint: Constraint) -> None:
        rules = self.held.constraints
        old = rules.pop(constraint.key, None)
        rules[constraint.key] = constraint
        self._undo.append(functools.partial(self._restore, constraint.key, old))
        self.changed = True

    def _restore(self, key: str, old: Constraint | None) -> None:
        self.held.constraints.pop(key, None)
        if old is not None:
            self.held.constraints[key] = old

    def remove_constraints(self, keys: Iterable[str]) -> list[Constraint]:
        removed = [c for k in keys if (c := self.held.constraints.pop(k, None)) is not None]
        for constraint in removed:
            self._undo.append(functools.partial(self._restore, constraint.key, constraint))
        self.changed = self.changed or bool(removed)
        return removed

    def _chain_head(self) -> tuple[int, str]:
        chain = self._store._chain
        return (chain[-1].seq, chain[-1].hash) if chain else (0, GENESIS)

    def _append_receipt(self, receipt: Receipt) -> None:
        chain = self._store._chain
        chain.append(receipt)
        self._undo.append(lambda: _drop_last(chain))
        self.changed = True


if TYPE_CHECKING:  # mypy: the transaction gives the chain its primitives
    _CHAIN_WRITER: type[ChainWriter] = _MemoryTransaction


class MemoryStore:
    """Keep everything in process memory, behind one lock.

    Args:
        receipts: Whether to keep a receipt chain (off by default: nothing outlives the
            process to be tampered with).
        receipt_key: HMAC key for the chain (default: ``SCARGUARD_RECEIPT_KEY``).
    """

    def __init__(self, *, receipts: bool = False, receipt_key: bytes | str | None = None) -> None:
        self.receipts = receipts
        self._key = receipt_key
        self._lock = threading.RLock()
        self._tenants: dict[_Tenant, _TenantData] = {}
        self._chain: list[Receipt] = []
        # A plain counter rather than itertools.count: a rolled-back transaction gives its
        # ids back, as SQLite's AUTOINCREMENT and the JSON store's locked counter do, so
        # identical histories get identical ids in every store.
        self._next_id = 1
        self._generation = 0

    @property
    def location(self) -> str:
        """Always ``:memory:``."""
        return ":memory:"

    def _tenant(self, scope: Scope) -> _TenantData:
        key = (scope.workspace, scope.project)
        data = self._tenants.get(key)
        if data is None:  # (not setdefault: it would build an empty tenant every time)
            data = self._tenants[key] = _TenantData()
        return data

    @contextmanager
    def transaction(self, scope: Scope) -> Iterator[_MemoryTransaction]:
        """Hold the store's lock; roll back every change if the body raises."""
        with self._lock:
            next_id = self._next_id
            tx = _MemoryTransaction(self, self._tenant(scope))
            try:
                yield tx
            except BaseException:
                tx.rollback()
                self._next_id = next_id
                raise
            if tx.changed:
                self._generation += 1
            tx._commit = self._generation

    def generation(self) -> Hashable:
        """Return a counter bumped by every committed change."""
        return self._generation

    def peek_generation(self) -> Hashable | None:
        """Return :meth:`generation`: it is held in memory (what an event loop asks)."""
        return self._generation

    def load_constraints(self, scope: Scope) -> list[Constraint]:
        """Return the tenant's constraints, oldest first."""
        with self._lock:
            return _MemoryTransaction(self, self._tenant(scope)).constraints()

    def failures(
        self,
        scope: Scope,
        *,
        limit: int | None = None,
        since: float | None = None,
        tool: str | None = None,
        signature: str | None = None,
    ) -> list[Failure]:
        """Return the tenant's failures, newest first."""
        with self._lock:
            matching = (
                f
                for f in reversed(self._tenant(scope).failures)
                if (since is None or f.at >= since)
                and (tool is None or f.tool == tool)
                and (signature is None or f.signature == signature)
            )
            return list(itertools.islice(matching, limit))

    def counters(self, scope: Scope, prefix: str = "") -> dict[str, CounterValue]:
        """Return the tenant's counters under ``prefix``."""
        with self._lock:
            data = self._tenant(scope)
            return {k: data.counters[k] for k in data.prefixed(prefix)}

    def clear(self, scope: Scope) -> None:
        """Forget the tenant's records; other tenants and the chain are untouched."""
        with self._lock:
            self._tenants.pop((scope.workspace, scope.project), None)
            self._generation += 1

    def wipe(self) -> None:
        """Forget every tenant and the receipt chain."""
        with self._lock:
            self._tenants.clear()
            self._chain.clear()
            self._generation += 1

    def purge_failures(self, scope: Scope, before: float) -> int:
        """Delete the tenant's failures recorded before ``before``."""
        with self._lock:
            data = self._tenants.get((scope.workspace, scope.project))
            if data is None:
                return 0
            kept = [f for f in data.failures if f.at >= before]
            deleted = len(data.failures) - len(kept)
            if deleted:
                data.failures[:] = kept
                self._generation += 1
            return deleted

    def compact_receipts(self, scope: Scope, before: float, at: float) -> int:
        """Delete receipts sealed before ``before`` but the newest; seal a ``compact`` one."""
        with self._lock:
            chain = self._chain
            limit = round(before * 1000)
            cut = next((i for i, r in enumerate(chain) if r.at_ms >= limit), len(chain))
            cut = min(cut, len(chain) - 1)
            if not self.receipts or cut <= 0:
                return 0
            first = chain[cut]
            del chain[:cut]
            payload = {"first_seq": first.seq, "first_prev": first.prev, "deleted": cut}
            with self.transaction(scope) as tx:
                tx.receipt(COMPACT, payload, at)
            return cut

    @property
    def checkpoints(self) -> Checkpoints | None:
        """None: the chain is kept in memory, with nothing beside it to check it against."""
        return None

    @contextmanager
    def read_chain(self) -> Iterator[Chain]:
        """The chain, copied under the store's lock."""
        with self._lock:
            yield Chain(list(self._chain), key=self._key)

    def export(self, scope: Scope) -> Iterator[dict[str, Any]]:
        """Yield the tenant's records in the shared export format."""
        from scarguard.stores.records import export_records

        with self._lock:
            data = self._tenant(scope)
            records = list(export_records(data.failures, data.counters, data.constraints.values()))
        yield from records

    def import_(self, scope: Scope, records: Iterable[Mapping[str, Any]]) -> int:
        """Add exported records to the tenant."""
        from scarguard.stores.records import import_records

        with self.transaction(scope) as tx:
            return import_records(tx, records)

    def close(self) -> None:
        """Nothing to release."""
