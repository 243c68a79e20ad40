"""How long an error asks the caller to wait before retrying (``Retry-After`` and its kin)."""

from __future__ import annotations

import functools
import re

from scarguard.naming.signatures import MATCH_LIMIT, clip

__all__ = ["MAX_RETRY_AFTER", "retry_after"]

MAX_RETRY_AFTER = 3600.0
"""Longest wait :func:`retry_after` reports, in seconds; longer ones are capped."""

_DURATION = re.compile(
    r"(\d+(?:\.\d+)?)\s*(ms|millis(?:econds?)?|h|hours?|hrs?|m|mins?|minutes?|s|secs?|seconds?)?"
    r"(?![a-z])",
    re.IGNORECASE,
)
_RETRY_AFTER_MS = re.compile(
    r"\bretry[-_ ]?after[-_ ]?ms\b[\"']?\s*[:=]?\s*[\"']?(\d+(?:\.\d+)?)", re.IGNORECASE
)
_RETRY_AFTER = re.compile(
    r"\b(?:retry[-_ ]?after|retry_?delay)\b[\"']?\s*[:=]?\s*[\"']?"
    r"((?:\d+(?:\.\d+)?\s*(?:[a-z]+)?\s*)+)",
    re.IGNORECASE,
)
_TRY_AGAIN_IN = re.compile(
    r"\b(?:try again|retry)\s+in\s+((?:\d+(?:\.\d+)?\s*[a-z]*\s*)+)", re.IGNORECASE
)


def _unit_seconds(unit: str) -> float:
    unit = unit.lower()
    if unit == "ms" or unit.startswith("milli"):
        return 0.001
    if unit.startswith("h"):
        return 3600.0
    if unit.startswith("m"):
        return 60.0
    return 1.0  # "s", "sec", "seconds", or no unit at all


def _seconds(duration: str) -> float | None:
    parts = _DURATION.findall(duration)
    if not parts:
        return None
    return sum(float(number) * _unit_seconds(unit) for number, unit in parts)


def retry_after(text: str | None) -> float | None:
    """Return how long an error asks the caller to wait before retrying, in seconds.

    Understands ``Retry-After: 30``, ``retry-after-ms: 500``, ``retry after 2s``,
    ``try again in 20 seconds``, ``Please try again in 1m12.5s`` and ``"retryDelay": "34s"``.
    A bare number is seconds; an HTTP-date ``Retry-After`` is not interpreted.

    Returns:
        The wait, capped at :data:`MAX_RETRY_AFTER`; ``None`` when the text names none.
    """
    if not text:
        return None
    if len(text) <= _CACHED_TEXT:
        return _retry_after_cached(text)  # an agent repeating a mistake repeats its error
    return _retry_after(text)


def _retry_after(text: str) -> float | None:
    text = clip(text, MATCH_LIMIT)
    match = _RETRY_AFTER_MS.search(text)
    if match:
        return min(float(match.group(1)) / 1000.0, MAX_RETRY_AFTER)
    for pattern in (_RETRY_AFTER, _TRY_AGAIN_IN):
        match = pattern.search(text)
        if match:
            seconds = _seconds(match.group(1))
            if seconds is not None:
                return min(seconds, MAX_RETRY_AFTER)
    return None


_CACHED_TEXT = 1024
"""Error texts up to this long have their answer remembered."""
_retry_after_cached = functools.lru_cache(maxsize=1024)(_retry_after)
