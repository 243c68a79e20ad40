"""The learning rules: what a failure teaches.

The ladder goes from narrow to broad, each rung with its own corroboration (``Policy``):

1. exact call: the same fingerprint failed with the same signature;
2. target fact: a target that does not exist refuses other calls that need it;
3. tool + target + signature with varying arguments: a warning (a block only if configured);
4. action class + signature across several targets: a warning, a block only with more
   evidence, and any success in the class resets the count.

Harness failures teach nothing; ``unknown`` ones teach only the exact-call rung. All counting
happens in materialised counters inside the store's write transaction, so concurrent
writers corroborate each other instead of racing.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from scarguard._constraint_params import ConstraintParams
from scarguard.adapters._arguments import search_text
from scarguard.adapters._shell import command_words
from scarguard.canonical import MAX_ITEMS, MAX_STRING, canonical_json
from scarguard.learning import keys
from scarguard.learning.semantic import DETERMINISTIC_WHILE_HELD, kept_tokens
from scarguard.model import Blame, Call, Constraint, ConstraintKind, Failure, Level
from scarguard.redact import excerpt

if TYPE_CHECKING:
    from scarguard.adapters.protocol import Adapter
    from scarguard.naming._signature import Signature
    from scarguard.policy import Policy
    from scarguard.stores.protocol import Transaction

__all__ = ["Lesson", "enforce_cap", "learn"]


def _quote(value: str) -> str:
    return excerpt(value, limit=80)


def _name(key: str) -> str:
    """Return an argument's name fit for a reason: argument names can come from the LLM."""
    clean = "".join(ch for ch in key if ch.isalnum() or ch in "_-.")[:40]
    return clean if clean == key else _quote(key)


def _shown(value: Any) -> str:
    """Return a parameter's value for a reason: numbers as they are, anything else quoted."""
    if value is None or isinstance(value, (bool, int, float)):
        return _canon(value)
    return excerpt(value if isinstance(value, str) else _canon(value), limit=40)


def _canon(value: Any) -> str:
    return canonical_json(value)


@attrs.frozen
class Lesson:
    """What one failure is, as the rules need it.

    Attributes:
        call: The failed call.
        failure: The stored failure.
        signature: The matching signature (for label, hint and flags).
        deterministic: Whether the identical call must fail identically.
        teaches: Whether the failure may teach constraints (an incident only counts).
        shell_like: Whether the call is a command whose bans go stale on change.
        observed: State tokens of what the failure depends on, by absolute path.
        root: The root relative targets are joined with to find their tokens.
        depends: The condition the failure's wording names, confirmed by the observer (see
            :mod:`scarguard.learning.semantic`): the failure is deterministic while it holds,
            and only its end makes the ban stale.
    """

    call: Call
    failure: Failure
    signature: Signature
    deterministic: bool
    teaches: bool = True
    shell_like: bool = False
    observed: Mapping[str, str] = attrs.field(factory=dict)
    root: str = ""
    depends: tuple[str, ...] = ()


