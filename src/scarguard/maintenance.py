"""Maintenance operations of :class:`~scarguard.FailureMemory`: lift, clear, audit, move.

Kept apart from the engine's hot path (``check``/``record`` in ``memory.py``). Every
operation touches only the instance's own workspace and project, except :meth:`wipe_all`,
which says so in its name.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from scarguard._warnings import warn
from scarguard.errors import ConfigurationError, ScarguardError, ScarguardWarning
from scarguard.learning.lifting import remove_with_counters
from scarguard.model import Constraint, ConstraintKind, Scope
from scarguard.policy import Policy
from scarguard.receipts import VerifyReport, verify_store
from scarguard.redact import Redactor
from scarguard.stores.protocol import Store
from scarguard.telemetry import log_constraints

if TYPE_CHECKING:
    from scarguard.learning.index import RecordingTransaction

__all__ = ["MaintenanceMixin", "PurgeReport"]


@attrs.frozen
class PurgeReport:
    """What :meth:`~scarguard.FailureMemory.purge` deleted.

    Attributes:
        failures: Failures of the tenant deleted.
        receipts: Receipts deleted (the chain's, all tenants'; one ``compact`` receipt
            replaces them).
        failures_before: The time failures were deleted before (``None``: kept).
        receipts_before: The time receipts were deleted before (``None``: kept).
    """

    failures: int
    receipts: int
    failures_before: float | None = None
    receipts_before: float | None = None


class MaintenanceMixin:
    """Lifting, clearing, auditing and moving a memory's records."""

    store: Store
    policy: Policy
    scope: Scope
    clock: Callable[[], float]
    redactor: Redactor
    _lock: threading.RLock
    _pending: list[Any]
    _shadow: dict[str, tuple[Constraint, ...]]
    _pending_counts: Counter[str]
    _pending_refusals: int

    if TYPE_CHECKING:

        def flush(self) -> None:
            """Write pending successes (provided by FailureMemory)."""

        def _write(self) -> contextlib.AbstractContextManager[RecordingTransaction]:
            """Open a write transaction that keeps the cached index in step."""

        def _forget_index(self) -> None:
            """Have the constraint index loaded again before it is next used."""

    def forget(
        self,
        *ids: str,
        tool: str | None = None,
        kind: ConstraintKind | str | None = None,
        target: str | None = None,
        signature: str | None = None,
        all: bool = False,
    ) -> list[Constraint]:
        """Lift constraints by hand and reset the evidence behind them.

        Args:
            *ids: Constraint ids (as shown by ``constraints()`` and the CLI).
            tool: Lift every constraint on this tool.
            kind: Lift every constraint of this kind.
            target: Lift every constraint on this target (as given to the tool, or as
                stored: a target that held a secret is stored redacted).
            signature: Lift every constraint learned from this failure kind.
            all: Lift every constraint of this workspace and project.

        Returns:
            The lifted constraints.

        Raises:
            ConfigurationError: Nothing was named to forget.
        """
        wanted = ConstraintKind(kind) if kind is not None else None
        if not (ids or tool or wanted or target or signature or all):
            raise ConfigurationError(
                "forget() needs ids, tool=, kind=, target=, signature= or all=True"
            )

        targets = None if target is None else {target, self.redactor.target(target)}

        def chosen(c: Constraint) -> bool:
            if all:
                return True
            return (
                (not ids or c.id in ids)
                and (tool is None or c.tool == tool)
                and (wanted is None or c.kind is wanted)
                and (targets is None or c.target in targets)
                and (signature is None or c.signature == signature)
            )

        with self._lock:
            now = self.clock()
            # through the memory's own write: the rules lifted leave its index at once (a
            # success recorded next decides what it lifts from that index)
            with self._write() as tx:
                doomed = [c for c in tx.constraints() if chosen(c)]
                doomed = remove_with_counters(tx, doomed, now, by_hand=True)
                if doomed:
                    tx.receipt("forget", {"lifted": [c.key for c in doomed]}, now)
        log_constraints("forgotten", doomed, self.scope)
        return doomed

    def _forget_pending(self) -> None:
        self._pending.clear()
        self._pending_counts.clear()
        self._pending_refusals = 0
        self._shadow.clear()

    def clear(self) -> None:
        """Delete this workspace and project's records (other tenants are untouched)."""
        with self._lock:
            self._forget_pending()
            self.store.clear(self.scope)
            self._forget_index()
            with self.store.transaction(self.scope) as tx:
                tx.receipt(
                    "clear",
                    {"workspace": self.scope.workspace, "project": self.scope.project},
                    self.clock(),
                )

    def wipe_all(self) -> None:
        """Delete every tenant's records and the receipt chain. Irreversible."""
        with self._lock:
            self._forget_pending()
            self.store.wipe()

    def purge(
        self, older_than: float | None = None, *, receipts: bool | None = None
    ) -> PurgeReport:
        """Delete old failures of this tenant and compact old receipts of the store.

        Args:
            older_than: Age in seconds; default: the policy's ``failure_retention`` for
                failures and ``receipt_retention`` for receipts (``None`` there: keep).
            receipts: Whether to compact receipts too (default: when ``older_than`` is
                given, or the policy sets ``receipt_retention``).

        Returns:
            What was deleted, and before which time.

        Raises:
            ConfigurationError: ``older_than`` is not a positive number.
        """
        if older_than is not None and (
            isinstance(older_than, bool)
            or not isinstance(older_than, (int, float))
            or not older_than > 0
        ):
            raise ConfigurationError(f"older_than must be a positive number, not {older_than!r}")
        fail_age = older_than if older_than is not None else self.policy.failure_retention
        receipt_age = older_than if older_than is not None else self.policy.receipt_retention
        if receipts is False:
            receipt_age = None
        self.flush()
        with self._lock:
            now = self.clock()
            failures = 0
            if fail_age is not None:
                failures = self.store.purge_failures(self.scope, now - fail_age)
                if failures:
                    with self.store.transaction(self.scope) as tx:
                        payload = {"failures": failures, "before": now - fail_age}
                        tx.receipt("purge", payload, now)
            compacted = 0
            if receipt_age is not None:
                compacted = self.store.compact_receipts(self.scope, now - receipt_age, now)
        return PurgeReport(
            failures=failures,
            receipts=compacted,
            failures_before=None if fail_age is None else now - fail_age,
            receipts_before=None if receipt_age is None else now - receipt_age,
        )

    def _apply_retention(self) -> None:
        """Purge by the policy when the memory opens; a failure to purge only warns."""
        if self.policy.failure_retention is None and self.policy.receipt_retention is None:
            return
        try:
            self.purge()
        except ScarguardError as exc:
            warn(f"scarguard could not apply retention: {exc}", ScarguardWarning)

    def verify(self) -> VerifyReport:
        """Check the receipt chain; report the first broken receipt, if any."""
        self.flush()
        return verify_store(self.store)

    def export(self) -> Iterator[dict[str, Any]]:
        """Yield this tenant's history as JSON-safe records (see :meth:`import_`)."""
        self.flush()
        return self.store.export(self.scope)

    def import_(self, records: Iterable[Mapping[str, Any]]) -> int:
        """Add records produced by :meth:`export` (of any store) to this tenant."""
        with self._lock:
            return self.store.import_(self.scope, records)

    def snapshot(self) -> dict[str, Any]:
        """Return this tenant's whole state as one JSON-safe value."""
        return {
            "workspace": self.scope.workspace,
            "project": self.scope.project,
            "records": list(self.export()),
        }

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        """Replace this tenant's state with a :meth:`snapshot`.

        Raises:
            ConfigurationError: ``snapshot`` is not one.
        """
        records = snapshot.get("records") if isinstance(snapshot, Mapping) else None
        if not isinstance(records, list):
            raise ConfigurationError("restore() takes a value returned by snapshot()")
        self.clear()
        self.import_(records)
