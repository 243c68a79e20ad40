"""What evidence lifts: the constraints a success disproves.

A success of the identical call clears its own record, and so does a test run without a
selection for the failing runs of the same runner that selected tests (it ran them: a flaky
test that failed twice is not banned once the whole suite passed); a successful mutating call
lifts the facts about its targets and the bans that went stale because the world changed
(their counts are kept, so the same failure again is refused at once); any success in an
action class lifts its strategy bans.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from scarguard.adapters._actions import API_CALL, tool_words
from scarguard.adapters._arguments import inserted_text
from scarguard.adapters._shell import MANIFESTS, command_words, manifests_for
from scarguard.learning import keys
from scarguard.learning.keys import CONSTRAINT_COUNT, class_prefixes, exact_prefix
from scarguard.learning.semantic import covered_by, lifted_by_change
from scarguard.model import Call, Constraint, ConstraintKind, Level

if TYPE_CHECKING:
    from scarguard.adapters.protocol import Adapter
    from scarguard.learning.index import ConstraintIndex
    from scarguard.policy import Policy
    from scarguard.stores.protocol import Transaction

__all__ = ["lift_on_success", "liftable", "remove_with_counters", "reset_keys_for_success"]


def _changed_names(call: Call) -> frozenset[str]:
    names = {t for t in call.targets} | {os.path.basename(t) for t in call.targets}
    return frozenset(names)


def _mentions(constraint: Constraint, changed: frozenset[str]) -> bool:
    """Return whether a change of these files can change the outcome of the banned call."""
    if constraint.params.depends:
        return False  # decided by its condition (see _goes_stale)
    if not changed:
        return True  # a change of unknown files (a shell command) may touch anything
    if changed & MANIFESTS:
        return True
    words = constraint.params.words
    return any(w in changed for w in words)


def _goes_stale(
    constraint: Constraint, call: Call, changed: frozenset[str], inserted: str | None
) -> bool:
    """Return whether a successful change ``call`` makes a shell-like ban stale.

    A ban with a condition (the make target, the program, the files its error names) only
    when the change can end that condition; any other one when it is not deterministic, or
    when the change touched a file it names or a build manifest.
    """
    depends = constraint.params.depends
    if depends:
        watched = frozenset(os.path.basename(p) for p in constraint.params.observed)
        verdict = lifted_by_change(
            depends, changed, call.args, tool_words(call.tool), inserted, watched
        )
        if verdict is not None:
            return verdict
    if _foreign_manifests_only(constraint, changed):
        return False
    return not constraint.params.deterministic or _mentions(constraint, changed)


def _foreign_manifests_only(constraint: Constraint, changed: frozenset[str]) -> bool:
    """Return whether the change touched only manifests the banned program does not read.

    A Makefile edit cannot change what ``pytest`` does.
    """
    words = constraint.params.words
    tool = constraint.tool
    program = tool if tool and manifests_for(tool) is not MANIFESTS else (words or (None,))[0]
    own = manifests_for(program)
    if own is MANIFESTS or not changed:
        return False
    return all(os.path.basename(n) in MANIFESTS and os.path.basename(n) not in own for n in changed)


def _covered(index: ConstraintIndex, call: Call) -> list[Constraint]:
    """Return the bans of test runs that selected tests a success of ``call`` ran them all of.

    A success of ``pytest`` is a success of ``pytest tests/test_a.py`` (same tool, same
    place): its own record is cleared as if it had passed itself.
    """
    if "command" not in call.args and "cmd" not in call.args:
        return []
    runs = index.selected_runs.get(call.tool)  # (not every shell ban: this runs per success)
    if not runs:
        return []
    return [c for c in runs if covered_by(c.params.depends, call.args)]


def liftable(
    index: ConstraintIndex,
    call: Call,
    adapter: Adapter,
    policy: Policy,
    *,
    changed_nothing: bool = False,
    mutating: bool | None = None,
) -> list[Constraint]:
    """Return the constraints a success of ``call`` disproves.

    The identical call's own bans; for every target of a mutating call, or of a call that
    needed the target to exist, the target's facts; a mutating success also lifts the
    target-level warnings, the edit bans on its targets it disproves, and the bans of
    shell-like calls (a test run after an edit is a new experiment); any success in an
    action class lifts its strategy bans. A test run without a selection lifts the bans of
    the same runner's failing runs that selected tests. ``changed_nothing``: the call's output
    says it changed nothing, so it is not a change (``reports_no_change`` in the shell
    helpers). ``mutating``: ``adapter.mutating(call)``, if the caller asked it already.
    """
    # (each lookup is asked first, so that the common success, which lifts nothing, builds
    # no generator: this runs after every described success)
    exact = index.exact.get(call.fingerprint)
    lifted = [c for c in exact if c.tool == call.tool] if exact else []
    if index.shell_exact:
        lifted.extend(_covered(index, call))
    if mutating is None:
        mutating = adapter.mutating(call)
    mutating = mutating and not changed_nothing
    if mutating:
        changed = _changed_names(call)
        shell = [
            *index.shell_exact,
            *(c for cls in policy.stale_after_change for c in index.exact_by_class.get(cls, ())),
        ]
        inserted = inserted_text(call.args)
        lifted.extend(c for c in shell if _goes_stale(c, call, changed, inserted))
        for target in call.targets:
            # a change of a file disproves the edits that failed on it for want of their
            # search text, when it put that text in (or put in something unknown); counts
            # are kept, so the same failure again is refused at once
            lifted.extend(
                c
                for c in index.exact_by_target.get(target, ())
                if c.params.search is not None and (inserted is None or c.params.search in inserted)
            )
        if index.missing and not call.targets:
            # a shell command that changed the workspace: the paths it names may exist now
            lifted.extend(index.missing[w] for w in command_words(call.args) if w in index.missing)
    if index.exact_by_target and call.targets and _writes_remotely(call):
        for target in call.targets:
            if _remote(target, call.action_class):
                lifted.extend(_under_url(index, target))
    missing = index.missing
    if missing and (mutating or adapter.requires_existing_target(call)):
        for target in call.targets:  # (no generator: a read of a constrained tool asks this)
            fact = missing.get(target)
            if fact is not None:
                lifted.append(fact)
    if index.target_rules:
        for target in call.targets:
            # a change lifts every rule on the target; reading it lifts the warnings, which
            # asked for exactly that (re-read before editing again)
            rules = index.target_rules.get(target)
            if rules:
                lifted.extend(c for c in rules if mutating or c.level is Level.WARN)
    if call.action_class:
        strategy = index.strategy.get(call.action_class)
        if strategy:
            lifted.extend(strategy)
    if len(lifted) < 2:
        return lifted
    return list({c.key: c for c in lifted}.values())


_WRITE_METHODS = frozenset({"POST", "PUT", "PATCH"})


def _writes_remotely(call: Call) -> bool:
    """Return whether a call writes to a resource: its ``method`` is POST, PUT or PATCH."""
    method = call.args.get("method")
    return isinstance(method, str) and method.upper() in _WRITE_METHODS


def _url_base(url: str) -> str:
    """A URL without its query, fragment and trailing ``/``."""
    return url.split("#", 1)[0].split("?", 1)[0].rstrip("/")


def _under_url(index: ConstraintIndex, target: str) -> list[Constraint]:
    """Return the bans of calls on ``target`` or a resource under it (a URL, an endpoint).

    A successful change there (``POST /users``, ``PUT /users/42``) may have created what a
    ``404`` said was missing: nothing observes a remote resource, so the change stands for
    it, as a change of the workspace does for a shell command's ban (counts kept).
    """
    base = _url_base(target)
    under = base + "/"
    return [
        c
        for banned, bans in index.exact_by_target.items()
        if _url_base(banned) == base or banned.startswith(under)
        for c in bans
        if c.params.search is None and _remote(banned, c.action_class)
    ]


def _remote(target: str, action_class: str | None) -> bool:
    """Return whether a target names a remote resource: a URL, or an API call's endpoint."""
    return "://" in target or action_class == API_CALL