def _upsert(
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
        tx.bump(keys.CONSTRAINT_COUNT, now, -1)
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
        tx.bump(keys.CONSTRAINT_COUNT, now)
        return constraint
    return constraint if existing.level is not constraint.level else None


def learn(
    tx: Transaction, lesson: Lesson, policy: Policy, adapter: Adapter, now: float
) -> list[Constraint]:
    """Apply the learning rules to one failure inside ``tx``; return new or escalated rules."""
    failure, call, sig = lesson.failure, lesson.call, lesson.signature
    label = sig.label
    teaches = failure.blame is not Blame.HARNESS and lesson.teaches
    same_state = _same_state_key(lesson) if teaches else None
    totals = keys.totals(failure.signature, call.tool, failure.blame.value)
    tx.bump_many([*totals, same_state] if same_state else totals, now)  # one statement
    if not teaches:
        return []

    learned: list[Constraint | None] = []
    exact_count_key = keys.exact_counter(call, failure.signature)
    exact_count = tx.bump(exact_count_key, now)
    # A missing target is a fact about the target, not the call: learn it once, on the target,
    # so that creating the file lifts it (an exact-call ban beside it would outlive the fix).
    target_fact = (
        failure.blame is Blame.AGENT
        and sig.target_fact
        and policy.target_facts
        and bool(call.targets)
        and adapter.requires_existing_target(call)
    )
    if target_fact:
        for target in call.targets:
            learned.append(
                _upsert(
                    tx,
                    policy,
                    now,
                    kind=ConstraintKind.MISSING_TARGET,
                    key=keys.missing_key(target),
                    lesson=lesson,
                    level=Level.BLOCK,
                    occurrences=exact_count,
                    reason=f"{_quote(target)} does not exist ({label})",
                    target=target,
                    params=ConstraintParams(observed=_tokens(lesson, (target,))),
                )
            )
    needed = _needed(lesson, policy)
    # read only when it decides something (the exact rung is reached)
    varies = same_state is not None and exact_count >= needed and tx.count(same_state) > exact_count
    if varies:
        needed = max(needed, policy.corroboration) * 2
    warn_from = _needed(lesson, policy) if varies else needed
    if exact_count >= warn_from and not target_fact:
        where = f" on {_quote(call.targets[0])}" if call.targets else _summary(failure.args)
        reason = f"this exact {call.tool} call{where} already failed {_times(exact_count)}"
        if varies:
            reason += (
                f" in a row with {label}; it also succeeded with nothing observed changing, so"
                f" its result varies (a flaky check?): refused only from {needed} in a row"
            )
        else:
            reason += f" with {label}"
        learned.append(
            _upsert(
                tx,
                policy,
                now,
                kind=ConstraintKind.EXACT_CALL,
                key=keys.exact_key(call.fingerprint, failure.signature),
                lesson=lesson,
                level=Level.BLOCK if exact_count >= needed else Level.WARN,
                occurrences=exact_count,
                reason=reason,
                tool=call.tool,
                target=call.targets[0] if call.targets else None,
                action_class=call.action_class,
                fingerprint=call.fingerprint,
                params=_exact_params(lesson, exact_count_key),
            )
        )
    if failure.blame is not Blame.AGENT:
        return [c for c in learned if c is not None]

    first_of_its_kind = exact_count == 1
    if first_of_its_kind:
        learned.extend(_tool_target(tx, lesson, policy, now))
        learned.extend(_strategy(tx, lesson, policy, now))
    if not target_fact:  # a missing target explains the failure; touching fewer would not help
        learned.extend(_radius(tx, lesson, policy, now))
    learned.extend(_parameters(tx, lesson, policy, adapter, now))
    return [c for c in learned if c is not None]


def _held(depends: tuple[str, ...]) -> bool:
    """Return whether a condition makes the failure deterministic while it holds."""
    return bool(depends) and depends[0] in DETERMINISTIC_WHILE_HELD


def _needed(lesson: Lesson, policy: Policy) -> int:
    """Return how many identical failures the exact-call rung needs for this failure."""
    if lesson.failure.blame is Blame.UNKNOWN:
        return policy.unknown_corroboration
    if lesson.deterministic or _held(lesson.depends):
        return policy.deterministic_corroboration
    return policy.corroboration


def _same_state_key(lesson: Lesson) -> str | None:
    """Return the counter of this call's failures in this observed state.

    ``None`` for a deterministic kind: it is refused at its first repeat whatever happened.

    Every failure of a kind that is not deterministic bumps it, and no success resets it;
    the exact counter is reset by a success of the identical call. More failures with these
    very tokens than failures in a row means the call succeeded in between while nothing it
    depends on changed: its result is not a function of the workspace (a flaky test).
    """
    if lesson.deterministic or _held(lesson.depends):
        return None
    digest = hashlib.blake2b(_state_json(lesson.observed).encode(), digest_size=8).hexdigest()
    return keys.same_state_counter(lesson.call, lesson.failure.signature, digest)


_json_string = json.encoder.encode_basestring  # a JSON string, as canonical_json writes it


def _state_json(observed: Mapping[str, str]) -> str:
    """Return ``canonical_json(sorted(observed.items()))``, the same text.

    Observed paths and tokens are short strings, which the canonical walk keeps as they are:
    their pairs are encoded directly (the walk runs only for what it would change: more
    pairs than it keeps, a string longer than it keeps, a value that is not a string).
    """
    pairs = sorted(observed.items())
    if len(pairs) <= MAX_ITEMS:
        try:
            text = "[" + ",".join(f"[{_json_string(k)},{_json_string(v)}]" for k, v in pairs)
        except TypeError:  # not a string
            return canonical_json(pairs)
        if len(text) <= MAX_STRING or max(len(part) for pair in pairs for part in pair) <= (
            MAX_STRING
        ):
            return text + "]"
    return canonical_json(pairs)


def _summary(args: Mapping[str, Any]) -> str:
    """Return a short quoted summary of (redacted) arguments, for calls without a target."""
    shown = [
        f"{_name(k)}={_quote(str(v))}" for k, v in list(args.items())[:2] if v not in (None, "")
    ]
    return f" ({', '.join(shown)})" if shown else ""


def _tokens(lesson: Lesson, paths: Sequence[str]) -> dict[str, str]:
    found = (os.path.join(lesson.root, p) for p in paths)
    return {p: lesson.observed[p] for p in found if p in lesson.observed}


def _exact_params(lesson: Lesson, counter: str) -> ConstraintParams:
    """Return what an exact-call ban keeps: its counter, and what decides when it goes stale."""
    depends = lesson.depends
    return ConstraintParams(
        counter=counter,
        deterministic=lesson.deterministic or _held(depends),
        shell=lesson.shell_like,
        words=command_words(lesson.failure.args) if lesson.shell_like else (),
        observed=kept_tokens(depends, lesson.observed, lesson.root, lesson.call.targets),
        depends=depends,
        search=search_text(lesson.failure.args) if lesson.call.targets else None,
    )


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _tool_target(
    tx: Transaction, lesson: Lesson, policy: Policy, now: float
) -> Iterable[Constraint | None]:
    call, sig = lesson.call, lesson.failure.signature
    for target in call.targets:
        counter = keys.tool_target_counter(call.tool, target, sig)
        n = tx.bump(counter, now)
        if n < policy.tool_target_warn:
            continue
        blocks = policy.tool_target_block is not None and n >= policy.tool_target_block
        yield _upsert(
            tx,
            policy,
            now,
            kind=ConstraintKind.TOOL_TARGET,
            key=keys.tool_target_key(call.tool, target, sig),
            lesson=lesson,
            level=Level.BLOCK if blocks else Level.WARN,
            occurrences=n,
            reason=(
                f"{call.tool} on {_quote(target)} failed {_times(n)} with"
                f" {lesson.signature.label}, with different arguments each time"
            ),
            tool=call.tool,
            target=target,
            params=ConstraintParams(counter=counter, observed=_tokens(lesson, (target,))),
        )


def _strategy(
    tx: Transaction, lesson: Lesson, policy: Policy, now: float
) -> Iterable[Constraint | None]:
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
    yield _upsert(
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


def _radius(
    tx: Transaction, lesson: Lesson, policy: Policy, now: float
) -> Iterable[Constraint | None]:
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
    yield _upsert(
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


def _parameters(
    tx: Transaction, lesson: Lesson, policy: Policy, adapter: Adapter, now: float
) -> Iterable[Constraint | None]:
    call, sig = lesson.call, lesson.failure.signature
    if not call.params:
        return
    if lesson.signature.resource and adapter.scaling_keys:
        counter = keys.dominance_counter(call.tool, call.fingerprint)
        n = tx.bump(counter, now)
        if n >= policy.resource_corroboration:
            scaling = sorted(k for k in adapter.scaling_keys if k in call.params)
            shown = (
                ", ".join(f"{_name(k)}={_shown(call.params[k])}" for k in scaling) or "this size"
            )
            yield _upsert(
                tx,
                policy,
                now,
                kind=ConstraintKind.DOMINANCE_BAN,
                key=keys.dominance_key(call.tool, call.fingerprint),
                lesson=lesson,
                level=Level.BLOCK,
                occurrences=n,
                reason=(
                    f"{lesson.signature.label} at {shown}: every configuration at least as large"
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
        counter = keys.parameter_counter(call.tool, key, _canon(value), sig)
        n = tx.bump(counter, now)
        if n >= policy.parameter_corroboration:
            yield _upsert(
                tx,
                policy,
                now,
                kind=ConstraintKind.PARAMETER_BAN,
                key=keys.parameter_key(call.tool, key, _canon(value)),
                lesson=lesson,
                level=Level.BLOCK,
                occurrences=n,
                reason=(
                    f"changing {_name(key)} to {_shown(value)} failed {_times(n)} with"
                    f" {lesson.signature.label}"
                ),
                tool=call.tool,
                params=ConstraintParams(key=key, value=value, counter=counter),
            )


def enforce_cap(tx: Transaction, policy: Policy, now: float) -> list[Constraint]:
    """Purge expired rules and, past the cap, evict the oldest down to 90% of it."""
    if tx.count(keys.CONSTRAINT_COUNT) <= policy.max_active_constraints:
        return []
    stored = tx.constraints()
    expired = [c.key for c in stored if not c.active(now)]
    live = [c for c in stored if c.active(now)]
    keep = max(int(policy.max_active_constraints * 0.9), 1)
    evicted = sorted(live, key=lambda c: (c.updated_at, c.key))[: max(len(live) - keep, 0)]
    tx.remove_constraints(expired + [c.key for c in evicted])
    tx.reset(keys.CONSTRAINT_COUNT)
    tx.bump(keys.CONSTRAINT_COUNT, now, len(live) - len(evicted))
    return evicted
