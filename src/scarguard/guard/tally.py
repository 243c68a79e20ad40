"""Per-tool counters: what one guarded tool has seen in this process."""

from __future__ import annotations

import threading
import weakref

import attrs

from scarguard import _fork

__all__ = ["Tally", "ToolStats"]


@attrs.frozen
class ToolStats:
    """What one guarded tool has seen in this process.

    Attributes:
        calls: Calls made while the guard was enabled (refused ones included).
        blocked: Calls refused without running the tool.
        would_block: Calls shadow mode (``enforce=False``) let run that it would have refused.
        succeeded: Calls that ran and succeeded (retried ones count once).
        agent_failures: Failed attempts blamed on the agent.
        harness_failures: Failed attempts blamed on the infrastructure.
        unknown_failures: Failed attempts of unclear blame (or not recorded).
        constraints_created: Constraints learned from this tool's failures.
        retries: Extra attempts made after harness faults.
        bookkeeping_errors: Checks or records that failed (each also warned about once).
    """

    calls: int = 0
    blocked: int = 0
    would_block: int = 0
    succeeded: int = 0
    agent_failures: int = 0
    harness_failures: int = 0
    unknown_failures: int = 0
    constraints_created: int = 0
    retries: int = 0
    bookkeeping_errors: int = 0

    @property
    def failures(self) -> int:
        """Failed attempts, whoever is to blame."""
        return self.agent_failures + self.harness_failures + self.unknown_failures


_FIELDS = tuple(attrs.fields_dict(ToolStats))
_TALLIES: weakref.WeakSet[Tally] = weakref.WeakSet()
"""Every tally, so a forked child can give each a fresh lock."""


class Tally:
    """The live counters behind :class:`ToolStats`, safe to bump from any thread.

    Attributes:
        lock: Held while a counter changes or is read.
        counts: The counters by field name (change them only holding ``lock``).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts = dict.fromkeys(_FIELDS, 0)
        _TALLIES.add(self)

    def bump(self, field: str, by: int = 1) -> None:
        """Add ``by`` to the counter ``field``."""
        lock = self.lock  # (acquire and release: a with block costs twice as much here)
        lock.acquire()
        try:
            self.counts[field] += by
        finally:
            lock.release()

    def snapshot(self) -> ToolStats:
        """Return the counters as a frozen :class:`ToolStats`."""
        with self.lock:
            return ToolStats(**self.counts)


@_fork.in_child
def _reset_after_fork() -> None:
    # a lock held by another thread at fork time would stay held forever in the child
    for tally in list(_TALLIES):
        tally.lock = threading.Lock()
