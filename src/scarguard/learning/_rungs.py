"""The rungs above the exact call, and the constraint write every rung goes through.

What a first failure of its kind teaches beyond the identical call (see
:mod:`scarguard.learning.rules` for the ladder): varying calls of one tool on one target, an
action class failing across targets, calls touching many targets at once, and the parameters
a training run changed or scaled. Each rung counts in the store's transaction and writes its
constraint with :func:`upsert`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from scarguard._constraint_params import ConstraintParams
from scarguard.canonical import canonical_json
from scarguard.learning import keys
from scarguard.learning._reasons import name, quote, shown, times
from scarguard.model import Constraint, ConstraintKind, Level

if TYPE_CHECKING:
    from scarguard.adapters.protocol import Adapter
    from scarguard.learning.rules import Lesson
    from scarguard.policy import Policy
    from scarguard.stores.protocol import Transaction

__all__ = [
    "learn_parameters",
    "learn_radius",
    "learn_strategy",
    "learn_tool_target",
    "tokens",
    "upsert",
]


def upsert(
    tx: Transaction,
    policy: Policy,
    now: float,
    *,
    kind: ConstraintKind,
    key: str,
    lesson: Lesson,
    level: Level,
    occurrences: int,
    reason: str,
    **fields: Any,
) -> Constraint | None:
    """Write a constraint; return it when it is new or escalated, else ``None``."""
    existing = tx.constraint(key)
    if existing is not None and not existing.active(now):
        tx.remove_constraints([key])
        tx.bump_many([keys.CONSTRAINT_COUNT], now, -1)  # (no count read: nothing needs it)
        existing = None
    if existing is not None and existing.level is Level.BLOCK:
        level = Level.BLOCK
    constraint = Constraint(
        kind=kind,
        key=key,
        signature=lesson.failure.signature,
        reason=reason,
        hint=lesson.signature.hint,
        level=level,
        occurrences=occurrences,
        created_at=existing.created_at if existing else now,
        updated_at=now,
        expires_at=policy.expiry(kind, now),
        **fields,
    )
    tx.put_constraint(constraint)
    if existing is None:
        tx.bump_many([keys.CONSTRAINT_COUNT], now)
        return constraint
    return constraint if existing.level is not constraint.level else None


def tokens(lesson: Lesson, paths: Sequence[str]) -> dict[str, str]:
    """Return the lesson's observed tokens of ``paths`` (joined with its root)."""
    found = (os.path.join(lesson.root, p) for p in paths)
    return {p: lesson.observed[p] for p in found if p in lesson.observed}


def learn_tool_target(
    tx: Transaction, lesson: Lesson, policy: Policy, now: float
) -> Iterable[Constraint | None]:
    """Warn (or block, if configured) on a tool failing on one target with varying arguments."""
    call, sig = lesson.call, lesson.failure.signature
    for target in call.targets:
        counter = keys.tool_target_counter(call.tool, target, sig)
        n = tx.bump(counter, now)
        if n < policy.tool_target_warn:
            continue
        blocks = policy.tool_target_block is not None and n >= policy.tool_target_block
        yield upsert(
            tx,
            policy,
            now,
            kind=ConstraintKind.TOOL_TARGET,
            key=keys.tool_target_key(call.tool, target, sig),
            lesson=lesson,
            level=Level.BLOCK if blocks else Level.WARN,
            occurrences=n,
            reason=(
                f"{call.tool} on {quote(target)} failed {times(n)} with"
                f" {lesson.signature.label}, with different arguments each time"
            ),
            tool=call.tool,
            target=target,
            params=ConstraintParams(counter=counter, observed=tokens(lesson, (target,))),
        )


