"""The policy: every threshold of the learning rules in one frozen value.

The defaults were chosen with ``bench/effect.py`` (see ``docs/benchmarks.md``): they refuse
repeats of known failures while refusing almost nothing that would have succeeded.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import attrs

from scarguard._frozen import FrozenDict
from scarguard.errors import ConfigurationError
from scarguard.model import ConstraintKind, Direction

__all__ = ["DAY", "HOUR", "Policy"]

HOUR = 3600.0
DAY = 24 * HOUR

_DEFAULT_TTL: dict[ConstraintKind, float | None] = {
    ConstraintKind.EXACT_CALL: 7 * DAY,
    ConstraintKind.MISSING_TARGET: 3 * DAY,
    ConstraintKind.TOOL_TARGET: 3 * DAY,
    ConstraintKind.BANNED_STRATEGY: 2 * DAY,
    ConstraintKind.PARAMETER_BAN: 30 * DAY,
    ConstraintKind.DOMINANCE_BAN: 30 * DAY,
    ConstraintKind.RADIUS_LIMIT: 2 * DAY,
}


def _ttl_converter(
    value: Mapping[Any, float | None] | None,
) -> Mapping[ConstraintKind, float | None]:
    merged = dict(_DEFAULT_TTL)
    for kind, seconds in (value or {}).items():
        try:
            merged[ConstraintKind(kind)] = seconds
        except ValueError:
            raise ConfigurationError(f"ttl: unknown constraint kind {kind!r}") from None
    return FrozenDict(merged)


def _positive_int(instance: Policy, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"Policy.{attribute.name} must be an integer >= 1, got {value!r}")


def _non_negative(instance: Policy, attribute: attrs.Attribute[float], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ConfigurationError(f"Policy.{attribute.name} must be a number >= 0, got {value!r}")


def _retention(instance: Policy, attribute: attrs.Attribute[float | None], value: object) -> None:
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0
    ):
        raise ConfigurationError(
            f"Policy.{attribute.name} must be a positive number of seconds or None, got {value!r}"
        )


def _direction(value: Direction | str) -> Direction:
    try:
        return Direction(value)
    except ValueError:
        raise ConfigurationError(
            f"Policy.direction must be 'minimize' or 'maximize', got {value!r}"
        ) from None


@attrs.frozen(kw_only=True)
class Policy:
    """Every threshold of the learning rules.

    Attributes:
        corroboration: Failures of the identical call (same fingerprint and signature)
            before it is refused.
        deterministic_corroboration: The same for agent-blamed failure kinds that are
            deterministic for identical input in an unchanged world (edit string not found,
            syntax error, conflict, unknown tool, missing make target...: the signature bank's
            ``deterministic`` flag). A missing file is learned as a target fact instead.
        deterministic: Overrides which signatures count as deterministic; ``None`` uses the
            signature bank's flags.
        unknown_corroboration: Failures of the identical call with ``unknown`` blame before
            it is refused.
        target_facts: Whether a target-level fact (a missing path) refuses other calls that
            need the target.
        tool_target_warn: Failures of one tool on one target with one signature and varying
            arguments before calls there carry a warning.
        tool_target_block: The same, before they are refused (``None``: never).
        strategy_targets: Distinct targets one action class must fail on with one signature
            before the class carries a warning.
        strategy_block_targets: The same, before the class is refused for that failure kind
            (``None``: never). A success in the class resets the count.
        resource_corroboration: Out-of-memory failures of one configuration before every
            configuration at least as large is refused (ML adapter).
        parameter_corroboration: Failures after changing a parameter to one value before that
            value is refused (ML adapter).
        radius_curve: Caps on the number of targets per call, one step tighter per
            corroborated multi-target agent failure; the last entry is the floor.
        ttl: Lifetime in seconds per constraint kind (``None``: no expiry). Merged over the
            defaults (days, so that rules matter across sessions).
        max_active_constraints: Cap per workspace and project; the oldest is evicted.
        direction: :class:`Direction` ``minimize`` or ``maximize`` for scored domains (the
            strings convert).
        plateau_window: Scored attempts without improvement before ``plateau``.
        plateau_tolerance: Smallest change of the best score that counts as improvement.
        stuck_window: Most recent calls that must all have failed or been refused to be
            ``stuck``.
        loop_warn: Identical results of the identical call in a row, with no change seen
            or inferred in between (no other result, no failure, no successful mutating
            call), before the call carries a no-progress warning and ``convergence()``
            reports ``looping``.
        loop_block: The same, before the identical call is refused (``None``: never; polling
            legitimately returns the same status again and again).
        stale_after_change: Action classes whose exact-call bans go stale when a mutating call
            succeeds (their counts are kept, so a repeat of the failure is refused at once):
            a test run that failed before an edit is a new experiment after it. Deterministic
            failures go stale only when the change touches a file the command names or a build
            manifest.
        failure_retention: Seconds a failure is kept (``None``: forever, the default). Older
            failures are deleted when a memory opens and by ``purge()``; counters and
            constraints, the learned evidence, stay.
        receipt_retention: Seconds a receipt is kept (``None``: forever). Older receipts are
            compacted behind a ``compact`` receipt, so the chain still verifies.
    """

    corroboration: int = attrs.field(default=2, validator=_positive_int)
    deterministic_corroboration: int = attrs.field(default=1, validator=_positive_int)
    deterministic: frozenset[str] | None = attrs.field(
        default=None, converter=attrs.converters.optional(frozenset)
    )
    unknown_corroboration: int = attrs.field(default=2, validator=_positive_int)
    target_facts: bool = True
    tool_target_warn: int = attrs.field(default=2, validator=_positive_int)
    tool_target_block: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(_positive_int)
    )
    strategy_targets: int = attrs.field(default=3, validator=_positive_int)
    strategy_block_targets: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(_positive_int)
    )
    resource_corroboration: int = attrs.field(default=1, validator=_positive_int)
    parameter_corroboration: int = attrs.field(default=2, validator=_positive_int)
    radius_curve: tuple[float, ...] = attrs.field(default=(math.inf, 5, 3, 2, 1), converter=tuple)
    ttl: Mapping[ConstraintKind, float | None] = attrs.field(factory=dict, converter=_ttl_converter)
    max_active_constraints: int = attrs.field(default=500, validator=_positive_int)
    direction: Direction = attrs.field(default=Direction.MINIMIZE, converter=_direction)
    plateau_window: int = attrs.field(default=10, validator=_positive_int)
    plateau_tolerance: float = attrs.field(default=0.0, validator=_non_negative)
    stuck_window: int = attrs.field(default=8, validator=_positive_int)
    loop_warn: int = attrs.field(default=3, validator=_positive_int)
    loop_block: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(_positive_int)
    )
    stale_after_change: frozenset[str] = attrs.field(
        default=frozenset({"shell_exec"}), converter=frozenset
    )
    failure_retention: float | None = attrs.field(default=None, validator=_retention)
    receipt_retention: float | None = attrs.field(default=None, validator=_retention)

    def __attrs_post_init__(self) -> None:
        curve = self.radius_curve
        if not curve or any(
            isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 1 for v in curve
        ):
            raise ConfigurationError(
                f"Policy.radius_curve must be a non-empty sequence of numbers >= 1, got {curve!r}"
            )
        if any(b > a for a, b in itertools.pairwise(curve)):
            raise ConfigurationError(f"Policy.radius_curve must not increase, got {curve!r}")
        for kind, seconds in self.ttl.items():
            if seconds is not None and (
                isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0
            ):
                raise ConfigurationError(
                    f"Policy.ttl[{kind.value!r}] must be a positive number of seconds or None,"
                    f" got {seconds!r}"
                )
        if self.tool_target_block is not None and self.tool_target_block < self.tool_target_warn:
            raise ConfigurationError("Policy.tool_target_block must be >= tool_target_warn")
        if self.loop_block is not None and self.loop_block < self.loop_warn:
            raise ConfigurationError("Policy.loop_block must be >= loop_warn")
        if (
            self.strategy_block_targets is not None
            and self.strategy_block_targets < self.strategy_targets
        ):
            raise ConfigurationError("Policy.strategy_block_targets must be >= strategy_targets")

    def expiry(self, kind: ConstraintKind, now: float) -> float | None:
        """Return when a constraint of ``kind`` learned at ``now`` lapses."""
        seconds = self.ttl.get(kind)
        return None if seconds is None else now + seconds

    def radius(self, step: int) -> float:
        """Return the radius cap after ``step`` shrinks (the floor once the curve ends)."""
        return self.radius_curve[min(step, len(self.radius_curve) - 1)]
