"""The kind-specific data of a constraint, as one typed value.

Each rung of the ladder keeps a little data beside its reason: the counter that corroborates
it, the words of a shell command, the state tokens of what its failure depends on, the
radius cap, the banned parameter value, the dominated configuration. They are attributes of
:class:`ConstraintParams`, which also reads like the mapping it is stored as (one JSON object
per constraint in every store), so ``constraint.params["max_targets"]`` keeps working.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from scarguard._frozen import EMPTY, freeze, freeze_mapping

__all__ = ["ConstraintParams"]


def _text_tuple(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if value else ()


def _tokens(value: Mapping[str, Any] | None) -> Mapping[str, str]:
    return freeze_mapping({str(k): str(v) for k, v in value.items()} if value else None)


def _optional_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return None if value is None else freeze_mapping(value)


@attrs.frozen
class ConstraintParams(Mapping[str, Any]):
    """What a constraint keeps beside its reason.

    Attributes:
        counter: The counter that corroborates it (reset when evidence disproves it).
        deterministic: Exact call: its failure kind is deterministic for identical input.
        shell: Exact call of a shell-like command (a build, test or run command): a change
            of the workspace makes the ban stale.
        words: Shell-like call: the words of its command (a change of a file it names makes
            the ban stale, even for deterministic failures).
        observed: State tokens of what the failure depends on, by path, as the observer
            reported them when the failure was recorded; a change makes the ban stale.
        depends: The condition the failure's wording names and the observer confirmed, as
            ``(kind, subject...)`` (``("make_target", "deploy")``, ``("program", "foo")``):
            the constraint goes stale only when that condition ends (see
            :mod:`scarguard.learning.semantic`); empty for the generic dependency on
            ``observed``.
        search: Exact call of an edit: the (redacted) text it looked for; a successful
            change of the file that puts this text in makes the ban stale.
        max_targets: Radius limit: the most targets one call may touch.
        step: Radius limit: how many shrinks led to it.
        key: Parameter ban: the banned parameter.
        value: Parameter ban: the banned value.
        config: Dominance ban: the configuration that ran out of memory.
        scaling: Dominance ban: its memory-scaling parameters.
        extra: Anything else (data written by hand or by another version), kept as is.
    """

    counter: str | None = None
    deterministic: bool = False
    shell: bool = False
    words: tuple[str, ...] = attrs.field(default=(), converter=_text_tuple)
    observed: Mapping[str, str] = attrs.field(default=EMPTY, converter=_tokens)
    depends: tuple[str, ...] = attrs.field(default=(), converter=_text_tuple)
    search: str | None = None
    max_targets: int | None = None
    step: int | None = None
    key: str | None = None
    value: Any = attrs.field(default=None, converter=freeze)
    config: Mapping[str, Any] | None = attrs.field(default=None, converter=_optional_mapping)
    scaling: tuple[str, ...] = attrs.field(default=(), converter=_text_tuple)
    extra: Mapping[str, Any] = attrs.field(default=EMPTY, converter=freeze_mapping)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> ConstraintParams:
        """Build the value from its stored mapping; unknown or ill-typed entries go to ``extra``."""
        if isinstance(data, ConstraintParams):
            return data
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for name, value in (data or {}).items():
            check = _CHECKS.get(name)
            if check is not None and check(value):
                known[name] = value
            else:
                extra[name] = value
        if "value" in known and "key" not in known:
            extra["value"] = known.pop("value")
        return cls(**known, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        """Return the mapping the stores keep: the set attributes, then ``extra``."""
        data: dict[str, Any] = dict(self.extra)
        for field in _FIELDS:
            value = getattr(self, field.name)
            if field.name == "value":
                if self.key is not None:
                    data["value"] = value
            elif value != _DEFAULTS[field.name]:
                data[field.name] = (
                    dict(value)
                    if isinstance(value, Mapping)
                    else (list(value) if isinstance(value, tuple) else value)
                )
        return data

    def __getitem__(self, name: str) -> Any:
        return self.to_dict()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_texts(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)


def _is_tokens(value: Any) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


_CHECKS: dict[str, Any] = {
    "counter": lambda v: isinstance(v, str),
    "deterministic": lambda v: isinstance(v, bool),
    "shell": lambda v: isinstance(v, bool),
    "words": _is_texts,
    "observed": _is_tokens,
    "depends": _is_texts,
    "search": lambda v: isinstance(v, str),
    "max_targets": _is_int,
    "step": _is_int,
    "key": lambda v: isinstance(v, str),
    "value": lambda v: True,
    "config": lambda v: isinstance(v, Mapping),
    "scaling": _is_texts,
}
_FIELDS = [f for f in attrs.fields(ConstraintParams) if f.name != "extra"]
_DEFAULTS: dict[str, Any] = {
    "counter": None,
    "deterministic": False,
    "shell": False,
    "words": (),
    "observed": {},
    "depends": (),
    "search": None,
    "max_targets": None,
    "step": None,
    "key": None,
    "config": None,
    "scaling": (),
}