def reset_keys_for_success(call: Call, policy: Policy, mutating: bool) -> list[str]:
    """Return the counter prefixes a success of ``call`` resets.

    Its own failure record and its action class's strategy counts. A change of the world
    lifts stale bans but keeps their counts: the first run after the change is allowed, and
    if it fails the same way again, the ban is back at once.
    """
    prefixes = [exact_prefix(call)]
    if call.action_class:
        prefixes += class_prefixes(call.action_class)
    return prefixes


def remove_with_counters(
    tx: Transaction,
    constraints: Sequence[Constraint],
    now: float,
    *,
    keep_counts: bool = False,
    by_hand: bool = False,
) -> list[Constraint]:
    """Delete constraints and (unless ``keep_counts``) the counters that built them.

    ``by_hand``: a lift by hand (``forget``) also resets the same-state counters of the
    calls, which no success resets (they tell a flaky call from a deterministic one).

    Returns:
        The constraints the store held and deleted.
    """
    if not constraints:
        return []
    removed = tx.remove_constraints([c.key for c in constraints])
    tx.bump(CONSTRAINT_COUNT, now, -len(removed))
    if keep_counts:
        return removed
    prefixes: list[str] = []
    for constraint in removed:
        counter = constraint.params.counter
        if counter is None:
            continue
        prefixes.append(counter)
        states = keys.same_state_prefix(counter) if by_hand else None
        if states is not None:
            prefixes.append(states)
    if prefixes:
        tx.reset_many(prefixes)
    return removed


def lift_on_success(
    tx: Transaction,
    call: Call,
    index: ConstraintIndex,
    adapter: Adapter,
    policy: Policy,
    now: float,
    *,
    changed_nothing: bool = False,
) -> list[Constraint]:
    """Lift what a success of ``call`` disproves; return the lifted constraints.

    Bans of other calls that went stale because this one changed the world are lifted with
    their counts kept, so a repeat of the same failure brings them straight back.
    ``changed_nothing``: the call's output says this run changed nothing (``git merge``
    answering ``Already up to date.``), so it lifts only what a reading call would.
    """
    lifted = liftable(index, call, adapter, policy, changed_nothing=changed_nothing)
    covered = {c.key for c in _covered(index, call)}
    stale = [
        c
        for c in lifted
        if c.kind is ConstraintKind.EXACT_CALL
        and c.fingerprint != call.fingerprint
        and c.key not in covered
    ]
    disproved = [c for c in lifted if c not in stale]
    removed = {c.key for c in remove_with_counters(tx, disproved, now)}
    removed.update(c.key for c in remove_with_counters(tx, stale, now, keep_counts=True))
    for prefix in reset_keys_for_success(call, policy, adapter.mutating(call)):
        tx.reset(prefix)
    # what the store still held: the index may name a rule another memory lifted meanwhile
    return [c for c in lifted if c.key in removed]
