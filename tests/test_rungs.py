"""The rungs above the exact call: tool and target, action class, radius, ML parameters."""

from __future__ import annotations

import pytest

from helpers.engine import fail
from scarguard import ConstraintKind, FailureMemory, Level, Policy
from scarguard.adapters import MLTrainingAdapter
from scarguard.testing import FakeClock, memory_for_tests

# -- rule 2, broader rungs and rule 3 -------------------------------------------------------


def test_varying_edits_on_one_target_warn_before_block(memory: FailureMemory) -> None:
    """Different failing edits on one file give a warning, not a refusal, by default."""
    for old in ("alpha", "beta"):
        fail(
            memory,
            "edit_file",
            {"path": "app.py", "old_string": old, "new_string": "x"},
            "old_string not found",
        )
    decision = memory.check(
        "edit_file", {"path": "app.py", "old_string": "gamma", "new_string": "x"}
    )
    assert decision.allowed
    assert [w.kind for w in decision.warnings] == [ConstraintKind.TOOL_TARGET]
    assert "Caution" in decision.message


def test_tool_target_block_is_configurable(clock: FakeClock) -> None:
    """With a block threshold, the third varying failure on one target refuses the next."""
    memory = memory_for_tests(clock=clock, policy=Policy(tool_target_block=3))
    for old in ("alpha", "beta", "gamma"):
        fail(
            memory,
            "edit_file",
            {"path": "app.py", "old_string": old, "new_string": "x"},
            "old_string not found",
        )
    assert not memory.check(
        "edit_file", {"path": "app.py", "old_string": "delta", "new_string": "x"}
    ).allowed


def test_edits_failing_on_two_files_do_not_ban_editing(memory: FailureMemory) -> None:
    """Two files' failed edits never ban the edit action class (the anchor's defect)."""
    for path in ("a.py", "b.py"):
        for old in ("x", "y"):
            fail(
                memory,
                "edit_file",
                {"path": path, "old_string": old, "new_string": "z"},
                "old_string not found",
            )
    decision = memory.check("edit_file", {"path": "c.py", "old_string": "x", "new_string": "z"})
    assert decision.allowed
    assert not decision.warnings
    assert all(c.kind is not ConstraintKind.BANNED_STRATEGY for c in memory.constraints())


def test_strategy_warning_needs_three_targets_and_a_success_resets_it(
    memory: FailureMemory,
) -> None:
    """A class failing on three targets warns; one success in the class lifts the warning."""
    for path in ("a.py", "b.py", "c.py"):
        fail(
            memory,
            "edit_file",
            {"path": path, "old_string": "x", "new_string": "z"},
            "old_string not found",
        )
    decision = memory.check("edit_file", {"path": "d.py", "old_string": "x", "new_string": "z"})
    assert decision.allowed
    assert ConstraintKind.BANNED_STRATEGY in [w.kind for w in decision.warnings]
    result = memory.record(
        "edit_file", {"path": "d.py", "old_string": "ok", "new_string": "z"}, ok=True
    )
    assert ConstraintKind.BANNED_STRATEGY in [c.kind for c in result.lifted]
    assert not memory.check(
        "edit_file", {"path": "e.py", "old_string": "x", "new_string": "z"}
    ).warnings


def test_action_class_is_never_blocked_by_default(memory: FailureMemory) -> None:
    """Even ten targets of failed edits leave editing allowed (a warning only) by default."""
    for i in range(10):
        fail(
            memory,
            "edit_file",
            {"path": f"f{i}.py", "old_string": "x", "new_string": "z"},
            "old_string not found",
        )
    assert memory.check(
        "edit_file", {"path": "new.py", "old_string": "q", "new_string": "z"}
    ).allowed


def test_warn_level_rules_report_level(memory: FailureMemory) -> None:
    """Constraints carry their level, so users can tell warnings from refusals."""
    for old in ("a", "b"):
        fail(memory, "edit_file", {"path": "x.py", "old_string": old}, "old_string not found")
    levels = {c.kind: c.level for c in memory.constraints()}
    assert levels[ConstraintKind.TOOL_TARGET] is Level.WARN
    assert levels[ConstraintKind.EXACT_CALL] is Level.BLOCK


