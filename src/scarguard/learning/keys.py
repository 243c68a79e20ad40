"""The key grammar: every counter and constraint key the learning rules write, in one place.

Counters are materialised in the store and bumped inside the write transaction of a failure,
so concurrent writers corroborate each other. Their keys are built here and nowhere else:

- ``x:<class>SEP<fingerprint>:<signature>``: failures of one exact call (``exact_counter``);
- ``xs:<class>SEP<fingerprint>:<signature>SEP<digest>``: failures of one exact call with one
  observed state of what it depends on, never reset by a success, only by ``forget``
  (``same_state_counter``, ``same_state_prefix``);
- ``tt:<tool>SEP<target>SEP<signature>``: failures of one tool on one target;
- ``ct:<class>SEP<signature>SEP<target>`` and ``cn:<class>SEP<signature>``: the targets an
  action class failed on;
- ``s:``, ``st:``, ``b:``, ``ft:``: totals per signature, signature and tool, blame, tool;
- ``r:<signature>``, ``r:step``: the radius curve; ``d:``, ``p:``: the ML adapter's bans;
- ``ok:<tool>``: successes; ``n:constraints``: how many constraints are stored;
- ``gr:``, ``grk:``, ``grd:``, ``gw:``, ``gwk:``, ``gwd:``, ``gv:``, ``gvk:``: refusals and
  shadow-mode verdicts (``refusal_keys``, ``verdict_keys``; read by
  :mod:`scarguard.refusals`, no rule reads or resets them).

Names from the agent are escaped with :func:`key_part`, so no two names share a key.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from scarguard.model import Call, Constraint

__all__ = [
    "CONSTRAINT_COUNT",
    "RADIUS_KEY",
    "RADIUS_STEP",
    "SEP",
    "class_prefixes",
    "class_target_counter",
    "class_targets_counter",
    "dominance_counter",
    "dominance_key",
    "exact_counter",
    "exact_key",
    "exact_prefix",
    "key_part",
    "missing_key",
    "parameter_counter",
    "parameter_key",
    "radius_counter",
    "refusal_keys",
    "same_state_counter",
    "same_state_prefix",
    "signature_tools_prefix",
    "strategy_key",
    "tool_target_counter",
    "tool_target_key",
    "totals",
    "verdict_keys",
]

SEP = "\x1f"
"""Separates the parts of counter and constraint keys (tool names may contain ``:``)."""
CONSTRAINT_COUNT = "n:constraints"
"""The counter of stored constraints (the cap is checked against it)."""


def key_part(text: str) -> str:
    """Return ``text`` with the key separator escaped, so no two names make one key."""
    return text.replace(SEP, "\\x1f") if SEP in text else text


def exact_prefix(call: Call) -> str:
    """Return the prefix of every exact-call counter of ``call`` (one per signature)."""
    return f"x:{call.action_class or '-'}{SEP}{call.fingerprint}:"


def exact_counter(call: Call, signature: str) -> str:
    """Return the counter of ``call``'s failures with ``signature``."""
    return f"{exact_prefix(call)}{signature}"


def same_state_counter(call: Call, signature: str, digest: str) -> str:
    """Return the counter of ``call``'s failures with ``signature`` in one observed state.

    It is outside :func:`exact_prefix`, so the call's successes do not reset it.
    """
    return f"xs:{call.action_class or '-'}{SEP}{call.fingerprint}:{signature}{SEP}{digest}"


def same_state_prefix(counter: str) -> str | None:
    """Return the prefix of the same-state counters beside an exact counter, else ``None``.

    Only a lift by hand (``forget``) resets them: after it, the call starts over as if it
    had never failed, and an old count of failures in one state must not read as "it also
    succeeded with nothing changing".
    """
    if not counter.startswith("x:"):
        return None
    return f"xs:{counter[2:]}{SEP}"


def totals(signature: str, tool: str, blame: str) -> tuple[str, ...]:
    """Return the counters every failure bumps: per signature, signature and tool, blame, tool."""
    return (
        f"s:{signature}",
        f"st:{key_part(signature)}{SEP}{key_part(tool)}",
        f"b:{blame}",
        f"ft:{tool}",
    )


