"""scarguard: a failure memory for tool-calling AI agents.

Wrap a tool with :func:`guarded_tool`; before each call scarguard checks what has already
failed and refuses a call known to fail again, with a reason the LLM can act on; after each
call it records the outcome and learns from repeated agent mistakes, never from
infrastructure noise. :class:`PromptGuard` renders what it knows as a prompt block.

Importing the package loads nothing else: each public name is imported from its module on
first use (PEP 562), so a process that only needs :class:`FailureMemory` never loads the
decorator's wrapt, and ``scarguard --help`` or a hook process starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scarguard._constraint_params import ConstraintParams
    from scarguard._results import Convergence, ConvergenceStatus, Pattern, RecordResult
    from scarguard.adapters import MLTrainingAdapter, ToolCallAdapter
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
    from scarguard.guard import Attempt
    from scarguard.guard.decorator import GuardedCallable, GuardedTool, guarded_tool
    from scarguard.guard.failure_checks import failure_when
    from scarguard.guard.retrying import Retry
    from scarguard.guard.tally import ToolStats
    from scarguard.maintenance import PurgeReport
    from scarguard.memory import FailureMemory, default_memory, set_default_memory
    from scarguard.model import (
        Blame,
        Call,
        Constraint,
        ConstraintKind,
        Decision,
        Direction,
        Failure,
        Level,
        Outcome,
        Scope,
        Violation,
    )
    from scarguard.naming._signature import Signature
    from scarguard.naming.classify import Classification
    from scarguard.naming.signatures import SignatureBank
    from scarguard.observe import LocalObserver, Observer
    from scarguard.policy import Policy
    from scarguard.prompt import GuardView, PromptGuard
    from scarguard.receipts import VerifyReport
    from scarguard.redact import Redactor
    from scarguard.refusals import ConstraintRefusals, RefusalStats
    from scarguard.stores import JSONStore, MemoryStore, Store, open_store
    from scarguard.summary import MemoryStats

__all__ = [
    "Attempt",
    "Blame",
    "Call",
    "Classification",
    "ConfigurationError",
    "Constraint",
    "ConstraintKind",
    "ConstraintParams",
    "ConstraintRefusals",
    "Convergence",
    "ConvergenceStatus",
    "Decision",
    "Direction",
    "Failure",
    "FailureMemory",
    "GuardView",
    "GuardedCallable",
    "GuardedTool",
    "JSONStore",
    "Level",
    "LocalObserver",
    "MLTrainingAdapter",
    "MemoryStats",
    "MemoryStore",
    "Observer",
    "Outcome",
    "Pattern",
    "Policy",
    "PromptGuard",
    "PurgeReport",
    "RecordResult",
    "Redactor",
    "RefusalStats",
    "Retry",
    "ScarguardError",
    "ScarguardWarning",
    "SchemaVersionError",
    "Scope",
    "Signature",
    "SignatureBank",
    "Store",
    "StoreCorruptionWarning",
    "StoreError",
    "StoreFallbackWarning",
    "ToolBlocked",
    "ToolCallAdapter",
    "ToolStats",
    "VerifyReport",
    "Violation",
    "default_memory",
    "failure_when",
    "guarded_tool",
    "open_store",
    "set_default_memory",
]

__version__ = "0.1.0"

_HOMES = {
    "Attempt": "scarguard.guard",
    "Blame": "scarguard.model",
    "Call": "scarguard.model",
    "Classification": "scarguard.naming.classify",
    "ConfigurationError": "scarguard.errors",
    "Constraint": "scarguard.model",
    "ConstraintKind": "scarguard.model",
    "ConstraintParams": "scarguard._constraint_params",
    "ConstraintRefusals": "scarguard.refusals",
    "Convergence": "scarguard._results",
    "ConvergenceStatus": "scarguard._results",
    "Decision": "scarguard.model",
    "Direction": "scarguard.model",
    "Failure": "scarguard.model",
    "FailureMemory": "scarguard.memory",
    "GuardView": "scarguard.prompt",
    "GuardedCallable": "scarguard.guard.decorator",
    "GuardedTool": "scarguard.guard.decorator",
    "JSONStore": "scarguard.stores",
    "Level": "scarguard.model",
    "LocalObserver": "scarguard.observe",
    "MLTrainingAdapter": "scarguard.adapters",
    "MemoryStats": "scarguard.summary",
    "MemoryStore": "scarguard.stores",
    "Observer": "scarguard.observe",
    "Outcome": "scarguard.model",
    "Pattern": "scarguard._results",
    "Policy": "scarguard.policy",
    "PurgeReport": "scarguard.maintenance",
    "PromptGuard": "scarguard.prompt",
    "RecordResult": "scarguard._results",
    "Redactor": "scarguard.redact",
    "RefusalStats": "scarguard.refusals",
    "Retry": "scarguard.guard.retrying",
    "ScarguardError": "scarguard.errors",
    "ScarguardWarning": "scarguard.errors",
    "SchemaVersionError": "scarguard.errors",
    "Scope": "scarguard.model",
    "Signature": "scarguard.naming._signature",
    "SignatureBank": "scarguard.naming.signatures",
    "Store": "scarguard.stores",
    "StoreCorruptionWarning": "scarguard.errors",
    "StoreError": "scarguard.errors",
    "StoreFallbackWarning": "scarguard.errors",
    "ToolBlocked": "scarguard.errors",
    "ToolCallAdapter": "scarguard.adapters",
    "ToolStats": "scarguard.guard.tally",
    "VerifyReport": "scarguard.receipts",
    "Violation": "scarguard.model",
    "default_memory": "scarguard.memory",
    "failure_when": "scarguard.guard.failure_checks",
    "guarded_tool": "scarguard.guard.decorator",
    "open_store": "scarguard.stores",
    "set_default_memory": "scarguard.memory",
}
"""Where each public name lives."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'scarguard' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # the next access is a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
