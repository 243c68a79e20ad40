"""Predicates that tell a failed result from a good one, for tools that report errors by value.

Many tools never raise: they return ``{"error": ...}``, ``"Error: ..."`` or a
``subprocess.CompletedProcess`` with a non-zero exit. ``guarded_tool(failure_when=...)`` takes
any ``result -> bool`` callable; the common ones ship here::

    from scarguard import guarded_tool
    from scarguard import failure_when

    @guarded_tool(memory, failure_when=failure_when.any_of(
        failure_when.error_key, failure_when.nonzero_returncode))
    def run(cmd: str) -> dict[str, object]: ...
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["MAX_RESULT_TEXT", "FailurePredicate", "describe_failure", "failure_when"]

FailurePredicate = Callable[[Any], bool]
"""A callable that returns whether a tool's result is a failure."""

MAX_RESULT_TEXT = 2000
"""Longest error text taken from a failed result (the rest is cut before classification)."""

_ERROR_PREFIX = re.compile(r"\s*error\b", re.IGNORECASE)


def _returncode(result: Any) -> Any:
    if isinstance(result, Mapping):
        return result.get("returncode")
    return getattr(result, "returncode", None)


def _error_key(result: Any) -> bool:
    """Return whether ``result`` is a mapping with a truthy ``"error"`` entry."""
    return isinstance(result, Mapping) and bool(result.get("error"))


def _error_prefix(result: Any) -> bool:
    """Return whether ``result`` is a string starting with the word ``error`` (any case)."""
    return isinstance(result, str) and _ERROR_PREFIX.match(result) is not None


def _nonzero_returncode(result: Any) -> bool:
    """Return whether ``result`` has an integer ``returncode`` other than zero.

    Works for ``subprocess.CompletedProcess`` and for mappings with a ``"returncode"`` key.
    """
    code = _returncode(result)
    return isinstance(code, int) and not isinstance(code, bool) and code != 0


def _any_of(*predicates: FailurePredicate) -> FailurePredicate:
    """Return a predicate that is true when any of ``predicates`` is.

    Raises:
        TypeError: A predicate is not callable.
    """
    for predicate in predicates:
        if not callable(predicate):
            raise TypeError(f"failure_when.any_of takes callables, got {predicate!r}")
    chosen = tuple(predicates)

    def any_failure(result: Any) -> bool:
        return any(predicate(result) for predicate in chosen)

    return any_failure


class failure_when:  # lower case: a namespace of predicates, read as `failure_when.error_key`
    """The shipped failure predicates, as one namespace.

    Attributes:
        error_key: A mapping with a truthy ``"error"`` entry.
        error_prefix: A string starting with the word ``error`` (``"Error: ..."``).
        nonzero_returncode: An object or mapping whose ``returncode`` is a non-zero integer.
        any_of: Combine predicates: true when any of them is.
    """

    error_key = staticmethod(_error_key)
    error_prefix = staticmethod(_error_prefix)
    nonzero_returncode = staticmethod(_nonzero_returncode)
    any_of = staticmethod(_any_of)

    def __init__(self) -> None:
        raise TypeError("failure_when is a namespace; use failure_when.error_key and friends")


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_RESULT_TEXT else text[:MAX_RESULT_TEXT]


def describe_failure(result: Any) -> str:
    """Return the error text of a failed result, bounded to :data:`MAX_RESULT_TEXT`.

    A process result reads like ``subprocess.CalledProcessError`` (so that it classifies
    the same as the raised form), followed by its stderr; a mapping gives its ``"error"``
    entry; anything else its ``str()``. Never raises: a result that cannot describe itself
    is described by its type.
    """
    try:
        return _describe(result)
    except Exception:
        return f"<{type(result).__name__} result>"


def _describe(result: Any) -> str:
    code = _returncode(result)
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        args = result.get("args") if isinstance(result, Mapping) else getattr(result, "args", None)
        stderr = (
            result.get("stderr") if isinstance(result, Mapping) else getattr(result, "stderr", None)
        )
        if isinstance(stderr, bytes):
            stderr = stderr.decode("utf-8", "replace")
        text = f"Command {args!r} returned non-zero exit status {code}."
        if stderr:
            text += f"\n{str(stderr)[-MAX_RESULT_TEXT:]}"
        return _bounded(text)
    if isinstance(result, Mapping) and result.get("error"):
        return _bounded(str(result["error"]))
    return _bounded(str(result))
