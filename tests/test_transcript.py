"""Failures recovered from a Claude Code transcript: read once, each recorded once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scarguard.integrations._transcript import HookState, failed_results, result_text


def use(use_id: str, name: str = "Edit", **tool_input: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "id": use_id, "name": name, "input": tool_input or {"x": 1}}
    return {"message": {"role": "assistant", "content": [block]}}


def result(use_id: str, content: Any, *, error: bool = True) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": use_id, "content": content, "is_error": error}
    return {"message": {"role": "user", "content": [block]}}


def append(path: Path, *entries: object, raw: str = "") -> None:
    with path.open("a", encoding="utf-8") as out:
        for entry in entries:
            out.write(json.dumps(entry) + "\n")
        out.write(raw)


def test_an_error_result_of_a_call_is_recovered_once(tmp_path: Path) -> None:
    """A failed result is returned with its call, tags stripped; the next read finds nothing."""
    transcript = tmp_path / "t.jsonl"
    append(
        transcript,
        use("u1", path="a.py", old_string="x"),
        result("u1", "<tool_use_error>String to replace not found</tool_use_error>"),
        use("u2", "Read"),
        result("u2", "fine", error=False),
    )
    state = HookState(tmp_path / "state.json")
    found = failed_results(state, str(transcript))
    assert found == [
        ("u1", "Edit", {"path": "a.py", "old_string": "x"}, "String to replace not found")
    ]
    assert failed_results(state, str(transcript)) == []
    assert state.accounted("u1")


def test_a_line_still_being_written_waits_for_the_next_read(tmp_path: Path) -> None:
    """Only complete lines are read; the rest is read once it ends."""
    transcript = tmp_path / "t.jsonl"
    line = json.dumps(result("u1", "boom"))
    append(transcript, use("u1"), raw=line[:10])
    state = HookState(tmp_path / "state.json")
    assert failed_results(state, str(transcript)) == []
    append(transcript, raw=line[10:] + "\n")
    assert [f[0] for f in failed_results(state, str(transcript))] == ["u1"]


def test_refusals_and_accounted_calls_are_not_failures(tmp_path: Path) -> None:
    """A person's or a hook's refusal, and a call a hook already recorded, are left out."""
    transcript = tmp_path / "t.jsonl"
    append(
        transcript,
        use("u1"),
        result("u1", "The user doesn't want to proceed with this tool use."),
        use("u2"),
        result("u2", "failed"),
    )
    state = HookState(tmp_path / "state.json")
    state.account("u2")
    assert failed_results(state, str(transcript)) == []


def test_the_state_survives_between_hook_processes(tmp_path: Path) -> None:
    """What one hook read and recorded is saved under the lock and loaded by the next."""
    transcript = tmp_path / "t.jsonl"
    append(transcript, use("u1"), result("u1", "boom"), use("u2"))
    path = tmp_path / "hooks" / "state.json"
    with HookState.locked(path) as state:
        assert len(failed_results(state, str(transcript))) == 1
    append(transcript, result("u2", "boom again"), result("u1", "boom"))
    with HookState.locked(path) as state:
        assert [f[0] for f in failed_results(state, str(transcript))] == ["u2"]


def test_a_replaced_or_missing_transcript_is_read_from_its_start(tmp_path: Path) -> None:
    """A shorter transcript than before is read again from the start; a missing one gives none."""
    state = HookState(tmp_path / "state.json")
    assert failed_results(state, str(tmp_path / "missing.jsonl")) == []
    transcript = tmp_path / "t.jsonl"
    append(transcript, use("u0"), use("u9"), result("u9", "no"))
    failed_results(state, str(transcript))
    transcript.write_text("")
    append(transcript, use("u1"), result("u1", "boom"))
    assert [f[0] for f in failed_results(state, str(transcript))] == ["u1"]


def test_result_text_reads_strings_blocks_and_mappings() -> None:
    """A result's content is a string, a list of text blocks or a mapping with text."""
    assert result_text("plain") == "plain"
    blocks = [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]
    assert result_text(blocks) == "a\nb"
    assert result_text({"error": "bad"}) == "bad"
    assert result_text(None) == ""
