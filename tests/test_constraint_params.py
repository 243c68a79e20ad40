"""ConstraintParams (scarguard._constraint_params): typed constraint data, stored as a mapping."""

from __future__ import annotations

import json

import pytest

from scarguard._constraint_params import ConstraintParams


def test_constraint_params_are_typed_and_read_as_a_mapping() -> None:
    """Known entries become typed attributes; ill-typed or unknown ones are kept in extra."""
    params = ConstraintParams.from_mapping(
        {"counter": "x:1", "max_targets": 3, "observed": {"a.py": "-"}, "counter2": 1, "step": "2"}
    )
    assert params.counter == "x:1" and params.max_targets == 3
    assert params.observed == {"a.py": "-"}
    assert params.extra == {"counter2": 1, "step": "2"}
    assert params["max_targets"] == 3 and dict(params)["counter2"] == 1
    assert ConstraintParams.from_mapping(params.to_dict()) == params
    ban = ConstraintParams.from_mapping({"key": "lr", "value": None})
    assert ban.key == "lr" and "value" in ban.to_dict()


@pytest.mark.parametrize(
    ("entry", "value"),
    [
        ("deterministic", "yes"),
        ("shell", 1),
        ("words", "make all"),
        ("words", ["make", 3]),
        ("observed", {"a.py": 1}),
        ("max_targets", True),
        ("max_targets", 2.0),
        ("config", ["lr"]),
        ("scaling", [1, 2]),
    ],
)
def test_an_ill_typed_entry_is_kept_in_extra_as_written(entry: str, value: object) -> None:
    """Data written by hand or by another version never raises: it stays, untyped, in extra."""
    params = ConstraintParams.from_mapping({entry: value})
    assert params.extra == {entry: value}
    assert params.to_dict() == {entry: value}


def test_a_value_without_its_key_is_extra() -> None:
    """A banned value means something only beside the banned parameter."""
    params = ConstraintParams.from_mapping({"value": 0.1})
    assert params.key is None and params.value is None and params.extra == {"value": 0.1}
    assert params.to_dict() == {"value": 0.1}


def test_the_stored_mapping_holds_only_what_is_set() -> None:
    """Defaults are left out; tuples are written as lists, so the row is plain JSON."""
    assert ConstraintParams().to_dict() == {} and len(ConstraintParams()) == 0
    params = ConstraintParams(shell=True, words=("make", "all"), scaling=("width",))
    assert params.to_dict() == {"shell": True, "words": ["make", "all"], "scaling": ["width"]}
    assert json.loads(json.dumps(params.to_dict())) == params.to_dict()
    assert sorted(params) == ["scaling", "shell", "words"]


def test_params_are_immutable_and_hashable_with_their_nested_data() -> None:
    """The dominated configuration, the state tokens and extra data are frozen too."""
    params = ConstraintParams.from_mapping(
        {"config": {"width": 8, "layers": [1, 2]}, "observed": {"a.py": "1"}, "x": {"y": [1]}}
    )
    for change in (
        lambda: params.config.__setitem__("width", 16),  # type: ignore[union-attr]
        lambda: params.config["layers"].append(3),  # type: ignore[index]
        lambda: params.observed.__setitem__("b.py", "2"),
        lambda: params.extra["x"]["y"].append(2),
    ):
        with pytest.raises(TypeError):
            change()
    again = ConstraintParams.from_mapping(json.loads(json.dumps(params.to_dict())))
    assert again == params and hash(again) == hash(params)
