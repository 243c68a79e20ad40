"""The learning rules: what a failure teaches.

The ladder goes from narrow to broad, each rung with its own corroboration (``Policy``):

1. exact call: the same fingerprint failed with the same signature;
2. target fact: a target that does not exist refuses other calls that need it;
3. tool + target + signature with varying arguments: a warning (a block only if configured);
4. action class + signature across several targets: a warning, a block only with more
   evidence, and any success in the class resets the count.

Rungs 1 and 2 are here; the broader ones, each climbed by the first failure of its kind
(and the radius and parameter rules), are in :mod:`scarguard.learning._rungs`, with the
constraint write every rung goes through.

Harness failures teach nothing; ``unknown`` ones teach only the exact-call rung. All counting
happens in materialised counters inside the store's write transaction, so concurrent
writers corroborate each other instead of racing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs

from scarguard._constraint_params import ConstraintParams
from scarguard.adapters._arguments import search_text
from scarguard.adapters._shell import command_words
from scarguard.canonical import MAX_ITEMS, MAX_STRING, canonical_json
from scarguard.learning import keys
from scarguard.learning._reasons import quote, summary, times
from scarguard.learning._rungs import (
    learn_parameters,
    learn_radius,
    learn_strategy,
    learn_tool_target,
    tokens,
    upsert,
)
from scarguard.learning.semantic import DETERMINISTIC_WHILE_HELD, kept_tokens
from scarguard.model import Blame, Call, Constraint, ConstraintKind, Failure, Level

if TYPE_CHECKING:
    from scarguard.adapters.protocol import Adapter
    from scarguard.naming._signature import Signature
    from scarguard.policy import Policy
    from scarguard.stores.protocol import Transaction

__all__ = ["Lesson", "enforce_cap", "learn"]


@attrs.define
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
                upsert(
                    tx,
                    policy,
                    now,
                    kind=ConstraintKind.MISSING_TARGET,
                    key=keys.missing_key(target),
                    lesson=lesson,
                    level=Level.BLOCK,
                    occurrences=exact_count,
                    reason=f"{quote(target)} does not exist ({label})",
                    target=target,
                    params=ConstraintParams(observed=tokens(lesson, (target,))),
                )
            )
    needed = _needed(lesson, policy)
    # read only when it decides something (the exact rung is reached)
    varies = same_state is not None and exact_count >= needed and tx.count(same_state) > exact_count
    if varies:
        needed = max(needed, policy.corroboration) * 2
    warn_from = _needed(lesson, policy) if varies else needed
    if exact_count >= warn_from and not target_fact:
        where = f" on {quote(call.targets[0])}" if call.targets else summary(failure.args)
        reason = f"this exact {call.tool} call{where} already failed {times(exact_count)}"
        if varies:
            reason += (
                f" in a row with {label}; it also succeeded with nothing observed changing, so"
                f" its result varies (a flaky check?): refused only from {needed} in a row"
            )
        else:
            reason += f" with {label}"
        learned.append(
            upsert(
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
        learned.extend(learn_tool_target(tx, lesson, policy, now))
        learned.extend(learn_strategy(tx, lesson, policy, now))
    if not target_fact:  # a missing target explains the failure; touching fewer would not help
        learned.extend(learn_radius(tx, lesson, policy, now))
    learned.extend(learn_parameters(tx, lesson, policy, adapter, now))
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
    return keys.same_state_counter(lesson.call, lesson.failure.signature, _state_digest(lesson))


_STATE_DIGESTS: dict[tuple[tuple[str, str], ...], str] = {}
"""The digests of observed states seen lately: a shell failure observes the same manifests,
mostly in the same state, every time (bounded by ``_KEPT_DIGESTS``)."""
_KEPT_DIGESTS = 256


def _state_digest(lesson: Lesson) -> str:
    """Return the digest of the observed state of ``lesson`` (remembered by its pairs)."""
    pairs = tuple(lesson.observed.items())
    try:
        found = _STATE_DIGESTS.get(pairs)
    except TypeError:  # a token that is not a string (it has no hash): not remembered
        pairs, found = (), None
    if found is None:
        text = _state_json(lesson.observed)
        found = hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
        if pairs:
            if len(_STATE_DIGESTS) >= _KEPT_DIGESTS:
                _STATE_DIGESTS.clear()
            _STATE_DIGESTS[pairs] = found
    return found


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
