"""Build failures and constraints with sensible defaults for store tests."""

from __future__ import annotations

from typing import Any

from scarguard.model import Constraint, Failure


def failure(i: int = 0, **overrides: Any) -> Failure:
    values: dict[str, Any] = {
        "tool": "edit_file",
        "fingerprint": f"fp{i}",
        "signature": "edit_failed",
        "blame": "agent",
        "at": 1000.0 + i,
        "session": "s1",
        "action_class": "file_edit",
        "targets": (f"src/f{i}.py",),
        "args": {"path": f"src/f{i}.py", "n": i, "ratio": 0.5, "nested": {"k": [1, "é"]}},
        "error": "search string not found",
        "status_code": None,
        "duration_ms": 1.25,
        "agent": "coder",
        "provider": "acme",
    }
    values.update(overrides)
    return Failure(**values)


def constraint(key: str = "exact:fp0:edit_failed", **overrides: Any) -> Constraint:
    values: dict[str, Any] = {
        "kind": "exact_call",
        "key": key,
        "signature": "edit_failed",
        "reason": "this exact edit failed twice",
        "hint": "re-read the file first",
        "level": "block",
        "occurrences": 2,
        "created_at": 1000.0,
        "updated_at": 1001.0,
        "expires_at": None,
        "tool": "edit_file",
        "target": "src/f0.py",
        "action_class": "file_edit",
        "fingerprint": "fp0",
        "params": {"radius": 3, "values": [1.5, "x"]},
    }
    values.update(overrides)
    return Constraint(**values)
