"""Reports built from the materialised counters: repeated patterns and statistics.

``patterns()`` without ``since`` reads one counter per failure kind plus the latest few
failures of each repeated kind, so it costs the same with a hundred or a million stored
failures. With ``since`` it groups the failures of that window.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import attrs

from scarguard._frozen import freeze_mapping
from scarguard._results import Pattern
from scarguard.learning.keys import signature_tools_prefix
from scarguard.model import Blame, Constraint, Failure, Scope
from scarguard.naming._signature import Signature
from scarguard.naming.signatures import FALLBACK_PREFIX, SignatureBank, fallback_signature
from scarguard.refusals import RefusalStats, build_refusal_stats
from scarguard.stores.protocol import Store

__all__ = ["MemoryStats", "build_patterns", "build_stats", "signature_named"]

_WINDOW_LIMIT = 10_000
_EXAMPLES = 20


def signature_named(bank: SignatureBank, name: str) -> Signature:
    """Return the bank's signature called ``name``, or a fallback one labelled by its hash."""
    known = bank.get(name)
    if known is not None:
        return known
    short = name[len(FALLBACK_PREFIX) :][:6] if name.startswith(FALLBACK_PREFIX) else name
    return attrs.evolve(fallback_signature(None), name=name, label=f"unrecognised error #{short}")


def _pattern(
    bank: SignatureBank,
    name: str,
    count: int,
    last_seen: float,
    tools: Counter[str],
    recent: Sequence[Failure],
) -> Pattern:
    sig = signature_named(bank, name)
    targets = Counter(t for f in recent for t in f.targets)
    latest = recent[0] if recent else None
    return Pattern(
        signature=name,
        label=sig.label,
        count=count,
        blame=latest.blame if latest else sig.blame,
        hint=sig.hint,
        last_seen=last_seen,
        tools=tuple(t for t, _ in sorted(tools.items(), key=lambda kv: (-kv[1], kv[0]))),
        targets=tuple(t for t, _ in sorted(targets.items(), key=lambda kv: (-kv[1], kv[0]))),
        example=latest.error if latest else None,
    )


def build_patterns(
    store: Store, scope: Scope, bank: SignatureBank, *, since: float | None, min_count: int
) -> list[Pattern]:
    """Return the failure kinds seen at least ``min_count`` times, most frequent first."""
    patterns: list[Pattern] = []
    if since is None:
        counts = store.counters(scope, "s:")
        tool_counts = store.counters(scope, "st:")
        for key, value in counts.items():
            name = key[2:]
            if value.count < min_count:
                continue
            prefix = signature_tools_prefix(name)
            tools = Counter(
                {k[len(prefix) :]: v.count for k, v in tool_counts.items() if k.startswith(prefix)}
            )
            recent = store.failures(scope, signature=name, limit=_EXAMPLES)
            patterns.append(_pattern(bank, name, value.count, value.last_at, tools, recent))
    else:
        by_name: dict[str, list[Failure]] = {}
        for failure in store.failures(scope, since=since, limit=_WINDOW_LIMIT):
            by_name.setdefault(failure.signature, []).append(failure)
        for name, failures in by_name.items():
            if len(failures) < min_count:
                continue
            tools = Counter(f.tool for f in failures)
            patterns.append(
                _pattern(bank, name, len(failures), failures[0].at, tools, failures[:_EXAMPLES])
            )
    patterns.sort(key=lambda p: (-p.count, p.signature))
    return patterns


@attrs.frozen
class MemoryStats:
    """Counts for one workspace and project.

    Attributes:
        failures_by_tool: Failures per tool.
        successes_by_tool: Successes per tool.
        failures_by_signature: Failures per failure kind.
        failures_by_blame: Failures per blame.
        constraints_by_kind: Active constraints per kind.
        refusals: What was refused (or would have been, in shadow mode), per tool,
            constraint and day.
    """

    failures_by_tool: Mapping[str, int] = attrs.field(converter=freeze_mapping)
    successes_by_tool: Mapping[str, int] = attrs.field(converter=freeze_mapping)
    failures_by_signature: Mapping[str, int] = attrs.field(converter=freeze_mapping)
    failures_by_blame: Mapping[str, int] = attrs.field(converter=freeze_mapping)
    constraints_by_kind: Mapping[str, int] = attrs.field(converter=freeze_mapping)
    refusals: RefusalStats

    @property
    def failures(self) -> int:
        """All failures."""
        return sum(self.failures_by_tool.values())

    @property
    def successes(self) -> int:
        """All successes."""
        return sum(self.successes_by_tool.values())


def build_stats(store: Store, scope: Scope, active: Sequence[Constraint]) -> MemoryStats:
    """Return the tenant's statistics from its counters and active constraints."""

    def by(prefix: str) -> dict[str, int]:
        values = store.counters(scope, prefix)
        return dict(sorted((k[len(prefix) :], v.count) for k, v in values.items()))

    blames = {b.value: 0 for b in Blame} | by("b:")
    return MemoryStats(
        failures_by_tool=by("ft:"),
        successes_by_tool=by("ok:"),
        failures_by_signature=by("s:"),
        failures_by_blame=blames,
        constraints_by_kind=dict(sorted(Counter(c.kind.value for c in active).items())),
        refusals=build_refusal_stats(store, scope),
    )