def learn_strategy(
    tx: Transaction, lesson: Lesson, policy: Policy, now: float
) -> Iterable[Constraint | None]:
    """Warn (or block, with more evidence) on an action class failing across targets."""
    call, sig = lesson.call, lesson.failure.signature
    if not call.action_class:
        return
    cls = call.action_class
    distinct = 0
    for target in call.targets or (f"#{call.fingerprint}",):
        if tx.bump(keys.class_target_counter(cls, sig, target), now) == 1:
            distinct = tx.bump(keys.class_targets_counter(cls, sig), now)
    if distinct < policy.strategy_targets:
        return
    blocks = policy.strategy_block_targets is not None and distinct >= policy.strategy_block_targets
    yield upsert(
        tx,
        policy,
        now,
        kind=ConstraintKind.BANNED_STRATEGY,
        key=keys.strategy_key(cls, sig),
        lesson=lesson,
        level=Level.BLOCK if blocks else Level.WARN,
        occurrences=distinct,
        reason=f"{cls} calls failed with {lesson.signature.label} on {distinct} different targets",
        action_class=cls,
        params=ConstraintParams(counter=keys.class_targets_counter(cls, sig)),
    )


def learn_radius(
    tx: Transaction, lesson: Lesson, policy: Policy, now: float
) -> Iterable[Constraint | None]:
    """Cap the targets per call when calls touching many at once keep failing."""
    call, sig = lesson.call, lesson.failure.signature
    if len(call.targets) < 2:
        return
    if tx.bump(keys.radius_counter(sig), now) < policy.corroboration:
        return
    step = tx.bump(keys.RADIUS_STEP, now)
    radius = policy.radius(step)
    if radius == float("inf"):
        return
    cap = int(radius)
    yield upsert(
        tx,
        policy,
        now,
        kind=ConstraintKind.RADIUS_LIMIT,
        key=keys.RADIUS_KEY,
        lesson=lesson,
        level=Level.BLOCK,
        occurrences=step,
        reason=(
            f"calls touching many targets at once keep failing ({lesson.signature.label});"
            f" touch at most {cap} per call"
        ),
        params=ConstraintParams(max_targets=cap, step=step),
    )


def learn_parameters(
    tx: Transaction, lesson: Lesson, policy: Policy, adapter: Adapter, now: float
) -> Iterable[Constraint | None]:
    """Ban what is at least as large as a run out of memory, or a changed parameter's value."""
    call, sig = lesson.call, lesson.failure.signature
    if not call.params:
        return
    if lesson.signature.resource and adapter.scaling_keys:
        counter = keys.dominance_counter(call.tool, call.fingerprint)
        n = tx.bump(counter, now)
        if n >= policy.resource_corroboration:
            scaling = sorted(k for k in adapter.scaling_keys if k in call.params)
            sizes = ", ".join(f"{name(k)}={shown(call.params[k])}" for k in scaling) or "this size"
            yield upsert(
                tx,
                policy,
                now,
                kind=ConstraintKind.DOMINANCE_BAN,
                key=keys.dominance_key(call.tool, call.fingerprint),
                lesson=lesson,
                level=Level.BLOCK,
                occurrences=n,
                reason=(
                    f"{lesson.signature.label} at {sizes}: every configuration at least as large"
                    " (other settings equal) needs at least as much memory"
                ),
                tool=call.tool,
                params=ConstraintParams(config=dict(call.params), scaling=scaling, counter=counter),
            )
        return
    for key in call.changed:
        if key not in call.params:
            continue
        value = call.params[key]
        counter = keys.parameter_counter(call.tool, key, canonical_json(value), sig)
        n = tx.bump(counter, now)
        if n >= policy.parameter_corroboration:
            yield upsert(
                tx,
                policy,
                now,
                kind=ConstraintKind.PARAMETER_BAN,
                key=keys.parameter_key(call.tool, key, canonical_json(value)),
                lesson=lesson,
                level=Level.BLOCK,
                occurrences=n,
                reason=(
                    f"changing {name(key)} to {shown(value)} failed {times(n)} with"
                    f" {lesson.signature.label}"
                ),
                tool=call.tool,
                params=ConstraintParams(key=key, value=value, counter=counter),
            )
