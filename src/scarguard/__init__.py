"""scarguard: a failure memory for tool-calling AI agents.

Wrap a tool with :func:`guarded_tool`; before each call scarguard checks what has already
failed and refuses a call known to fail again, with a reason the LLM can act on; after each
call it records the outcome and learns from repeated agent mistakes, never from
infrastructure noise. :class:`PromptGuard` renders what it knows as a prompt block.
"""

from scarguard._version import __version__ as __version__
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
from scarguard.guard.decorator import GuardedTool, Retry, ToolStats, failure_when, guarded_tool
from scarguard.memory import Classification, FailureMemory, default_memory, set_default_memory
from scarguard.model import (
    Blame,
    Call,
    Constraint,
    ConstraintKind,
    ConstraintParams,
    Convergence,
    ConvergenceStatus,
    Decision,
    Failure,
    Level,
    Outcome,
    Pattern,
    RecordResult,
    Scope,
    Violation,
)
from scarguard.naming.signatures import Signature, SignatureBank
from scarguard.observe import LocalObserver, Observer
from scarguard.policy import Policy
from scarguard.prompt import GuardView, PromptGuard
from scarguard.redact import Redactor
from scarguard.refusals import ConstraintRefusals, RefusalStats
from scarguard.stores import JSONStore, MemoryStore, Store, open_store
from scarguard.stores.protocol import VerifyReport
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
    "Failure",
    "FailureMemory",
    "GuardView",
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
