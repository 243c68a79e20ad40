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


@given(FAILURES, st.none() | st.integers(1, 10**9))
def test_failure_row_has_every_field_in_order(failure: Failure, id: int | None) -> None:
    """A row carries every field in declaration order; targets and arguments as JSON text."""
    stored = failure._with_id(id)
    assert stored == attrs.evolve(failure, id=id)
    row = stored.to_row()
    assert list(row) == [f.name for f in attrs.fields(Failure)]
    assert row["blame"] == failure.blame.value
    assert row["targets"] == json.dumps(list(failure.targets), separators=(",", ":"))
    assert row["args"] == json.dumps(failure.args, sort_keys=True, separators=(",", ":"))
    assert row["id"] == id


@given(FAILURES, st.none() | st.integers(1, 10**9))
def test_a_failures_row_is_its_own_after_another_was_made(
    failure: Failure, id: int | None
) -> None:
    """The row made last is handed out again (a copy), for that failure and its stored self.

    The store writes a failure's row and its receipt reads it again: the second is the
    first, with the id the store gave; a changed copy, or another failure's row made in
    between, changes nothing.
    """
    first = failure.to_row()
    first["error"] = "changed by the caller"
    assert failure.to_row() != first
    stored = failure._with_id(id)
    assert stored.to_row() == dict(failure.to_row(), id=id)
    other = attrs.evolve(failure, tool=failure.tool + "-other")
    assert other.to_row()["tool"] == failure.tool + "-other"
    assert stored.to_row()["id"] == id
    assert stored.to_row()["tool"] == failure.tool


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


NESTED = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=10,
)


def test_call_arguments_cannot_be_changed_at_any_depth() -> None:
    """The mapping of a frozen call refuses changes, and so do the dicts and lists inside it."""
    call = Call("t", {"a": 1, "opts": {"paths": ["x.py", {"deep": 1}]}})
    changes = [
        lambda: call.args.__setitem__("b", 2),
        lambda: call.args.update(b=2),
        lambda: call.args.pop("a"),
        lambda: call.args["opts"].setdefault("k", 1),
        lambda: call.args["opts"]["paths"].append("y.py"),
        lambda: call.args["opts"]["paths"].__setitem__(0, "y.py"),
        lambda: call.args["opts"]["paths"][1].clear(),
    ]
    for change in changes:
        with pytest.raises(TypeError):
            change()
    assert call.args == {"a": 1, "opts": {"paths": ["x.py", {"deep": 1}]}}
    mutable = dict(call.args)
    mutable["b"] = 2
    assert "b" not in call.args


@given(st.dictionaries(TEXT, NESTED, max_size=4))
def test_calls_hash_equal_when_equal_and_keep_their_plain_form(args: dict[str, object]) -> None:
    """Equal calls hash alike; the arguments equal the plain dict, through JSON and pickle."""
    import pickle

    call, again = Call("t", args), Call("t", json.loads(json.dumps(args)))
    assert call == again and hash(call) == hash(again)
    assert call.args == args
    assert json.loads(json.dumps(call.args)) == args
    assert pickle.loads(pickle.dumps(call)) == call
    assert {call: 1}[again] == 1


def test_calls_with_different_arguments_are_different_keys() -> None:
    """A set of calls keeps calls whose nested arguments differ apart."""
    calls = {Call("t", {"a": [1, 2]}), Call("t", {"a": [2, 1]}), Call("t", {"a": [1, 2]})}
    assert len(calls) == 2


def test_failures_constraints_and_decisions_hash() -> None:
    """Every frozen value holding mappings can be a dict key or a set member."""
    failure = Failure("t", "fp", "sig", Blame.AGENT, 1.0, args={"cfg": {"lr": [0.1]}})
    constraint = Constraint(
        ConstraintKind.DOMINANCE_BAN, "k", "s", "r", "h", Level.BLOCK, 1, 0.0, 0.0,
        params={"config": {"width": 8, "layers": [1, 2]}, "observed": {"a.py": "1"}},
    )  # fmt: skip
    decision = Decision(False, Call("t", {"a": {"b": 1}}))
    assert len({failure, failure, constraint, constraint, decision, decision}) == 3
    with pytest.raises(TypeError):
        constraint.params.config["width"] = 16  # type: ignore[index]
    with pytest.raises(TypeError):
        failure.args["cfg"]["lr"].append(0.2)


def test_rows_of_frozen_values_are_plain_json() -> None:
    """to_row writes the nested arguments as the JSON of the plain values."""
    failure = Failure("t", "fp", "sig", Blame.AGENT, 1.0, args={"b": [1, {"c": 2}], "a": 1})
    assert json.loads(failure.to_row()["args"]) == {"a": 1, "b": [1, {"c": 2}]}
    assert Failure.from_row(failure.to_row()) == failure


def test_a_described_call_is_the_call_built_field_by_field() -> None:
    """Call.described makes the value Call(...) makes: equal, same hash, frozen args."""
    args = {"path": "a.py", "n": 1}
    fast = Call.described("read_file", args, ("a.py",), "file_read", "f" * 24)
    built = Call(
        tool="read_file",
        args=args,
        targets=["a.py"],
        action_class="file_read",
        fingerprint="f" * 24,
    )
    assert fast == built and hash(fast) == hash(built) and repr(fast) == repr(built)
    assert fast.params == {} and fast.changed == ()
    with pytest.raises(TypeError):
        fast.args["path"] = "b.py"  # type: ignore[index]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        fast.tool = "other"  # type: ignore[misc]
