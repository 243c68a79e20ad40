"""A JSON-store transaction: every change is made on copies and kept until commit.

Nothing touches a file while the body of ``JSONStore.transaction`` runs, so an exception
there leaves the store exactly as it was; the store writes ``failures``, ``receipts`` and
the changed tenant only after the body returns.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any

from scarguard.model import Constraint, Failure
from scarguard.receipts import GENESIS, Appending, ChainWriter, Receipt
from scarguard.stores._held import HeldTransaction
from scarguard.stores.json._state import State, Tenant, TenantState
from scarguard.stores.protocol import CounterValue, failure_identity

__all__ = ["JSONTransaction"]


class JSONTransaction(Appending, HeldTransaction):
    """Changes of one JSON-store transaction, made on copies until the store commits them."""

    def __init__(
        self,
        state: State,
        tenant: Tenant,
        *,
        receipts: bool,
        key: bytes | str | None,
        begin: Hashable = None,
        stored_failures: Callable[[], list[Failure]] = list,
    ) -> None:
        self._chain_on = receipts
        self._chain_key = key
        self.stored_failures = stored_failures
        """The tenant's committed failures (read only when import asks for them)."""
        self.tenant = tenant
        self.held: TenantState = state.tenants.get(tenant, TenantState()).copy()
        self.next_id = state.next_id
        self.receipt_seq = state.receipt_seq
        self.receipt_head = state.receipt_head
        self.failures: list[Failure] = []
        self.receipts: list[Receipt] = []
        self.changed = False
        self._begin = begin
        self.committed: Hashable | None = None  # set by the store after its commit

    @property
    def begin_generation(self) -> Hashable:
        """The state file's stat token under the exclusive lock, after any reload."""
        return self._begin

    @property
    def commit_generation(self) -> Hashable | None:
        """The new state file's stat token (still under the lock); ``None`` until then."""
        return self.committed

    def add_failure(self, failure: Failure) -> Failure:
        stored = failure._with_id(self.next_id)
        self.next_id += 1
        self.failures.append(stored)
        self.changed = True
        return stored

    def bump(self, key: str, now: float, by: int = 1) -> int:
        old = self.held.counters.get(key)
        value = CounterValue((old.count if old else 0) + by, now)
        self.held.counters[key] = value
        self.changed = True
        return value.count

    def failure_identities(self, since: float, until: float) -> set[tuple[Any, ...]]:
        stored = (*self.stored_failures(), *self.failures)
        return {failure_identity(f) for f in stored if since <= f.at <= until}

    def reset(self, prefix: str) -> int:
        doomed = [k for k in self.held.counters if k.startswith(prefix)]
        for key in doomed:
            del self.held.counters[key]
        self.changed = self.changed or bool(doomed)
        return len(doomed)

    def put_constraint(self, constraint: Constraint) -> None:
        self.held.constraints.pop(constraint.key, None)
        self.held.constraints[constraint.key] = constraint
        self.changed = True

    def remove_constraints(self, keys: Iterable[str]) -> list[Constraint]:
        removed = [c for k in keys if (c := self.held.constraints.pop(k, None)) is not None]
        self.changed = self.changed or bool(removed)
        return removed

    def _chain_head(self) -> tuple[int, str]:
        return self.receipt_seq, self.receipt_head or GENESIS

    def _append_receipt(self, receipt: Receipt) -> None:
        self.receipts.append(receipt)
        self.receipt_seq, self.receipt_head = receipt.seq, receipt.hash
        self.changed = True


if TYPE_CHECKING:  # mypy: the transaction gives the chain its primitives
    _CHAIN_WRITER: type[ChainWriter] = JSONTransaction
