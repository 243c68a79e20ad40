"""Replay recorded failure sequences from public agent-framework issue reports.

Each ``tests/traces/*.json`` file is one sequence: its ``source`` (the issue it comes from),
a ``description`` and ``steps``. For every step the test asks the memory whether the call may
run, compares the decision with the step's ``expect`` (``allowed``: allowed without warnings;
``warned``: allowed with warnings; ``refused``), and records the step's ``outcome`` only when
the call was allowed, as a guarded tool would.

Optional keys: ``adapters`` (tool name -> ``"ml_training"``) at the top; per step
``advance_seconds`` (fake time before the step; default 5, one model turn),
``new_session`` (the agent restarts: a new :class:`FailureMemory` on the same store),
``writes`` (what the step's call did to the workspace when it ran: ``{path: text}`` written,
``{path: null}`` deleted) and ``note``; an ``outcome`` may carry the call's ``result`` (for
no-progress loops). A top-level ``files`` (``{path: text}``) is the workspace before the
first step: every trace replays in a fresh folder of real files, which is the memory's root
when the engine takes one. A trace with ``known_gap`` documents a limitation: it must still
fail, so that fixing the limitation is noticed (the test then asks for ``known_gap`` to be
removed).
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest

from scarguard import FailureMemory
from scarguard.adapters.ml_training import MLTrainingAdapter
from scarguard.learning.progress import NO_RESULT
from scarguard.stores import MemoryStore
from scarguard.testing import FakeClock

TRACES = Path(__file__).parent / "traces"
TRACE_FILES = sorted(TRACES.glob("*.json"))
EXPECTATIONS = {"allowed", "refused", "warned"}
DEFAULT_STEP_SECONDS = 5.0
_ADAPTERS = {"ml_training": MLTrainingAdapter}


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _memory(
    trace: dict[str, Any], store: MemoryStore, clock: FakeClock, root: Path
) -> FailureMemory:
    adapters = {tool: _ADAPTERS[name]() for tool, name in trace.get("adapters", {}).items()}
    options: dict[str, Any] = {"adapters": adapters, "clock": clock}
    if "root" in inspect.signature(FailureMemory).parameters:
        options["root"] = str(root)
    return FailureMemory(store, **options)


def _apply(root: Path, writes: dict[str, str | None]) -> None:
    for rel, text in writes.items():
        path = root / rel
        if text is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")


def _decision_kind(decision: Any) -> str:
    if not decision.allowed:
        return "refused"
    return "warned" if decision.warnings else "allowed"


def replay(trace: dict[str, Any], root: Path) -> list[str]:
    """Replay a trace in the folder ``root``; return one line per step whose decision differs
    from ``expect``."""
    clock = FakeClock()
    store = MemoryStore()
    _apply(root, trace.get("files", {}))
    memory = _memory(trace, store, clock, root)
    mismatches = []
    for i, step in enumerate(trace["steps"], start=1):
        if step.get("new_session"):
            memory.flush()
            memory = _memory(trace, store, clock, root)
        clock.advance(step.get("advance_seconds", DEFAULT_STEP_SECONDS))
        decision = memory.check(step["tool"], step["args"])
        got = _decision_kind(decision)
        if got != step["expect"]:
            reasons = "; ".join(v.reason for v in (*decision.violations, *decision.warnings))
            mismatches.append(
                f"step {i} {step['tool']} {step['args']}: expected {step['expect']}, got {got}"
                + (f" ({reasons})" if reasons else "")
            )
        if decision.allowed:
            _apply(root, step.get("writes", {}))
            outcome = step["outcome"]
            ok = outcome.get("ok", "error" not in outcome and "status_code" not in outcome)
            memory.record(
                step["tool"],
                step["args"],
                ok=bool(ok),
                error=outcome.get("error"),
                status_code=outcome.get("status_code"),
                result=outcome.get("result", NO_RESULT),
            )
    memory.close()
    return mismatches


def test_there_are_enough_traces() -> None:
    assert len(TRACE_FILES) >= 15
    sources = {json.dumps(_load(p)["source"], sort_keys=True) for p in TRACE_FILES}
    assert len(sources) == len(TRACE_FILES), "every trace comes from its own report"


@pytest.mark.parametrize("path", TRACE_FILES, ids=lambda p: p.stem)
def test_trace_is_well_formed(path: Path) -> None:
    trace = _load(path)
    source = trace["source"]
    assert source["repository"] and source["issue"] and source["url"].startswith("https://")
    assert trace["description"]
    assert trace["steps"]
    for step in trace["steps"]:
        assert step["expect"] in EXPECTATIONS
        assert isinstance(step["args"], dict)
        assert set(step["outcome"]) <= {"ok", "error", "status_code", "result"}
        assert step["outcome"]
        writes = step.get("writes", {})
        assert all(isinstance(t, (str, type(None))) for t in writes.values())
    assert all(isinstance(text, str) for text in trace.get("files", {}).values())
    kinds = {step["expect"] for step in trace["steps"]}
    assert "allowed" in kinds or "warned" in kinds


@pytest.mark.parametrize("path", TRACE_FILES, ids=lambda p: p.stem)
def test_trace_decisions(path: Path, tmp_path: Path) -> None:
    trace = _load(path)
    mismatches = replay(trace, tmp_path)
    if trace.get("known_gap"):
        assert mismatches, f"{path.name} now passes: remove its known_gap"
        pytest.xfail(f"known gap: {trace['known_gap']} | " + " | ".join(mismatches))
    assert not mismatches, "\n".join(mismatches)
