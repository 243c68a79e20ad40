"""What ``guarded_tool`` was told, validated once at decoration time by attrs validators."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from scarguard.errors import ConfigurationError
from scarguard.guard.failure_checks import FailurePredicate
from scarguard.guard.retrying import Retry, as_retry

__all__ = ["MEMORY_UNAVAILABLE", "GuardOptions", "TargetsOption"]

MEMORY_UNAVAILABLE = (
    "scarguard refused this {tool} call: the failure memory that guards it is unavailable and"
    " the tool is configured to fail closed. The call was not run. Retrying will not help until"
    " the memory is back; tell the operator."
)
"""The message of a call refused with ``fail_closed=True`` because the memory failed."""

TargetsOption = Callable[[Mapping[str, Any]], Sequence[str]] | tuple[str, ...] | None
_ON_BLOCK = ("raise", "return")
_WARNINGS = (None, "append")


def _name(instance: GuardOptions, attribute: attrs.Attribute[str], value: object) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(f"name must be a non-empty string, got {value!r}")


def _targets(instance: GuardOptions, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None or callable(value):
        return
    if not isinstance(value, tuple) or not all(isinstance(n, str) for n in value):
        raise ConfigurationError(
            f"targets= takes argument names or a callable(bound_args) -> targets, got {value!r}"
        )


def _one_of(choices: tuple[object, ...]) -> Callable[[Any, attrs.Attribute[Any], object], None]:
    def check(instance: Any, attribute: attrs.Attribute[Any], value: object) -> None:
        if value not in choices:
            shown = " or ".join(repr(c) for c in choices)
            raise ConfigurationError(f"{attribute.name} must be {shown}, got {value!r}")

    return check


def _callable_or_none(instance: Any, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and not callable(value):
        raise ConfigurationError(f"{attribute.name} must be callable, got {value!r}")


def _names(value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ConfigurationError(f"ignore_args must be a sequence of names, got {value!r}")
    if not all(isinstance(n, str) for n in value):
        raise ConfigurationError(f"ignore_args must be a sequence of names, got {value!r}")
    return tuple(value)


def _string_or_none(instance: Any, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise ConfigurationError(f"{attribute.name} must be a string, got {value!r}")


@attrs.frozen
class GuardOptions:
    """Everything ``guarded_tool`` was told, validated (see its docstring).

    Raises:
        ConfigurationError: An option is invalid.
    """

    name: str = attrs.field(validator=_name)
    targets: TargetsOption = attrs.field(default=None, validator=_targets)
    on_block: str = attrs.field(default="raise", validator=_one_of(_ON_BLOCK))
    failure_when: FailurePredicate | None = attrs.field(default=None, validator=_callable_or_none)
    retry: Retry | None = attrs.field(default=None, converter=as_retry)
    fail_closed: bool = attrs.field(default=False, converter=bool)
    ignore_args: tuple[str, ...] = attrs.field(default=(), converter=_names)
    agent: str | None = attrs.field(default=None, validator=_string_or_none)
    provider: str | None = attrs.field(default=None, validator=_string_or_none)
    warnings: str | None = attrs.field(default=None, validator=_one_of(_WARNINGS))
    enforce: bool | None = attrs.field(default=None, validator=_one_of((None, True, False)))
