"""The exception and warning tree: what callers can catch, and what a refusal carries."""

from __future__ import annotations

import pickle

import pytest

from scarguard.errors import (
    ConfigurationError,
    ScarguardError,
    ScarguardWarning,
    SchemaVersionError,
    StoreCorruptionWarning,
    StoreError,
    StoreFallbackWarning,
    ToolBlocked,
)
from scarguard.testing import memory_for_tests


@pytest.mark.parametrize(
    ("error", "bases"),
    [
        (ConfigurationError, (ScarguardError, ValueError)),
        (StoreError, (ScarguardError,)),
        (SchemaVersionError, (StoreError, ScarguardError)),
        (ToolBlocked, (ScarguardError,)),
        (StoreFallbackWarning, (ScarguardWarning, UserWarning)),
        (StoreCorruptionWarning, (ScarguardWarning, UserWarning)),
    ],
)
def test_the_tree_is_as_documented(error: type, bases: tuple[type, ...]) -> None:
    """Each class derives from what the module's docstring draws."""
    assert all(issubclass(error, base) for base in bases)
    assert not issubclass(ScarguardWarning, ScarguardError)


def test_a_store_error_names_its_path() -> None:
    """A store error keeps the path it is about."""
    error = SchemaVersionError("too new", path="/data/memory.db")
    assert (str(error), error.path) == ("too new", "/data/memory.db")
    assert StoreError("down").path is None


def test_tool_blocked_carries_the_decision_and_pickles_with_it() -> None:
    """The refusal's text is the decision's message; a pickled copy keeps the decision."""
    memory = memory_for_tests()
    args = {"path": "a.py", "old": "x"}
    memory.record("edit_file", args, error="old_string not found")
    decision = memory.check("edit_file", args)
    blocked = ToolBlocked(decision)
    assert str(blocked) == decision.message
    copy = pickle.loads(pickle.dumps(blocked))
    assert copy.decision == decision
    assert str(copy) == decision.message
