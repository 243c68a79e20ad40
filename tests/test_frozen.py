"""Immutable, hashable mappings and lists (scarguard._frozen): what the frozen values hold."""

from __future__ import annotations

import collections
import copy
import json
import pickle

import pytest

from scarguard._frozen import FrozenDict, FrozenList, freeze, freeze_mapping


def test_freeze_turns_every_container_immutable_and_keeps_equality() -> None:
    """Dicts, lists, tuples and sets inside a value become immutable and still compare equal."""
    value = {"a": [1, {"b": {2, 3}}], "t": (1, [2]), "raw": bytearray(b"x")}
    frozen = freeze(value)
    assert type(frozen) is FrozenDict and frozen == {**value, "raw": b"x"}
    assert type(frozen["a"]) is FrozenList and type(frozen["a"][1]["b"]) is frozenset
    assert frozen["t"] == (1, [2]) and type(frozen["t"][1]) is FrozenList
    assert frozen["raw"] == b"x" and type(frozen["raw"]) is bytes


def test_freeze_keeps_named_tuples_and_objects() -> None:
    """A named tuple keeps its type with frozen items; an object is kept as given."""
    Point = collections.namedtuple("Point", "x y")
    marker = object()
    frozen = freeze({"p": Point([1], 2), "o": marker})
    assert type(frozen["p"]) is Point and type(frozen["p"].x) is FrozenList
    assert frozen["o"] is marker


def test_already_frozen_values_are_not_copied() -> None:
    """Freezing a frozen value (attrs.evolve, a stored call read back) returns it as is."""
    frozen = freeze_mapping({"a": [1]})
    assert freeze_mapping(frozen) is frozen and freeze(frozen) is frozen
    assert freeze_mapping(None) == {} and freeze_mapping([("a", 1)]) == {"a": 1}
    flat = {"a": 1, "b": "x"}
    copied = freeze_mapping(flat)
    flat["a"] = 2
    assert copied == {"a": 1, "b": "x"}


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.__setitem__("k", 1),
        lambda d: d.__delitem__("a"),
        lambda d: d.clear(),
        lambda d: d.pop("a"),
        lambda d: d.popitem(),
        lambda d: d.setdefault("k", 1),
        lambda d: d.update(k=1),
        lambda d: d.__ior__({"k": 1}),
    ],
)
def test_a_frozen_dict_refuses_every_change(change: object) -> None:
    """Each mutating method of dict raises TypeError and leaves the contents unchanged."""
    frozen = FrozenDict({"a": 1})
    with pytest.raises(TypeError, match="immutable"):
        change(frozen)  # type: ignore[operator]
    assert frozen == {"a": 1}


@pytest.mark.parametrize(
    "change",
    [
        lambda v: v.__setitem__(0, 9),
        lambda v: v.__delitem__(0),
        lambda v: v.append(9),
        lambda v: v.extend([9]),
        lambda v: v.insert(0, 9),
        lambda v: v.pop(),
        lambda v: v.remove(1),
        lambda v: v.clear(),
        lambda v: v.sort(),
        lambda v: v.reverse(),
        lambda v: v.__iadd__([9]),
        lambda v: v.__imul__(2),
    ],
)
def test_a_frozen_list_refuses_every_change(change: object) -> None:
    """Each mutating method of list raises TypeError and leaves the contents unchanged."""
    frozen = FrozenList([2, 1])
    with pytest.raises(TypeError, match="immutable"):
        change(frozen)  # type: ignore[operator]
    assert frozen == [2, 1]


def test_operators_that_build_new_values_give_plain_ones() -> None:
    """`|`, `+` and copy() build a new, mutable value; the frozen one is untouched."""
    d, v = FrozenDict({"a": 1}), FrozenList([1])
    merged, joined = d | {"b": 2}, v + [2]  # noqa: RUF005 (the operator is what is tested)
    merged["c"] = 3
    joined.append(3)
    assert merged == {"a": 1, "b": 2, "c": 3} and joined == [1, 2, 3]
    assert d == {"a": 1} and v == [1]


def test_hash_follows_equality() -> None:
    """Equal contents hash alike (1 and 1.0 too, as Python's own hash does); order of keys
    does not count, order of list items does."""
    assert hash(freeze({"a": 1, "b": [1, 2]})) == hash(freeze({"b": [1.0, 2], "a": True}))
    assert freeze({"a": [1, 2]}) != freeze({"a": [2, 1]})
    assert len({freeze({"a": [1, 2]}), freeze({"a": [2, 1]}), freeze({"a": [1, 2]})}) == 2


def test_unhashable_objects_inside_still_hash() -> None:
    """An unhashable object the agent passed does not make the mapping unhashable."""

    class Bag:
        __hash__ = None  # type: ignore[assignment]

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Bag)

    assert hash(freeze({"x": Bag()})) == hash(freeze({"x": Bag()}))
    assert hash(FrozenList([Bag()])) == hash(FrozenList([Bag()]))


def test_json_pickle_and_copy_keep_the_frozen_form() -> None:
    """JSON writes the plain form; pickle and deepcopy give back frozen, equal values."""
    frozen = freeze({"b": [1, {"c": None}], "a": "x"})
    assert json.dumps(frozen, sort_keys=True) == '{"a": "x", "b": [1, {"c": null}]}'
    for again in (pickle.loads(pickle.dumps(frozen)), copy.deepcopy(frozen), copy.copy(frozen)):
        assert again == frozen and type(again) is FrozenDict
        assert type(again["b"]) is FrozenList and type(again["b"][1]) is FrozenDict
    assert dict(**frozen) == {"a": "x", "b": [1, {"c": None}]}


def test_self_referencing_and_very_deep_values_are_kept_as_given() -> None:
    """A container holding itself, or nested past MAX_DEPTH, is kept as is: freezing and
    hashing never fail on what an agent may pass."""
    from scarguard._frozen import MAX_DEPTH

    loop: dict[str, object] = {"n": 1}
    loop["self"] = loop
    frozen = freeze(loop)
    assert type(frozen) is FrozenDict and frozen["self"] is loop and frozen["n"] == 1
    assert isinstance(hash(frozen), int)
    deep: list[object] = []
    node = deep
    for _ in range(MAX_DEPTH + 10):
        node.append([])
        node = node[0]  # type: ignore[assignment]
    top = freeze(deep)
    level = top
    for _ in range(MAX_DEPTH):
        assert type(level) is FrozenList
        level = level[0]
    assert type(level) is list
    assert isinstance(hash(top), int)
