"""The reads and batch writes shared by the transactions that hold a tenant in process."""

from __future__ import annotations

import attrs

from helpers.factories import constraint
from scarguard.model import Constraint
from scarguard.stores._held import HeldTransaction
from scarguard.stores.protocol import CounterValue


@attrs.define
class _Tenant:
    counters: dict[str, CounterValue] = attrs.field(factory=dict)
    constraints: dict[str, Constraint] = attrs.field(factory=dict)


class _Transaction(HeldTransaction):
    """The single writes, logged."""

    def __init__(self) -> None:
        self.held: _Tenant = _Tenant()
        self.writes: list[tuple[str, ...]] = []

    def bump(self, key: str, now: float, by: int = 1) -> int:
        self.writes.append(("bump", key))
        old = self.held.counters.get(key)
        self.held.counters[key] = CounterValue((old.count if old else 0) + by, now)
        return self.held.counters[key].count

    def reset(self, prefix: str) -> int:
        self.writes.append(("reset", prefix))
        doomed = [k for k in self.held.counters if k.startswith(prefix)]
        for key in doomed:
            del self.held.counters[key]
        return len(doomed)


def test_the_batch_forms_write_one_key_at_a_time_a_key_twice_twice() -> None:
    """bump_many bumps each key given (twice when given twice); reset_many adds up resets."""
    tx = _Transaction()
    tx.bump_many(["a", "b", "a"], 1.0, by=2)
    assert tx.writes == [("bump", "a"), ("bump", "b"), ("bump", "a")]
    assert (tx.count("a"), tx.count("b"), tx.count("missing")) == (4, 2, 0)
    assert tx.reset_many(["a", "b", "a"]) == 2
    assert tx.writes[3:] == [("reset", "a"), ("reset", "b"), ("reset", "a")]


def test_constraints_are_read_by_key_and_listed_oldest_first_then_by_key() -> None:
    """constraint(key) reads the held one; constraints() orders by creation time, then key."""
    tx = _Transaction()
    for key, created in [("c", 3.0), ("b", 1.0), ("a", 3.0)]:
        tx.held.constraints[key] = constraint(key, created_at=created)
    assert tx.constraint("a") == constraint("a", created_at=3.0)
    assert tx.constraint("missing") is None
    assert [c.key for c in tx.constraints()] == ["b", "a", "c"]