def test_separator_inside_names_cannot_merge_two_counters(memory: FailureMemory) -> None:
    """A tool or path containing the key separator keeps its own failure count."""
    fail(memory, "t\x1fa", {"path": "b", "old_string": "x"}, "old_string not found")
    fail(memory, "t", {"path": "a\x1fb", "old_string": "y"}, "old_string not found")
    decision = memory.check("t", {"path": "a\x1fb", "old_string": "z"})
    assert not decision.warnings


# -- rule 6: ML parameter and dominance bans ------------------------------------------------


@pytest.fixture
def ml(clock: FakeClock) -> FailureMemory:
    return memory_for_tests(clock=clock, adapters={"train": MLTrainingAdapter()})


def test_oom_bans_every_larger_batch_not_smaller(ml: FailureMemory) -> None:
    """Two OOMs at batch 32: batch 16 runs, batch 64 is refused (a dominance ban)."""
    base = {"batch_size": 32, "lr": 0.001, "n_layer": 6}
    for _ in range(2):
        fail(
            ml,
            "train",
            base,
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        )
    assert ml.check("train", {**base, "batch_size": 16}).allowed
    decision = ml.check("train", {**base, "batch_size": 64})
    assert not decision.allowed
    assert decision.violations[0].kind is ConstraintKind.DOMINANCE_BAN
    assert ml.check("train", {**base, "batch_size": 64, "lr": 0.0005}).allowed


def test_oom_dominance_covers_every_scaling_parameter(ml: FailureMemory) -> None:
    """A config larger in depth and batch is refused; one smaller in any scaling key is not."""
    base = {"batch_size": 32, "n_layer": 6, "lr": 0.001}
    fail(ml, "train", base, "CUDA out of memory")
    assert not ml.check("train", {**base, "batch_size": 48, "n_layer": 8}).allowed
    assert ml.check("train", {**base, "batch_size": 48, "n_layer": 4}).allowed


def test_parameter_ban_bans_the_key_that_changed(ml: FailureMemory) -> None:
    """Raising lr to 0.1 diverged twice: lr=0.1 is refused, the other params are not banned."""
    base = {"batch_size": 16, "lr": 0.001}
    ml.record("train", base, ok=True, score=2.0)
    for seed in (1, 2):
        fail(ml, "train", {**base, "lr": 0.1, "seed": seed}, "Loss is NaN at step 120")
        ml.record("train", base, ok=True, score=2.0)
    decision = ml.check("train", {"batch_size": 8, "lr": 0.1})
    assert not decision.allowed
    assert decision.violations[0].kind is ConstraintKind.PARAMETER_BAN
    assert decision.violations[0].constraint.params["key"] == "lr"
    assert ml.check("train", {"batch_size": 8, "lr": 0.01}).allowed


# -- rule 7: radius -------------------------------------------------------------------------


def test_radius_shrinks_one_step_per_corroborated_multi_target_failure(clock: FakeClock) -> None:
    """Each corroborated multi-target failure tightens the cap one curve step."""
    memory = memory_for_tests(clock=clock, policy=Policy(radius_curve=(float("inf"), 5, 3, 1)))
    files = [f"f{i}.py" for i in range(6)]
    for i in range(2):
        fail(memory, "multi_edit", {"paths": files, "patch": f"p{i}"}, "old_string not found")
    (radius,) = memory.constraints(kind=ConstraintKind.RADIUS_LIMIT)
    assert radius.params["max_targets"] == 5
    fail(memory, "multi_edit", {"paths": files, "patch": "p3"}, "old_string not found")
    (radius,) = memory.constraints(kind=ConstraintKind.RADIUS_LIMIT)
    assert radius.params["max_targets"] == 3
    assert not memory.check("multi_edit", {"paths": files[:4], "patch": "q"}).allowed
    assert memory.check("multi_edit", {"paths": files[:3], "patch": "q"}).allowed


def test_missing_targets_teach_no_radius_limit(memory: FailureMemory) -> None:
    """Multi-target calls that fail because a target is missing do not cap every call's targets."""
    for i in range(4):
        fail(memory, "read_file", {"paths": [f"gone{i}.py", "ok.py"]}, "FileNotFoundError: gone")
    assert memory.constraints(kind=ConstraintKind.RADIUS_LIMIT) == []
    assert memory.check("read_file", {"paths": [f"f{i}.py" for i in range(6)]}).allowed
