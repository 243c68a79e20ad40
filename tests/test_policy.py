"""Policy (scarguard.policy): the learning thresholds as one immutable, validated value."""

from __future__ import annotations

import pytest

from scarguard import ConfigurationError, ConstraintKind, Direction, Policy


def test_policy_direction_is_an_enum_that_reads_as_its_string() -> None:
    """Policy.direction converts the strings and compares equal to them; others are refused."""
    policy = Policy(direction="maximize")
    assert policy.direction is Direction.MAXIMIZE
    assert policy.direction == "maximize" and f"{policy.direction}" == "maximize"
    assert Policy().direction is Direction.MINIMIZE
    with pytest.raises(ConfigurationError, match="direction"):
        Policy(direction="sideways")  # type: ignore[arg-type]


def test_ttl_merges_over_the_defaults_and_cannot_be_changed_afterwards() -> None:
    """A ttl entry replaces one default; the merged table is immutable and the policy hashes."""
    policy = Policy(ttl={"exact_call": 60})
    assert policy.ttl[ConstraintKind.EXACT_CALL] == 60
    assert set(policy.ttl) == set(Policy().ttl)
    with pytest.raises(TypeError):
        policy.ttl[ConstraintKind.EXACT_CALL] = 1  # type: ignore[index]
    assert hash(policy) == hash(Policy(ttl={ConstraintKind.EXACT_CALL: 60}))
    assert policy != Policy()
