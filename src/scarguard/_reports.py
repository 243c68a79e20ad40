"""The read-only reports of :class:`~scarguard.FailureMemory`: what it knows, asked.

Constraints, recent failures, signatures and what an error would be classified as, repeated
patterns, statistics and the session's convergence; none of them writes anything but the
pending successes ``stats()`` flushes first. A mixin of :class:`~scarguard.FailureMemory`,
beside the check side (:mod:`scarguard.guard._checking`) whose cached index
:meth:`ReportsMixin.constraints` reads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from scarguard._results import Convergence, Pattern
from scarguard.adapters.protocol import Adapter
from scarguard.learning.convergence import SessionTracker
from scarguard.learning.index import ConstraintIndex
from scarguard.learning.observed import Revalidator
from scarguard.model import Constraint, ConstraintKind, Failure, Outcome, Scope
from scarguard.naming._signature import Signature
from scarguard.naming.blame import classify_blame
from scarguard.naming.classify import Classification, error_parts
from scarguard.naming.retry_after import retry_after
from scarguard.naming.signatures import SignatureBank
from scarguard.stores.protocol import Store
from scarguard.summary import MemoryStats, build_patterns, build_stats, signature_named

__all__ = ["ReportsMixin"]


class ReportsMixin:
    """Reading a memory: constraints, failures, naming, patterns, stats, convergence."""

    store: Store
    scope: Scope
    clock: Callable[[], float]
    _lock: threading.RLock
    _view: threading.RLock
    _tracker: SessionTracker
    _revalidator: Revalidator

    if TYPE_CHECKING:  # provided by FailureMemory and its check side

        @property
        def signatures(self) -> SignatureBank:
            """The signature bank that names failures."""

        def adapter_for(self, tool: str) -> Adapter:
            """Return the adapter that describes ``tool``'s calls."""

        def flush(self) -> None:
            """Write the successes and refusals counted in memory."""

        def _current_index(self, now: float) -> ConstraintIndex:
            """Return the cached index, reloaded first if the store changed."""

    def constraints(
        self,
        *,
        tool: str | None = None,
        kind: ConstraintKind | str | None = None,
        include_stale: bool = False,
    ) -> list[Constraint]:
        """Return the active constraints, oldest first, optionally filtered.

        Args:
            tool: Only this tool's constraints.
            kind: Only constraints of this kind.
            include_stale: Also the ones the workspace contradicts (a path they depend on
                changed since they were learned); they refuse nothing.
        """
        wanted = ConstraintKind(kind) if kind is not None else None
        with self._lock:
            now = self.clock()
            rules = self._current_index(now).all
        return [
            c
            for c in rules
            if c.active(now)
            and (tool is None or c.tool == tool)
            and (wanted is None or c.kind is wanted)
            and (include_stale or not self._revalidator.stale(c))
        ]

    def recent_failures(
        self,
        limit: int = 10,
        *,
        since: float | None = None,
        tool: str | None = None,
        signature: str | None = None,
    ) -> list[Failure]:
        """Return the latest failures of this workspace and project, newest first.

        Args:
            limit: How many at most.
            since: Only failures at or after this time (seconds since the epoch).
            tool: Only this tool's failures.
            signature: Only failures of this kind.
        """
        return self.store.failures(
            self.scope, limit=limit, since=since, tool=tool, signature=signature
        )

    def signature(self, name: str) -> Signature:
        """Return the signature called ``name`` (label, hint, blame), fallback kinds included."""
        return signature_named(self.signatures, name)

    def classify(
        self, error: str | BaseException | None, *, status_code: int | None = None, tool: str = ""
    ) -> Classification:
        """Return the signature, blame and retry hint of an error, without recording it."""
        text, kinds, found_status = error_parts(error)
        status = status_code if status_code is not None else found_status
        signature = self.signatures.match(text, status_code=status, exception_types=kinds)
        outcome = Outcome(ok=False, error=text, status_code=status)
        override = self.adapter_for(tool).blame(signature, outcome) if tool else None
        blame = override or classify_blame(signature, outcome)
        return Classification(signature, blame, retry_after(text))

    def patterns(self, *, since: float | None = None, min_count: int = 2) -> list[Pattern]:
        """Return the failure kinds that repeat, most frequent first.

        Args:
            since: Only count failures at or after this time (seconds since the epoch).
            min_count: How many failures make a repeat.
        """
        return build_patterns(
            self.store, self.scope, self.signatures, since=since, min_count=min_count
        )

    def stats(self) -> MemoryStats:
        """Return counts per tool, failure kind, blame and constraint kind."""
        self.flush()
        return build_stats(self.store, self.scope, self.constraints())

    def convergence(self) -> Convergence:
        """Return whether this session's agent is making progress."""
        with self._view:
            return self._tracker.convergence()

    def is_done(self) -> bool:
        """Return whether the loop should stop: plateau, stuck, exhausted or looping."""
        return self.convergence().done
