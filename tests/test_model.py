"""The value classes and their one serialiser (to_row/from_row), shared by every store."""

from __future__ import annotations

import json

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scarguard import Blame, Constraint, ConstraintKind, Decision, Failure, Level
from scarguard.model import Call

TEXT = st.text(max_size=30)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | TEXT
    | st.floats(allow_nan=False, allow_infinity=False)
)

FAILURES = st.builds(
    Failure,
    tool=TEXT.filter(bool),
    fingerprint=TEXT,
    signature=TEXT,
    blame=st.sampled_from(Blame),
    at=st.floats(min_value=0, max_value=4e9),
    session=TEXT,
    action_class=st.none() | TEXT,
    targets=st.lists(TEXT, max_size=3).map(tuple),
    args=st.dictionaries(TEXT, SCALARS, max_size=4),
    error=st.none() | TEXT,
    status_code=st.none() | st.integers(100, 599),
    duration_ms=st.none() | st.floats(0, 1e6),
)

CONSTRAINTS = st.builds(
    Constraint,
    kind=st.sampled_from(ConstraintKind),
    key=TEXT.filter(bool),
    signature=TEXT,
    reason=TEXT,
    hint=TEXT,
    level=st.sampled_from(Level),
    occurrences=st.integers(1, 1000),
    created_at=st.floats(0, 4e9),
    updated_at=st.floats(0, 4e9),
    expires_at=st.none() | st.floats(0, 4e9),
    tool=st.none() | TEXT,
    target=st.none() | TEXT,
    params=st.dictionaries(TEXT, SCALARS, max_size=4),
)


@given(FAILURES)
def test_failure_round_trips_through_a_json_row(failure: Failure) -> None:
    """A failure written as a row, through JSON, reads back equal."""
    row = json.loads(json.dumps(failure.to_row()))
    assert Failure.from_row(row) == failure


@given(CONSTRAINTS)
def test_constraint_round_trips_through_a_json_row(constraint: Constraint) -> None:
    """A constraint written as a row, through JSON, reads back equal, with the same id."""
    back = Constraint.from_row(json.loads(json.dumps(constraint.to_row())))
    assert back == constraint
    assert back.id == constraint.id


def test_values_are_frozen() -> None:
    """Values cannot be changed after construction."""
    call = Call("t", {"a": 1})
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        call.tool = "u"  # type: ignore[misc]


def test_call_copies_its_arguments() -> None:
    """Mutating the caller's dict afterwards does not change the recorded call."""
    args = {"path": "a.py"}
    call = Call("read_file", args)
    args["path"] = "b.py"
    assert call.args["path"] == "a.py"


def test_decision_is_truthy_when_allowed() -> None:
    """`if decision:` reads as `if decision.allowed:`."""
    assert Decision(True, Call("t"))
    assert not Decision(False, Call("t"))


def test_constraint_activity_follows_expiry() -> None:
    """A constraint is active before its expiry and not after it."""
    c = Constraint(ConstraintKind.EXACT_CALL, "k", "s", "r", "h", Level.BLOCK, 1, 0.0, 0.0, 10.0)
    assert c.active(9.9) and not c.active(10.0)


def test_constraint_params_are_typed_and_read_as_a_mapping() -> None:
    """Known entries become typed attributes; ill-typed or unknown ones are kept in extra."""
    from scarguard.model import ConstraintParams

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
