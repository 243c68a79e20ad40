"""The key grammar: every counter and constraint key the learning rules write."""

from __future__ import annotations

import pytest

from scarguard.learning import keys
from scarguard.model import Call

CALL = Call("edit_file", {"path": "a.py"}, ("a.py",), "file_edit", "fp1")


def test_key_part_escapes_only_the_separator() -> None:
    """A name holding the separator is escaped; any other name is kept as it is."""
    assert keys.key_part("edit:file") == "edit:file"
    assert keys.key_part(f"a{keys.SEP}b") == "a\\x1fb"
    assert keys.SEP not in keys.key_part(f"a{keys.SEP}b")


def test_names_holding_the_separator_cannot_merge_two_counters() -> None:
    """A tool and a target that would join into one string still make two keys."""
    one = keys.tool_target_counter(f"t{keys.SEP}x", "y", "sig")
    two = keys.tool_target_counter("t", f"x{keys.SEP}y", "sig")
    assert one != two
    assert keys.tool_target_key(f"t{keys.SEP}x", "y", "sig") != keys.tool_target_key(
        "t", f"x{keys.SEP}y", "sig"
    )


def test_exact_counters_of_a_call_share_its_prefix() -> None:
    """Every signature's exact counter of a call starts with the call's exact prefix."""
    prefix = keys.exact_prefix(CALL)
    for signature in ("edit_failed", "error:abc"):
        counter = keys.exact_counter(CALL, signature)
        assert counter.startswith(prefix)
        assert counter.endswith(signature)
    assert prefix.startswith("x:file_edit")
    assert "fp1" in prefix


def test_a_call_without_class_has_a_placeholder_class() -> None:
    """A call with no action class still has a well-formed exact prefix."""
    bare = Call("t", fingerprint="fp2")
    assert keys.exact_prefix(bare) == f"x:-{keys.SEP}fp2:"


def test_same_state_counter_is_outside_the_exact_prefix() -> None:
    """A success resets the exact prefix; the same-state counter is not under it."""
    counter = keys.same_state_counter(CALL, "edit_failed", "d1")
    assert not counter.startswith(keys.exact_prefix(CALL))
    assert counter != keys.same_state_counter(CALL, "edit_failed", "d2")


def test_totals_cover_signature_tool_blame_and_tool() -> None:
    """A failure bumps four totals, one per grouping, the per-tool one under its prefix."""
    total = keys.totals("edit_failed", "edit_file", "agent")
    assert total[0] == "s:edit_failed"
    assert total[1].startswith(keys.signature_tools_prefix("edit_failed"))
    assert total[2] == "b:agent"
    assert total[3] == "ft:edit_file"
    assert len(set(total)) == 4


def test_class_prefixes_cover_the_strategy_counters() -> None:
    """A success resets the class prefixes, and they prefix both strategy counters."""
    target, targets = keys.class_prefixes("file_edit")
    assert keys.class_target_counter("file_edit", "edit_failed", "a.py").startswith(target)
    assert keys.class_targets_counter("file_edit", "edit_failed").startswith(targets)
    assert not keys.class_target_counter("file_editor", "edit_failed", "a.py").startswith(target)


@pytest.mark.parametrize(
    ("key", "prefix"),
    [
        (keys.missing_key("a.py"), "missing:"),
        (keys.exact_key("fp", "sig"), "exact:"),
        (keys.tool_target_key("t", "a.py", "sig"), "tool_target:"),
        (keys.strategy_key("file_edit", "sig"), "strategy:"),
        (keys.dominance_key("train", "fp"), "dominance:"),
        (keys.parameter_key("train", "lr", "0.1"), "parameter:"),
    ],
)
def test_constraint_keys_are_named_by_their_kind(key: str, prefix: str) -> None:
    """Each constraint key starts with the name of its kind."""
    assert key.startswith(prefix)


def test_parameter_keys_tell_values_apart() -> None:
    """Two canonical values of one parameter make two counters and two bans."""
    assert keys.parameter_key("train", "lr", "0.1") != keys.parameter_key("train", "lr", "0.2")
    assert keys.parameter_counter("train", "lr", "0.1", "oom") != keys.parameter_counter(
        "train", "lr", "0.1", "nan_loss"
    )
    assert keys.dominance_counter("train", "fp") != keys.dominance_key("train", "fp")


def test_radius_keys_are_distinct() -> None:
    """The radius curve's counters and its constraint key are three different keys."""
    assert len({keys.radius_counter("sig"), keys.RADIUS_STEP, keys.RADIUS_KEY}) == 3
