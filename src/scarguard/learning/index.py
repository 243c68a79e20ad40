"""The constraint index: active constraints arranged for O(1) lookups per call.

``check()`` runs on every tool call, so the rules it consults are indexed by what a call can
be looked up by: fingerprint, target, (tool, target), action class and tool. The index is
rebuilt from the store only when the store's generation token changes; expiry is checked at
lookup, so a rule lapses on time without a rebuild.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from scarguard.canonical import canonical_json
from scarguard.model import Call, Constraint, ConstraintKind, Failure, Level, Violation

if TYPE_CHECKING:
    from scarguard.adapters.protocol import Adapter
    from scarguard.stores.protocol import Transaction

__all__ = ["FAILED_TOOL", "ConstraintIndex", "RecordingTransaction", "keep_token"]

FAILED_TOOL = "ft:"
"""The prefix of the per-tool failure totals (see :mod:`scarguard.learning.keys`)."""


_TOKENS_KEPT = 16
"""How many change tokens an index is remembered current under (one per checking thread)."""


def keep_token(tokens: dict[Hashable, None], token: Hashable) -> None:
    """Remember that the index is current under ``token`` (a store's change token).

    A store's token may be one of the calling thread's connection (SQLite's
    ``data_version`` is), so threads that check in turn read different tokens for one
    state: each thread's is kept, the oldest dropped past :data:`_TOKENS_KEPT`. A kept token
    read again means nothing changed since it was kept; after a change no connection reads
    an old token again, so an old one never matches by mistake.
    """
    tokens[token] = None
    if len(tokens) > _TOKENS_KEPT:
        del tokens[next(iter(tokens))]


@attrs.define
class ConstraintIndex:
    """Active constraints indexed for O(1) lookups per call (rebuilt when the store changes)."""

    exact: dict[str, list[Constraint]] = attrs.field(factory=lambda: defaultdict(list))
    exact_by_class: dict[str, list[Constraint]] = attrs.field(factory=lambda: defaultdict(list))
    exact_by_target: dict[str, list[Constraint]] = attrs.field(factory=lambda: defaultdict(list))
    shell_exact: list[Constraint] = attrs.field(factory=list)
    selected_runs: dict[str, list[Constraint]] = attrs.field(factory=lambda: defaultdict(list))
    """The shell bans that depend on a selection (test runs of some tests), by tool."""
    missing: dict[str, Constraint] = attrs.field(factory=dict)
    tool_target: dict[tuple[str, str], list[Constraint]] = attrs.field(
        factory=lambda: defaultdict(list)
    )
    target_rules: dict[str, list[Constraint]] = attrs.field(factory=lambda: defaultdict(list))
    strategy: dict[str, list[Constraint]] = attrs.field(factory=lambda: defaultdict(list))
    by_tool: dict[str, list[Constraint]] = attrs.field(factory=lambda: defaultdict(list))
    radius: Constraint | None = None
    by_key: dict[str, Constraint] = attrs.field(factory=dict)
    failed_tools: set[str] = attrs.field(factory=set)
    """Tools with a failure counter in the store (``ft:<tool>``): never on the fast path."""
    lapsed: set[str] = attrs.field(factory=set)
    """Keys the store held, inactive, when the index was built (left out of it)."""
    _per_tool: Counter[str] = attrs.field(factory=Counter)
    _targeted: int = 0
    """How many indexed constraints name a target (they can apply to any tool's call)."""

    @classmethod
    def build(
        cls, constraints: Iterable[Constraint], now: float, failed_tools: Iterable[str] = ()
    ) -> ConstraintIndex:
        """Index the constraints that are active at ``now``; note the tools that failed."""
        index = cls()
        for c in constraints:
            if c.active(now):
                index.add(c)
            else:
                index.lapsed.add(c.key)
        index.failed_tools.update(failed_tools)
        return index

    def quiet(self, tool: str, action_class: str | None, may_target: bool) -> bool:
        """Return whether no constraint can apply to a call of ``tool``, nor be lifted by it.

        True for a tool that never failed and has no constraint of its own, in an action
        class with no strategy ban, when the call has no targets or no constraint names a
        target. Such a call is allowed without being described (no fingerprint), and its
        success needs no counter reset of its own (a tool that never failed has none). A
        mutating success can still lift other calls' bans: the caller checks that apart.
        """
        if self.concerns(tool):
            return False
        if action_class is not None and self.strategy.get(action_class):
            return False
        return not (may_target and (self._targeted or self.radius is not None))

    def concerns(self, tool: str) -> bool:
        """Return whether ``tool`` failed before or has a constraint of its own."""
        return tool in self.failed_tools or tool in self._per_tool

    @property
    def all(self) -> list[Constraint]:
        """Every indexed constraint, in the order it was added (oldest first when built)."""
        return list(self.by_key.values())

    def _lists(self, c: Constraint) -> list[list[Constraint]]:
        """Return the buckets ``c`` belongs in."""
        if c.kind is ConstraintKind.EXACT_CALL and c.fingerprint:
            buckets = [self.exact[c.fingerprint], self.exact_by_class[c.action_class or "-"]]
            if c.target:
                buckets.append(self.exact_by_target[c.target])
            if c.params.shell or c.params.words:
                buckets.append(self.shell_exact)
                if c.params.depends and c.tool:
                    buckets.append(self.selected_runs[c.tool])
            return buckets
        if c.kind is ConstraintKind.TOOL_TARGET and c.tool and c.target:
            return [self.tool_target[(c.tool, c.target)], self.target_rules[c.target]]
        if c.kind is ConstraintKind.BANNED_STRATEGY and c.action_class:
            return [self.strategy[c.action_class]]
        if c.kind in (ConstraintKind.PARAMETER_BAN, ConstraintKind.DOMINANCE_BAN) and c.tool:
            return [self.by_tool[c.tool]]
        return []

    def add(self, c: Constraint) -> None:
        """Index ``c``, replacing an indexed constraint with the same key."""
        if c.key in self.by_key:
            self.remove(c.key)
        self.lapsed.discard(c.key)
        self.by_key[c.key] = c
        self._count(c, 1)
        for bucket in self._lists(c):
            bucket.append(c)
        if c.kind is ConstraintKind.MISSING_TARGET and c.target:
            self.missing[c.target] = c
        elif c.kind is ConstraintKind.RADIUS_LIMIT:
            self.radius = c

    def remove(self, key: str) -> None:
        """Drop the constraint stored under ``key``, if indexed."""
        self.remove_many((key,))

    def remove_many(self, keys: Iterable[str]) -> None:
        """Drop the constraints stored under ``keys``, rebuilding each bucket they were in once.

        An eviction past the cap drops a tenth of the constraints at once, most from the
        same few buckets: one pass per bucket, not one per constraint.
        """
        dropped: dict[int, tuple[list[Constraint], set[str]]] = {}
        for key in keys:
            self.lapsed.discard(key)
            c = self.by_key.pop(key, None)
            if c is None:
                continue
            self._count(c, -1)
            for bucket in self._lists(c):
                dropped.setdefault(id(bucket), (bucket, set()))[1].add(key)
            if c.kind is ConstraintKind.MISSING_TARGET and c.target:
                self.missing.pop(c.target, None)
            elif (
                c.kind is ConstraintKind.RADIUS_LIMIT
                and self.radius is not None
                and self.radius.key == key
            ):
                self.radius = None
        for bucket, gone in dropped.values():
            bucket[:] = [other for other in bucket if other.key not in gone]

    def _count(self, c: Constraint, by: int) -> None:
        if c.tool:
            self._per_tool[c.tool] += by
            if self._per_tool[c.tool] <= 0:
                del self._per_tool[c.tool]
        if c.target:
            self._targeted += by

    def __bool__(self) -> bool:
        return bool(self.by_key)

    def match(self, call: Call, adapter: Adapter, now: float) -> list[Violation]:
        """Return every active constraint ``call`` runs into, blocking ones first."""
        hits: list[Violation] = []
        for c in self.exact.get(call.fingerprint, ()):
            if c.tool == call.tool and c.active(now):
                hits.append(Violation(c, c.reason))
        if self.missing and adapter.requires_existing_target(call):
            for target in call.targets:
                fact = self.missing.get(target)
                if fact is not None and fact.active(now):
                    hits.append(Violation(fact, fact.reason))
        if self.tool_target:
            for target in call.targets:
                for c in self.tool_target.get((call.tool, target), ()):
                    if c.active(now):
                        hits.append(Violation(c, c.reason))
        if call.action_class:
            for c in self.strategy.get(call.action_class, ()):
                if c.active(now):
                    hits.append(Violation(c, c.reason))
        if call.params:
            hits.extend(self._parameter_hits(call, adapter, now))
        radius = self.radius
        if radius is not None and radius.active(now):
            cap = radius.params.max_targets or 1
            if len(call.targets) > cap:
                hits.append(
                    Violation(radius, f"{radius.reason} (this call touches {len(call.targets)})")
                )
        if len(hits) > 1:
            hits.sort(key=lambda v: v.constraint.level is not Level.BLOCK)
        return hits

    def _parameter_hits(self, call: Call, adapter: Adapter, now: float) -> Iterable[Violation]:
        for c in self.by_tool.get(call.tool, ()):
            if not c.active(now):
                continue
            if c.kind is ConstraintKind.DOMINANCE_BAN:
                # dominance is the adapter's knowledge (only adapters with scaling keys learn
                # such bans); an adapter that cannot tell refuses nothing by it
                dominates = getattr(adapter, "dominates", None)
                bound: Mapping[str, Any] = c.params.config or {}
                if callable(dominates) and dominates(call.params, bound):
                    yield Violation(c, c.reason)
            else:
                key = c.params.key
                if (
                    key is not None
                    and key in call.params
                    and canonical_json(call.params[key]) == canonical_json(c.params.value)
                ):
                    yield Violation(c, c.reason)


class RecordingTransaction:
    """Pass a transaction through, noting the constraints it puts and removes.

    The engine applies these to its cached index after its own commit, instead of reloading
    every constraint from the store, when no other writer committed in between.

    Args:
        tx: The store's transaction.
        current: The cached index, when it holds what the store held as ``tx`` began (no
            writer committed since it was loaded or brought up to date): a constraint is
            then read from it, not from the store (a failure that teaches reads one or two).
    """

    def __init__(self, tx: Transaction, current: ConstraintIndex | None = None) -> None:
        self.tx = tx
        self._current = current
        self.put: dict[str, Constraint] = {}
        self.removed: set[str] = set()
        self.failed_tools: set[str] = set()

    @property
    def begin_generation(self) -> Hashable:
        """The wrapped transaction's generation when it took the write lock."""
        return self.tx.begin_generation

    @property
    def commit_generation(self) -> Hashable | None:
        """The wrapped transaction's generation right after its commit."""
        return self.tx.commit_generation

    def apply_to(self, index: ConstraintIndex) -> None:
        """Bring ``index`` up to date with what this transaction wrote."""
        index.remove_many(self.removed)
        for constraint in self.put.values():
            index.add(constraint)
        index.failed_tools.update(self.failed_tools)

    def add_failure(self, failure: Failure) -> Failure:
        """Store a failure."""
        return self.tx.add_failure(failure)

    def bump(self, key: str, now: float, by: int = 1) -> int:
        """Add to a counter."""
        self._note(key)
        return self.tx.bump(key, now, by)

    def bump_many(self, keys: Sequence[str], now: float, by: int = 1) -> None:
        """Add to several counters."""
        for key in keys:
            self._note(key)
        self.tx.bump_many(keys, now, by)

    def _note(self, key: str) -> None:
        if key.startswith(FAILED_TOOL):
            self.failed_tools.add(key[len(FAILED_TOOL) :])

    def count(self, key: str) -> int:
        """Read a counter."""
        return self.tx.count(key)

    def reset(self, prefix: str) -> int:
        """Delete counters by prefix."""
        return self.tx.reset(prefix)

    def reset_many(self, prefixes: Sequence[str]) -> int:
        """Delete counters by any of several prefixes."""
        return self.tx.reset_many(prefixes)

    def constraint(self, key: str) -> Constraint | None:
        """Read a constraint: as this transaction left it, else from the current index."""
        if key in self.put:
            return self.put[key]
        if key in self.removed:
            return None
        current = self._current
        if current is not None and key not in current.lapsed:
            return current.by_key.get(key)
        return self.tx.constraint(key)

    def put_constraint(self, constraint: Constraint) -> None:
        """Write a constraint, and note it."""
        self.tx.put_constraint(constraint)
        self.removed.discard(constraint.key)
        self.put[constraint.key] = constraint

    def remove_constraints(self, keys: Iterable[str]) -> list[Constraint]:
        """Delete constraints, and note them."""
        removed = self.tx.remove_constraints(keys)
        for constraint in removed:
            self.put.pop(constraint.key, None)
            self.removed.add(constraint.key)
        return removed

    def constraints(self) -> list[Constraint]:
        """Read every constraint, oldest first: from the current index when it holds them all.

        It does unless it was built after some lapsed (they stay stored, left out of it): an
        eviction past the cap reads every rule, which decoded from the store costs more
        than all the rest of the failure that triggers it.
        """
        current = self._current
        if current is None or current.lapsed:
            return self.tx.constraints()
        found = {k: c for k, c in current.by_key.items() if k not in self.removed}
        found.update(self.put)
        return sorted(found.values(), key=_oldest_first)

    def receipt(self, type: str, payload: Mapping[str, Any], at: float) -> None:
        """Append a receipt."""
        self.tx.receipt(type, payload, at)

    @property
    def keeps_receipts(self) -> bool:
        """Whether a receipt appended here is kept (a payload need not be built if not).

        The shipped stores say so (``receipts.ChainWriter._chain_on``); any other store is
        taken to keep them.
        """
        return bool(getattr(self.tx, "_chain_on", True))


def _oldest_first(c: Constraint) -> tuple[float, str]:
    """The order stores return constraints in: by creation time, then key."""
    return (c.created_at, c.key)
