"""FailureMemory itself: bad input, secrets, incidents, tenants, threads, pending successes.

What the memory learns and lifts is tested with the modules that do it (``test_rules``,
``test_lifting``, ``test_convergence``, ``test_messages``, ``test_maintenance``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from helpers.engine import EDIT, fail
from scarguard import (
    ConfigurationError,
    FailureMemory,
    Policy,
)
from scarguard.testing import FakeClock, memory_for_tests

# -- bad input ----------------------------------------------------------------------------------


class Opaque:
    def __init__(self) -> None:
        self._secret = object()


WEIRD_ARGS = {
    "obj": Opaque(),
    "raw": b"\x00\xff" * 10,
    "tags": {"b", "a", "c"},
    "huge": "x" * 10_000_000,
    "nested": [[[[[[[[[["deep"]]]]]]]]]],
}


def test_non_json_arguments_are_fingerprinted_deterministically(memory: FailureMemory) -> None:
    """Objects, bytes, sets and huge strings fingerprint the same every time, without crashing."""
    first = memory.describe("tool", WEIRD_ARGS).fingerprint
    assert memory.describe("tool", dict(WEIRD_ARGS)).fingerprint == first
    result = fail(memory, "tool", WEIRD_ARGS, "exit code 3")
    assert result.failure is not None
    assert len(json.dumps(result.failure.args)) < 10_000


@pytest.mark.slow
def test_fingerprints_are_stable_across_processes(memory: FailureMemory) -> None:
    """A fresh interpreter computes the same fingerprint (no hash randomisation)."""
    args = {"path": "a.py", "tags": {"x", "y"}, "n": 3}
    code = (
        "from scarguard.testing import memory_for_tests;"
        "args = {'path': 'a.py', 'tags': {'x', 'y'}, 'n': 3};"
        "print(memory_for_tests().describe('t', args).fingerprint)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == memory.describe("t", args).fingerprint


@pytest.mark.parametrize(
    "options",
    [
        {"corroboration": 0},
        {"corroboration": "2"},
        {"direction": "up"},
        {"radius_curve": ()},
        {"radius_curve": (1, 3)},
        {"ttl": {"exact_call": -1}},
        {"ttl": {"no_such_kind": 10}},
        {"plateau_tolerance": -0.1},
        {"tool_target_warn": 3, "tool_target_block": 2},
    ],
)
def test_invalid_policy_values_raise_at_construction(options: dict[str, object]) -> None:
    """Every invalid threshold is a ConfigurationError naming the field."""
    with pytest.raises(ConfigurationError):
        Policy(**options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda m: m.check("", {}), "tool"),
        (lambda m: m.check("t", ["not", "a", "mapping"]), "mapping"),
        (lambda m: m.record(42, {}), "tool"),
    ],
)
def test_bad_call_input_is_a_clear_error(memory: FailureMemory, call, match: str) -> None:
    """A bad tool name or argument shape raises ConfigurationError naming the problem."""
    with pytest.raises(ConfigurationError, match=match):
        call(memory)


def test_invalid_memory_options_raise() -> None:
    """Empty tenancy names and non-policy objects are rejected before anything opens."""
    with pytest.raises(ConfigurationError, match="workspace"):
        FailureMemory(":memory:", workspace="")
    with pytest.raises(ConfigurationError, match="policy"):
        FailureMemory(":memory:", policy={"corroboration": 2})  # type: ignore[arg-type]


# -- secrets, incidents, snapshots, threads -----------------------------------------------------


def test_secrets_are_redacted_before_storing(memory: FailureMemory) -> None:
    """API keys in arguments and error text never reach the store."""
    key = "sk-proj-" + "A" * 40
    fail(
        memory,
        "http_get",
        {"url": "https://x.test", "api_key": key},
        f"401 Unauthorized for key {key}",
    )
    stored = memory.recent_failures(1)[0]
    assert key not in json.dumps(stored.args)
    assert stored.error is not None and key not in stored.error


def test_record_incident_feeds_patterns(memory: FailureMemory) -> None:
    """Incident-log style records group into patterns with their hint."""
    for _ in range(2):
        memory.clock.advance(5)  # type: ignore[attr-defined]
        memory.record_incident(
            "syntax_error", "coder", "openai", 400, "SyntaxError: Unexpected token }"
        )
    (pattern,) = memory.patterns()
    assert pattern.signature == "syntax_error"
    assert pattern.count == 2
    assert pattern.hint


def test_one_incident_teaches_no_constraint_and_shows_no_guard_block(
    memory: FailureMemory,
) -> None:
    """record_incident() never bans a call; its kind reaches the guard block once it repeats."""
    from scarguard import PromptGuard

    memory.record_incident("syntax_error", "coder", "openai", 400, "SyntaxError: invalid syntax")
    assert memory.constraints() == []
    assert memory.check("syntax_error", {"agent": "coder", "provider": "openai"}).allowed
    assert PromptGuard(memory).block() == ""
    memory.record_incident("syntax_error", "coder", "openai", 400, "SyntaxError: invalid syntax")
    assert memory.constraints() == []
    assert "syntax" in PromptGuard(memory).block().lower()


def test_tenants_are_isolated(clock: FakeClock) -> None:
    """A failure in one project does not refuse calls in another project of the same store."""
    web = memory_for_tests(clock=clock, project="web")
    api = FailureMemory(web.store, project="api", clock=clock)
    fail(web, "edit_file", EDIT, "old_string not found")
    assert not web.check("edit_file", EDIT).allowed
    assert api.check("edit_file", EDIT).allowed
    api.clear()
    assert not web.check("edit_file", EDIT).allowed


def test_concurrent_threads_lose_no_failures(clock: FakeClock) -> None:
    """Eight threads recording distinct failures store every one."""
    memory = memory_for_tests(clock=clock)

    def work(n: int) -> None:
        for i in range(50):
            memory.record("bash", {"command": f"job {n}-{i}"}, error="exit code 1")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert memory.stats().failures == 400
    assert len(memory.recent_failures(1000)) == 400


def test_success_counts_are_flushed_in_batches(memory: FailureMemory) -> None:
    """Successes are counted in memory and appear in stats once flushed."""
    for i in range(10):
        memory.record("read_file", {"path": f"{i}.py"}, ok=True)
    assert memory.stats().successes_by_tool == {"read_file": 10}


def test_incidents_are_never_deduplicated(memory: FailureMemory) -> None:
    """Back-to-back incidents are all recorded, as an incident log must."""
    for _ in range(3):
        memory.record_incident("rate_limit", "coder", "openai", 429, "429 Too Many Requests")
    assert memory.stats().failures == 3


def test_recent_failures_filter_by_tool_and_kind(memory: FailureMemory) -> None:
    """recent_failures() narrows to one tool or one failure kind."""
    fail(memory, "bash", {"command": "a"}, "exit code 1")
    fail(memory, "read_file", {"path": "x"}, "No such file or directory: 'x'")
    assert [f.tool for f in memory.recent_failures(tool="bash")] == ["bash"]
    assert [f.signature for f in memory.recent_failures(signature="file_not_found")] == [
        "file_not_found"
    ]


def test_signature_lookup_covers_fallback_kinds(memory: FailureMemory) -> None:
    """A signature name, known or fallback, resolves to a label and a hint."""
    assert memory.signature("edit_failed").label == "edit search string not found"
    result = fail(memory, "t", {}, "Flux capacitor misaligned")
    assert result.failure is not None
    fallback = memory.signature(result.failure.signature)
    assert fallback.label.startswith("unrecognised error")
    assert fallback.hint


# -- pending successes --------------------------------------------------------------------------


def test_pending_successes_survive_a_failed_failure_write(
    memory: FailureMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Successes counted in memory are not lost when the write of a failure fails."""
    from scarguard.errors import StoreError

    memory.record("read_file", {"path": "a.py"}, ok=True)
    assert len(memory._pending) == 1
    real = memory.store.transaction

    def broken(scope: object) -> object:
        raise StoreError("disk full")

    monkeypatch.setattr(memory.store, "transaction", broken)
    with pytest.raises(StoreError):
        fail(memory, "read_file", {"path": "b.py"}, "ValueError: bad")
    monkeypatch.setattr(memory.store, "transaction", real)
    memory.flush()
    assert memory.stats().successes_by_tool == {"read_file": 1}
