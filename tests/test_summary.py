"""Statistics and patterns (scarguard.summary), built from the materialised counters."""

from __future__ import annotations

import pytest

from scarguard import FailureMemory
from scarguard.testing import FakeClock


def _memory() -> FailureMemory:
    memory = FailureMemory(":memory:", clock=FakeClock())
    memory.record("edit_file", {"path": "a.py"}, ok=False, error="old_string not found")
    memory.record("edit_file", {"path": "b.py"}, ok=False, error="old_string not found")
    memory.record("read_file", {"path": "a.py"}, ok=True)
    return memory


def test_stats_count_by_tool_kind_and_blame_and_are_values() -> None:
    """Identical histories give equal, hashable stats whose tables cannot be changed."""
    first, second = _memory().stats(), _memory().stats()
    assert first.failures_by_tool == {"edit_file": 2}
    assert first.successes_by_tool == {"read_file": 1}
    assert first.failures == 2 and first.successes == 1
    assert first.failures_by_blame["agent"] == 2
    assert first == second and hash(first) == hash(second)
    with pytest.raises(TypeError):
        first.failures_by_tool["edit_file"] = 0  # type: ignore[index]
    with pytest.raises(TypeError):
        first.refusals.refused_by_tool["x"] = 1  # type: ignore[index]


def test_patterns_group_a_repeated_kind_with_its_tools_and_targets() -> None:
    """A kind seen twice is one pattern naming its tool and both targets, most frequent first."""
    (pattern,) = _memory().patterns(min_count=2)
    assert pattern.count == 2 and pattern.tools == ("edit_file",)
    assert set(pattern.targets) == {"a.py", "b.py"}
    assert pattern.label and pattern.hint
