"""What the value classes of :mod:`scarguard.model` build their fields with.

The converters that make what a value holds storable and comparable (texts made storable,
tuples of strings, finite scores), and the ``str`` enum that prints as its value.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from typing import Any

from scarguard._constraint_params import ConstraintParams
from scarguard.canonical import storable_text

__all__ = [
    "TextEnum",
    "as_opt_text",
    "as_params",
    "as_str_tuple",
    "as_text",
    "as_text_tuple",
    "finite_or_none",
]


class TextEnum(str, enum.Enum):
    """A ``str`` enum that prints and formats as its value (as ``enum.StrEnum`` does)."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return format(str.__str__(self), spec)


def as_params(value: Mapping[str, Any] | None) -> ConstraintParams:
    """A constraint's parameters from a mapping (``None``: none)."""
    return ConstraintParams.from_mapping(value)


def as_str_tuple(value: Any) -> tuple[str, ...]:
    """A tuple of strings from ``None``, one string or an iterable of values."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def as_text(value: str) -> str:
    """A text made storable (:func:`~scarguard.canonical.storable_text`)."""
    return storable_text(value) if isinstance(value, str) else value


def as_opt_text(value: str | None) -> str | None:
    """:func:`as_text`, keeping ``None``."""
    return storable_text(value) if isinstance(value, str) else value


def as_text_tuple(value: Any) -> tuple[str, ...]:
    """:func:`as_str_tuple` of storable texts."""
    return tuple(storable_text(v) for v in as_str_tuple(value))


def finite_or_none(value: float | None) -> float | None:
    """A finite float, or ``None`` for ``None``, NaN and the infinities."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None
