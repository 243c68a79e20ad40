"""The words of a constraint's reason: quoted values, argument names, counts.

Every reason is built by scarguard around pieces that came from the agent (targets, argument
names and values), so each piece is quoted, bounded or cleaned here before it is put in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scarguard.canonical import canonical_json
from scarguard.redact import excerpt

__all__ = ["name", "quote", "shown", "summary", "times"]


def quote(value: str) -> str:
    """Return a value quoted and bounded for a reason (``'app.py'``)."""
    return excerpt(value, limit=80)


def name(key: str) -> str:
    """Return an argument's name fit for a reason: argument names can come from the LLM."""
    clean = "".join(ch for ch in key if ch.isalnum() or ch in "_-.")[:40]
    return clean if clean == key else quote(key)


def shown(value: Any) -> str:
    """Return a parameter's value for a reason: numbers as they are, anything else quoted."""
    if value is None or isinstance(value, (bool, int, float)):
        return canonical_json(value)
    return excerpt(value if isinstance(value, str) else canonical_json(value), limit=40)


def summary(args: Mapping[str, Any]) -> str:
    """Return a short quoted summary of (redacted) arguments, for calls without a target."""
    parts = [f"{name(k)}={quote(str(v))}" for k, v in list(args.items())[:2] if v not in (None, "")]
    return f" ({', '.join(parts)})" if parts else ""


def times(n: int) -> str:
    """Return a count of failures as words (``"once"``, ``"3 times"``)."""
    return "once" if n == 1 else f"{n} times"
