"""How a guarded tool crosses a process boundary: pickled by name, or rebuilt with its memory.

A guarded function defined at module level pickles as a reference to that name
(:func:`load` finds it again). One that is not reachable by its name, but whose function is,
pickles as that function with its options and a reference to its memory
(:class:`MemoryRef`): the receiving process re-opens the same file once (:func:`reopen`) and
shares it among the tools it rebuilds. A memory that cannot be re-opened elsewhere
(``:memory:``, a URL with credentials) cannot be pickled this way.
"""

from __future__ import annotations

import pickle
import sys
import threading
from typing import TYPE_CHECKING, Any

import attrs

from scarguard import _fork
from scarguard.memory import FailureMemory
from scarguard.policy import Policy

if TYPE_CHECKING:
    from scarguard.guard.tool import ToolGuard

__all__ = ["MemoryRef", "load", "lookup", "memory_ref", "reopen"]


def lookup(module: str, qualname: str) -> Any:
    """Return what ``module.qualname`` names in this process (``None``: nothing, or a local)."""
    obj: Any = sys.modules.get(module)
    for part in qualname.split("."):
        if obj is None or part == "<locals>":
            return None
        obj = vars(obj).get(part) if isinstance(obj, type) else getattr(obj, part, None)
    return obj


def load(module: str, qualname: str) -> Any:
    """Import ``module`` and return the guarded tool named ``qualname`` in it (unpickling)."""
    __import__(module)
    found = lookup(module, qualname)
    if found is None:
        raise pickle.UnpicklingError(f"guarded tool {module}.{qualname} not found")
    return found


@attrs.frozen
class MemoryRef:
    """What re-opens a tool's memory in another process: its store, tenant and policy."""

    location: str
    workspace: str
    project: str
    policy: Policy


_REOPENED: dict[tuple[str, str, str], FailureMemory] = {}
_REOPEN_LOCK = threading.Lock()


@_fork.in_child
def _reset_after_fork() -> None:
    global _REOPEN_LOCK
    _REOPEN_LOCK = threading.Lock()  # another thread may have held it at fork time


def memory_ref(guard: ToolGuard) -> MemoryRef | None:
    """Return the reference to ``guard``'s own memory (``None``: the default memory).

    Raises:
        pickle.PicklingError: The memory cannot be re-opened in another process.
    """
    memory = guard.explicit_memory
    if memory is None:
        return None
    location = memory.store.location
    if location == ":memory:" or "://" in location:
        raise pickle.PicklingError(
            f"cannot pickle guarded tool {guard.name!r} by value: its memory ({location}) cannot"
            " be re-opened in another process; define the tool at module level"
        )
    scope = memory.scope
    return MemoryRef(location, scope.workspace, scope.project, memory.policy)


def reopen(ref: MemoryRef) -> FailureMemory:
    """Return this process's memory for ``ref``, opened at its first use and shared after."""
    key = (ref.location, ref.workspace, ref.project)
    with _REOPEN_LOCK:
        memory = _REOPENED.get(key)
        if memory is None:
            memory = FailureMemory(
                ref.location, workspace=ref.workspace, project=ref.project, policy=ref.policy
            )
            _REOPENED[key] = memory
        return memory
