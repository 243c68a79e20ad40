"""The key grammar: every counter and constraint key the learning rules write, in one place.

Counters are materialised in the store and bumped inside the write transaction of a failure,
so concurrent writers corroborate each other. Their keys are built here and nowhere else:

- ``x:<class>SEP<fingerprint>:<signature>``: failures of one exact call (``exact_counter``);
- ``tt:<tool>SEP<target>SEP<signature>``: failures of one tool on one target;
- ``ct:<class>SEP<signature>SEP<target>`` and ``cn:<class>SEP<signature>``: the targets an
  action class failed on;
- ``s:``, ``st:``, ``b:``, ``ft:``: totals per signature, signature and tool, blame, tool;
- ``r:<signature>``, ``r:step``: the radius curve; ``d:``, ``p:``: the ML adapter's bans;
- ``ok:<tool>``: successes; ``n:constraints``: how many constraints are stored;
- ``gr:``, ``grk:``, ``grd:``, ``gw:``, ``gwk:``, ``gwd:``, ``gv:``, ``gvk:``: refusals and
  shadow-mode verdicts, built by :mod:`scarguard.refusals` (no rule reads or resets them).

Names from the agent are escaped with :func:`key_part`, so no two names share a key.
"""

from __future__ import annotations

from scarguard.model import Call

__all__ = ["CONSTRAINT_COUNT", "SEP", "exact_counter", "exact_prefix", "key_part"]

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