def signature_tools_prefix(signature: str) -> str:
    """Return the prefix of the per-tool counters of ``signature``."""
    return f"st:{key_part(signature)}{SEP}"


def missing_key(target: str) -> str:
    """Return the key of the missing-target fact about ``target``."""
    return f"missing:{target}"


def exact_key(fingerprint: str, signature: str) -> str:
    """Return the key of the exact-call ban of one fingerprint and signature."""
    return f"exact:{fingerprint}:{signature}"


def tool_target_counter(tool: str, target: str, signature: str) -> str:
    """Return the counter of one tool's failures on one target with one signature."""
    return f"tt:{key_part(tool)}{SEP}{key_part(target)}{SEP}{key_part(signature)}"


def tool_target_key(tool: str, target: str, signature: str) -> str:
    """Return the key of the tool-target rule of one tool, target and signature."""
    return f"tool_target:{key_part(tool)}{SEP}{key_part(target)}{SEP}{key_part(signature)}"


def class_target_counter(action_class: str, signature: str, target: str) -> str:
    """Return the counter of one action class's failures on one target."""
    return f"ct:{action_class}{SEP}{key_part(signature)}{SEP}{key_part(target)}"


def class_targets_counter(action_class: str, signature: str) -> str:
    """Return the counter of the distinct targets one action class failed on."""
    return f"cn:{action_class}{SEP}{key_part(signature)}"


def class_prefixes(action_class: str) -> tuple[str, str]:
    """Return the prefixes of an action class's strategy counters (a success resets them)."""
    return f"ct:{action_class}{SEP}", f"cn:{action_class}{SEP}"


def strategy_key(action_class: str, signature: str) -> str:
    """Return the key of the banned strategy of one action class and signature."""
    return f"strategy:{action_class}{SEP}{key_part(signature)}"


RADIUS_STEP = "r:step"
"""The counter of radius shrinks."""
RADIUS_KEY = "radius"
"""The key of the radius limit."""


def radius_counter(signature: str) -> str:
    """Return the counter of multi-target failures with ``signature``."""
    return f"r:{signature}"


def dominance_counter(tool: str, fingerprint: str) -> str:
    """Return the counter of out-of-memory failures of one configuration."""
    return f"d:{key_part(tool)}{SEP}{fingerprint}"


def dominance_key(tool: str, fingerprint: str) -> str:
    """Return the key of the dominance ban of one configuration."""
    return f"dominance:{key_part(tool)}{SEP}{fingerprint}"


def parameter_counter(tool: str, name: str, value: str, signature: str) -> str:
    """Return the counter of failures after changing ``name`` to the canonical ``value``."""
    return f"p:{key_part(tool)}{SEP}{key_part(name)}={value}{SEP}{key_part(signature)}"


def parameter_key(tool: str, name: str, value: str) -> str:
    """Return the key of the ban of the canonical ``value`` of parameter ``name``."""
    return f"parameter:{key_part(tool)}{SEP}{key_part(name)}={value}"


def _day(now: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(now))


def _per_constraint(tool: str, constraint: Constraint) -> str:
    return f"{key_part(tool)}{SEP}{constraint.kind.value}{SEP}{constraint.id}"


def refusal_keys(
    tool: str, blocking: Sequence[Constraint], now: float, *, enforced: bool
) -> list[str]:
    """Return the counters one refused (``enforced``) or would-be-refused call bumps."""
    family = "gr" if enforced else "gw"
    return [
        f"{family}:{key_part(tool)}",
        f"{family}d:{_day(now)}",
        *(f"{family}k:{_per_constraint(tool, c)}" for c in blocking),
    ]


def verdict_keys(tool: str, verdict: str, constraints: Sequence[Constraint]) -> list[str]:
    """Return the counters the real outcome of a would-be-refused call bumps."""
    return [
        f"gv:{verdict}{SEP}{key_part(tool)}",
        *(f"gvk:{verdict}{SEP}{_per_constraint(tool, c)}" for c in constraints),
    ]
