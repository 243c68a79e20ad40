"""What the transactions of the stores that hold a tenant in process share.

The memory store changes its tenant in place (with an undo for each change), the JSON store
a copy it commits once the body returns: both hold the tenant's counters and constraints in
dictionaries, read them the same way, and write a batch one key at a time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from scarguard.model import Constraint
from scarguard.stores.protocol import CounterValue

__all__ = ["HeldTenant", "HeldTransaction", "HeldWrites"]


class HeldTenant(Protocol):
    """A tenant's counters and constraints, as a transaction holds them."""

    @property
    def counters(self) -> Mapping[str, CounterValue]:
        """The counters by key."""
        ...

    @property
    def constraints(self) -> Mapping[str, Constraint]:
        """The constraints by key."""
        ...


class HeldWrites(Protocol):
    """The single writes :class:`HeldTransaction` builds the batch forms on."""

    def bump(self, key: str, now: float, by: int = 1) -> int:
        """Add ``by`` to counter ``key`` (creating it at zero); return the new count."""
        ...

    def reset(self, prefix: str) -> int:
        """Delete every counter whose key starts with ``prefix``; return how many."""
        ...


class HeldTransaction:
    """The reads of a transaction over a tenant held in ``held``, and its batch writes.

    A transaction class mixes this in, sets :attr:`held` and implements :meth:`bump` and
    :meth:`reset` (the primitives of :class:`HeldWrites`); the batch forms apply them key by
    key, a key given twice twice.

    Attributes:
        held: The tenant's counters and constraints as this transaction sees them.
    """

    held: HeldTenant

    def bump_many(self: HeldWrites, keys: Sequence[str], now: float, by: int = 1) -> None:
        """Bump each counter in ``keys`` (see the store protocol's ``bump_many``)."""
        for key in keys:
            self.bump(key, now, by)

    def reset_many(self: HeldWrites, prefixes: Sequence[str]) -> int:
        """Reset the counters under each prefix; return how many were deleted."""
        return sum(self.reset(prefix) for prefix in prefixes)

    def count(self, key: str) -> int:
        """Return the counter ``key`` (zero when absent)."""
        value = self.held.counters.get(key)
        return value.count if value else 0

    def constraint(self, key: str) -> Constraint | None:
        """Return the constraint stored under ``key``, expired or not."""
        return self.held.constraints.get(key)

    def constraints(self) -> list[Constraint]:
        """Return every constraint of the tenant, oldest first (then by key)."""
        return sorted(self.held.constraints.values(), key=lambda c: (c.created_at, c.key))
