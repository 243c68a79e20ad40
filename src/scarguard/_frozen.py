"""Immutable, hashable mappings and lists for the frozen value classes.

A :class:`~scarguard.model.Call` holds the agent's arguments: mappings and lists nested in
any way. :func:`freeze` copies them once into :class:`FrozenDict` and :class:`FrozenList`,
subclasses of ``dict`` and ``list`` whose mutating methods raise :class:`TypeError`. Being
subclasses, they compare equal to plain dicts and lists, encode with :mod:`json` as they
are, and unpack with ``**``; unlike ``types.MappingProxyType`` they pickle and hash.

The hash is Python's own over the contents (so ``1`` and ``1.0`` hash alike, as they compare
equal), computed on first use and kept: construction stays a copy, O(size of the value), with
no JSON encoding. A value that is neither a container nor hashable (an object the agent
passed) is kept as given and counts as a constant in the hash, which keeps equal values
hashing alike.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, NoReturn

__all__ = ["EMPTY", "MAX_DEPTH", "FrozenDict", "FrozenList", "freeze", "freeze_mapping"]

_ATOMS = frozenset({str, int, float, bool, type(None), bytes})


def _refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(f"{type(self).__name__} is immutable")


def _leaf_hash(value: object) -> int:
    try:
        return hash(value)
    except TypeError:  # an unhashable object the agent passed: equal values still hash alike
        return 0


def _keep_hash(
    frozen: FrozenDict | FrozenList,
    collect: Callable[[Iterable[Any]], Hashable],
    items: Iterable[Any],
    leaf: Callable[[Any], Hashable],
) -> int:
    """Hash ``collect(items)`` (unhashable leaves through ``leaf``) and keep it on ``frozen``."""
    try:
        value = hash(collect(items))
    except TypeError:
        value = hash(collect(leaf(item) for item in items))
    object.__setattr__(frozen, "_hash", value)
    return value


class FrozenDict(dict[Any, Any]):
    """A ``dict`` that refuses changes and hashes by its items."""

    __slots__ = ("_hash",)
    _hash: int

    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        try:
            return self._hash
        except AttributeError:
            return _keep_hash(self, frozenset, self.items(), lambda kv: (kv[0], _leaf_hash(kv[1])))

    def __reduce__(self) -> tuple[type[FrozenDict], tuple[dict[Any, Any]]]:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return self


class FrozenList(list[Any]):
    """A ``list`` that refuses changes and hashes like the tuple of its items."""

    __slots__ = ("_hash",)
    _hash: int

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = clear = extend = insert = pop = remove = reverse = sort = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        try:
            return self._hash
        except AttributeError:
            return _keep_hash(self, tuple, self, _leaf_hash)

    def __reduce__(self) -> tuple[type[FrozenList], tuple[list[Any]]]:
        return (FrozenList, (list(self),))

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenList:
        return self


EMPTY = FrozenDict()
"""The empty frozen mapping (one object: the default of every empty field)."""


def freeze(value: Any) -> Any:
    """Return ``value`` with every mapping, list, tuple and set in it made immutable.

    Mappings become :class:`FrozenDict`, lists :class:`FrozenList`, sets ``frozenset``;
    tuples keep their type with their items frozen. Scalars and other objects are returned
    as they are; so is a value that is already frozen, and (kept as given, never a reason
    to fail) a container that contains itself or lies deeper than :data:`MAX_DEPTH`.
    """
    kind = type(value)
    if kind in _ATOMS or kind is FrozenDict or kind is FrozenList:
        return value
    return _Freezer().freeze(value, 0)


MAX_DEPTH = 64
"""Containers nested deeper than this are kept as given."""


class _Freezer:
    """One deep copy, with the containers on the current path (a container may hold itself)."""

    __slots__ = ("active",)

    def __init__(self) -> None:
        self.active: set[int] = set()

    def freeze(self, value: Any, depth: int) -> Any:
        kind = type(value)
        if kind in _ATOMS or kind is FrozenDict or kind is FrozenList or kind is frozenset:
            return value
        if kind is bytearray:
            return bytes(value)
        key = id(value)
        if key in self.active or depth >= MAX_DEPTH:
            return value
        self.active.add(key)
        try:
            return self._container(value, kind, depth + 1)
        finally:
            self.active.discard(key)

    def _container(self, value: Any, kind: type[Any], depth: int) -> Any:
        atoms, freeze = _ATOMS, self.freeze
        if kind is dict:
            return FrozenDict(
                {k: v if type(v) in atoms else freeze(v, depth) for k, v in value.items()}
            )
        if kind is list:
            return FrozenList([v if type(v) in atoms else freeze(v, depth) for v in value])
        if isinstance(value, Mapping):
            return FrozenDict({k: freeze(v, depth) for k, v in value.items()})
        if isinstance(value, list):
            return FrozenList([freeze(v, depth) for v in value])
        if isinstance(value, tuple):
            items = [freeze(v, depth) for v in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return kind(*items) if hasattr(value, "_fields") else tuple(items)
        if isinstance(value, set):
            return frozenset(value)
        return value


def freeze_mapping(value: Mapping[Any, Any] | Iterable[tuple[Any, Any]] | None) -> FrozenDict:
    """Return ``value`` as a :class:`FrozenDict` (deeply frozen); ``None`` gives an empty one.

    Flat mappings of scalars (most tool arguments) are copied in one step.
    """
    kind = type(value)
    if kind is FrozenDict:
        return value  # type: ignore[return-value]
    if not value:
        return EMPTY
    if kind is not dict and not isinstance(value, Mapping):
        value = dict(value)
    atoms = _ATOMS
    for item in value.values():  # type: ignore[union-attr]
        if type(item) not in atoms:
            return _Freezer().freeze(value, 0)  # type: ignore[no-any-return]
    return FrozenDict(value)
