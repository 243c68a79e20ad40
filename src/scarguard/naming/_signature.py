"""The value type of a named failure kind, below the bank that names errors and its data.

:class:`Signature` is public as ``scarguard.Signature``; it lives here so that the default
bank's data (:mod:`scarguard.naming.bank`) and the bank that matches errors
(:mod:`scarguard.naming.signatures`) both build on it without importing each other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import attrs

from scarguard.model import Blame

__all__ = ["Signature", "bare_name"]


def _compile(pattern: str | re.Pattern[str] | None) -> re.Pattern[str] | None:
    if pattern is None or isinstance(pattern, re.Pattern):
        return pattern
    return re.compile(pattern)


def _int_set(values: Iterable[int]) -> frozenset[int]:
    return frozenset(int(v) for v in values)


def _bare_names(values: Iterable[str]) -> frozenset[str]:
    if isinstance(values, str):
        values = (values,)
    return frozenset(bare_name(v) for v in values)


def _check_name(_instance: object, _attribute: object, value: str) -> None:
    if not value or value != value.strip():
        raise ValueError(f"a signature needs a non-blank name without padding, got {value!r}")


def bare_name(name: str) -> str:
    """Return an exception type name without its module (how signatures match types)."""
    # "builtins.FileNotFoundError" and "FileNotFoundError" name the same class for matching.
    return name.rsplit(".", 1)[-1]


@attrs.frozen
class Signature:
    """A named failure kind.

    Attributes:
        name: The kind's name (``edit_failed``); ``error:<hash>`` for fallbacks.
        pattern: A regex searched in the error text (a string is compiled); ``None`` when
            the signature matches only by status code or exception type.
        blame: Who is to blame for this kind of failure.
        hint: What to do instead, written for an LLM: imperative, concrete, fixed text.
        label: A short human label (``edit search string not found``).
        deterministic: Identical input fails identically in an unchanged world, so one
            failure of the identical call is enough evidence.
        resource: Resource exhaustion (out of memory); the ML adapter bans larger configs.
        target_fact: The failure is a fact about the target (it does not exist), so other
            calls that need the target fail too.
        retryable: An infrastructure fault worth retrying with backoff.
        status_codes: Status codes that mean this kind when the text says nothing more.
        exception_types: Exception class names (unqualified) that mean this kind.
    """

    name: str = attrs.field(validator=_check_name)
    pattern: re.Pattern[str] | None = attrs.field(converter=_compile)
    blame: Blame = attrs.field(converter=Blame)
    hint: str
    label: str
    deterministic: bool = False
    resource: bool = False
    target_fact: bool = False
    retryable: bool = False
    status_codes: frozenset[int] = attrs.field(default=frozenset(), converter=_int_set)
    exception_types: frozenset[str] = attrs.field(default=frozenset(), converter=_bare_names)
