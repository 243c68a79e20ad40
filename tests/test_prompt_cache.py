"""The guard block is cache-friendly: byte-identical until evidence changes; placements."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scarguard import ConfigurationError, FailureMemory, PromptGuard
from scarguard.prompt import END_MARKER, START_MARKER
from scarguard.testing import FakeClock

SYSTEM = "You are a careful coding agent."


@pytest.fixture
def memory(clock: FakeClock) -> FailureMemory:
    memory = FailureMemory(":memory:", project="web", clock=clock)
    for i in range(3):
        memory.record("edit_file", {"path": "app.py", "old": f"x{i}"}, error="old_string not found")
        clock.now += 5
    for page in range(2):
        memory.record("call_api", {"page": page}, error="429 Too Many Requests")
        clock.now += 5
    return memory


def _turn(guard: PromptGuard, history: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    return guard.inject(SYSTEM), guard.inject_messages(history)


@pytest.mark.parametrize("placement", ["after", "before", "message"])
def test_two_turns_a_minute_apart_give_the_same_prompt_bytes(
    memory: FailureMemory, clock: FakeClock, placement: str
) -> None:
    """With no new failure, a turn 60 s (and a day) later renders byte-identical prompts."""
    guard = PromptGuard(memory, placement=placement)
    history = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Fix it."}]
    first_text, first_messages = _turn(guard, history)
    assert START_MARKER in first_text
    clock.now += 60
    second_text, second_messages = _turn(guard, history)
    assert second_text.encode() == first_text.encode()
    assert repr(second_messages).encode() == repr(first_messages).encode()
    clock.now += 86400
    assert _turn(guard, history) == (first_text, first_messages)


def test_the_block_shows_no_relative_time(memory: FailureMemory, clock: FakeClock) -> None:
    """Patterns carry the UTC date they were last seen, never "... ago"."""
    clock.now += 3600
    block = PromptGuard(memory).block()
    assert " ago" not in block
    assert "last seen 2026-01-01" in block


def test_the_block_changes_on_new_evidence_then_is_stable_again(
    memory: FailureMemory, clock: FakeClock
) -> None:
    """A new failure changes the block once; the turns after it agree with each other."""
    guard = PromptGuard(memory)
    before = guard.block()
    memory.record("edit_file", {"path": "app.py", "old": "x9"}, error="old_string not found")
    after = guard.block()
    assert after != before and "(4x" in after
    clock.now += 60
    assert guard.block() == after


def test_after_keeps_the_system_prompt_a_stable_prefix(memory: FailureMemory) -> None:
    """placement="after" (the default) leaves the prompt's own text first, block last."""
    injected = PromptGuard(memory).inject(SYSTEM)
    assert injected.startswith(SYSTEM + "\n\n" + START_MARKER)
    assert injected.endswith(END_MARKER)
    memory.record("edit_file", {"path": "b.py", "old": "y"}, error="old_string not found")
    memory.record("edit_file", {"path": "b.py", "old": "z"}, error="old_string not found")
    again = PromptGuard(memory).inject(injected)
    assert again != injected and again.startswith(SYSTEM + "\n\n" + START_MARKER)


def test_before_puts_the_block_first(memory: FailureMemory) -> None:
    """placement="before" puts the block in front of the prompt."""
    injected = PromptGuard(memory, placement="before").inject(SYSTEM)
    assert injected.startswith(START_MARKER) and injected.endswith("\n\n" + SYSTEM)


def test_message_placement_adds_a_system_message_after_the_first(
    memory: FailureMemory,
) -> None:
    """placement="message" leaves the system message untouched and follows it."""
    history = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Fix it."},
    ]
    frozen = copy.deepcopy(history)
    guard = PromptGuard(memory, placement="message")
    injected = guard.inject_messages(history)
    assert history == frozen
    assert injected[0] == {"role": "system", "content": SYSTEM}
    assert injected[1]["role"] == "system"
    assert injected[1]["content"].startswith(START_MARKER)
    assert injected[2:] == history[1:]
    assert guard.inject_messages(injected) == injected
    memory.clear()
    assert guard.inject_messages(injected) == history


def test_message_placement_without_a_system_message_goes_first(
    memory: FailureMemory,
) -> None:
    """Without a system message, the block's message is inserted at index 0."""
    history = [{"role": "user", "content": "Fix it."}]
    injected = PromptGuard(memory, placement="message").inject_messages(history)
    assert [m["role"] for m in injected] == ["system", "user"]
    assert injected[0]["content"].startswith(START_MARKER)


def test_message_placement_moves_a_block_out_of_the_system_message(
    memory: FailureMemory,
) -> None:
    """A block injected into the system message before is moved to its own message."""
    history = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Fix it."}]
    inline = PromptGuard(memory).inject_messages(history)
    moved = PromptGuard(memory, placement="message").inject_messages(inline)
    assert moved[0] == {"role": "system", "content": SYSTEM}
    assert moved[1]["content"].startswith(START_MARKER)
    assert len(moved) == 3


def test_after_appends_a_content_part(memory: FailureMemory) -> None:
    """With content parts, placement="after" adds the block as the last part."""
    messages = [{"role": "system", "content": [{"type": "text", "text": SYSTEM}]}]
    guard = PromptGuard(memory)
    parts = guard.inject_messages(messages)[0]["content"]
    assert parts[0] == {"type": "text", "text": SYSTEM}
    assert parts[1]["text"].startswith(START_MARKER)
    assert guard.inject_messages([{"role": "system", "content": parts}])[0]["content"] == parts


def test_an_unknown_placement_is_refused(memory: FailureMemory) -> None:
    """placement must be one of the three."""
    with pytest.raises(ConfigurationError, match="placement must be one of"):
        PromptGuard(memory, placement="top")
