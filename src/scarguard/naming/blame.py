"""Decide who is to blame for a failure, which decides what scarguard may learn from it.

There is one source of truth: the signature's blame (see :mod:`scarguard.naming.bank`
for why each kind is blamed as it is). Two things refine it:

- overrides by signature name, which adapters and users pass (a test runner may decide a
  ``command_failed`` is the agent's doing);
- for fallback signatures (``error:<hash>``), which know nothing about the error, the
  status code: see :func:`status_blame`.
"""

from __future__ import annotations

from collections.abc import Mapping

from scarguard.model import Blame, Outcome
from scarguard.naming._signature import Signature
from scarguard.naming.signatures import FALLBACK_PREFIX, is_fallback

__all__ = ["HARNESS_STATUS_CODES", "classify_blame", "status_blame"]

HARNESS_STATUS_CODES: frozenset[int] = frozenset({408, 429})
"""Client-error codes that are still the infrastructure's doing (timeout, rate limit)."""


def status_blame(status_code: int | None) -> Blame:
    """Return the blame a bare status code supports.

    ``408``, ``429`` and every ``5xx`` are the infrastructure's (``HARNESS``). Other ``4xx``
    codes say the request was refused, but not whose choice made it wrong: the agent's
    arguments (``400``, ``404``) look the same as the harness's set-up (an expired key, a
    misconfigured base URL), so they are ``UNKNOWN``, which still lets scarguard refuse the
    identical call without learning anything broader. No code is ``UNKNOWN`` too.
    """
    if status_code is None:
        return Blame.UNKNOWN
    if status_code in HARNESS_STATUS_CODES or 500 <= status_code <= 599:
        return Blame.HARNESS
    return Blame.UNKNOWN


def classify_blame(
    signature: Signature, outcome: Outcome, overrides: Mapping[str, Blame | str] | None = None
) -> Blame:
    """Return who is to blame for a failed outcome.

    Args:
        signature: The failure's signature, as the signature bank matched it.
        outcome: What happened (its status code matters for fallback signatures).
        overrides: Blame by signature name, consulted first. The key ``"error:"`` applies
            to every fallback signature that has no override of its own.

    Returns:
        The override for the signature's name if there is one; else the signature's own
        blame for named signatures; else, for fallbacks, :func:`status_blame` of the
        outcome's status code.
    """
    if overrides:
        found = overrides.get(signature.name)
        if found is None and is_fallback(signature.name):
            found = overrides.get(FALLBACK_PREFIX)
        if found is not None:
            return Blame(found)
    if is_fallback(signature.name):
        return status_blame(outcome.status_code)
    return signature.blame
