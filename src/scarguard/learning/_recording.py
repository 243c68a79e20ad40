"""The failure side of :class:`~scarguard.FailureMemory`: record an outcome, learn from it.

A failure is one write transaction: the pending successes, the failure row, what it teaches
(:mod:`scarguard.learning.rules`) and its receipt. What the failure depends on is observed
first, outside the transaction and every lock. A call shadow mode let run is counted by its
real outcome instead of being learned from. The check and success side is the memory's own.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

import attrs

from scarguard._json import compact
from scarguard._results import RecordResult
from scarguard.adapters.protocol import Adapter
from scarguard.learning._rows import FailureRows
from scarguard.learning.convergence import Event, SessionTracker
from scarguard.learning.index import ConstraintIndex, RecordingTransaction
from scarguard.learning.keys import verdict_keys
from scarguard.learning.observed import Revalidator, dependencies, is_shell_like, with_read_files
from scarguard.learning.progress import NO_RESULT, ProgressTracker
from scarguard.learning.rules import Lesson, enforce_cap, learn
from scarguard.model import Blame, Call, Constraint, Failure, Outcome, Scope
from scarguard.naming._signature import Signature
from scarguard.naming.blame import classify_blame
from scarguard.naming.classify import Classification, error_parts
from scarguard.naming.retry_after import retry_after
from scarguard.naming.signatures import SignatureBank
from scarguard.policy import Policy
from scarguard.receipts import CanonicalPayload
from scarguard.redact import Redactor
from scarguard.stores.protocol import Store, Transaction
from scarguard.telemetry import outcome_signals, shadow_signals

__all__ = ["FailureRecording"]

_NOTHING_BATCHED: contextlib.nullcontext[Counter[str]] = contextlib.nullcontext(Counter())
"""What a failure takes of the batched counts when nothing is batched (never changed)."""
_HARNESS, _FAILED = Blame.HARNESS, Event.FAILED  # (a member's lookup costs a call on 3.11)

class FailureRecording(FailureRows):
    """Recording outcomes: ``record``, ``record_incident`` and the failure transaction."""

    store: Store
    policy: Policy
    scope: Scope
    clock: Callable[[], float]
    redactor: Redactor
    root: str
    _lock: threading.RLock
    _view: threading.RLock
    _batch: int
    _index: ConstraintIndex
    _generation: Hashable
    _tokens: dict[Hashable, None]
    _tracker: SessionTracker
    _progress: ProgressTracker
    _revalidator: Revalidator
    _pending: list[Call | tuple[str, str | None]]
    _pending_counts: Counter[str]
    _pending_refusals: int
    _shadow: dict[str, tuple[Constraint, ...]]

    if TYPE_CHECKING:  # provided by FailureMemory

        @property
        def signatures(self) -> SignatureBank:
            """The signature bank that names failures."""

        def adapter_for(self, tool: str) -> Adapter:
            """Return the adapter that describes ``tool``'s calls."""

        def describe(
            self,
            tool: str | Call,
            args: Mapping[str, Any] | None = None,
            *,
            targets: Sequence[str] | None = None,
        ) -> Call:
            """Return the :class:`Call` the adapter makes of a tool name and its arguments."""

        def flush(self) -> None:
            """Write the successes and refusals counted in memory."""

        def _load_index_once(self) -> None:
            """Load the constraint index if it never was."""

        def _quick_success(
            self,
            tool: str,
            args: Mapping[str, Any] | None,
            targets: Sequence[str] | None,
            result: Any,
            score: float | None,
            *,
            nowait: bool = False,
        ) -> RecordResult | None:
            """Count a success without describing the call, or return ``None``."""

        def _record_success(
            self,
            call: Call,
            score: float | None,
            result: Any = NO_RESULT,
            *,
            nowait: bool = False,
        ) -> RecordResult | None:
            """Count a success; lift what it disproves; flush a full batch."""

        def _keeping(
            self, pending: list[Call | tuple[str, str | None]]
        ) -> contextlib.AbstractContextManager[Counter[str]]:
            """Take the pending counts; put them back if the write fails."""

        def _apply_successes(
            self,
            tx: Transaction,
            pending: Sequence[Call | tuple[str, str | None]],
            counts: Counter[str],
            now: float,
        ) -> None:
            """Write the batched counts."""

    def record(
        self,
        tool: str | Call,
        args: Mapping[str, Any] | None = None,
        *,
        ok: bool | None = None,
        error: str | BaseException | None = None,
        status_code: int | None = None,
        duration_ms: float | None = None,
        score: float | None = None,
        agent: str | None = None,
        provider: str | None = None,
        targets: Sequence[str] | None = None,
        result: Any = NO_RESULT,
        retry: bool = False,
    ) -> RecordResult:
        """Record what a call did, and learn from it.

        Every failure is stored and every one counts: a framework that re-runs a failing
        tool makes new calls, whatever the time between them. Only the guard's own retries
        inside one guarded call (``retry=True``) are one decision: they are stored, and count
        once, with the attempt they retry.

        Args:
            tool: The tool's name, or a :class:`Call`.
            args: The call's arguments by name.
            ok: Whether it succeeded (default: ``error is None``).
            error: The error text or the exception raised.
            status_code: An HTTP-like status code, if the tool reports one.
            duration_ms: How long the call took.
            score: A score, for scored domains.
            agent: Which agent made the call.
            provider: Which model provider the agent used.
            targets: Explicit targets (default: extracted from the arguments).
            result: What a successful call returned. Only a digest is kept, to notice a
                no-progress loop: the identical call returning the identical result with
                nothing changed in between (``Policy.loop_warn``).
            retry: This outcome is the guard's own retry of the attempt recorded just before
                (same call, same decision): a failure is stored but not counted again.

        Returns:
            The stored failure, what was learned or lifted, and the session's convergence.
        """
        if error is None and ok is not False and not isinstance(tool, Call):
            done = self._quick_success(tool, args, targets, result, score)
            if done is not None:
                return done
        call = self.describe(tool, args, targets=targets)
        if ok is None:
            ok = error is None
        shadowed = self._take_shadow(call) if self._shadow else None
        if ok:
            if shadowed is not None:
                return self._record_shadowed(call, shadowed, None, score)
            done = self._record_success(call, score, result)
            assert done is not None  # only a nowait success is ever deferred
            return done
        text, kinds, found_status = error_parts(error)
        status = status_code if status_code is not None else found_status
        signature = self.signatures.match(text, status_code=status, exception_types=kinds)
        if shadowed is not None:
            found = Outcome(ok=False, error=text, status_code=status, score=score)
            return self._record_shadowed(call, shadowed, (signature, found), score)
        outcome = Outcome(
            ok=False,
            error=text,
            exception_type=kinds[0] if kinds else None,
            status_code=status,
            duration_ms=duration_ms,
            score=score,
            agent=agent,
            provider=provider,
        )
        return self._record_failure(call, outcome, signature, counted=not retry)

    def _take_shadow(self, call: Call) -> tuple[Constraint, ...] | None:
        with self._view:
            return self._shadow.pop(call.fingerprint, None)

    def _record_shadowed(
        self,
        call: Call,
        blocking: tuple[Constraint, ...],
        failed: tuple[Signature, Outcome] | None,
        score: float | None,
    ) -> RecordResult:
        """Count the real outcome of a call shadow mode let run instead of refusing it.

        It is not learned from: an enforcing memory would never have seen it run, and the
        shadow memory must keep learning exactly what that one would.
        """
        failure = None
        if failed is None:
            verdict = "wrong"
        else:
            signature, outcome = failed
            adapter = self.adapter_for(call.tool)
            blame = adapter.blame(signature, outcome) or classify_blame(signature, outcome)
            same = any(c.signature == signature.name for c in blocking)
            verdict = "right" if same else "other"
        with self._view:
            now = self.clock()
            if failed is not None:
                failure = self._failure(call, signature, blame, now)
            self._pending_refusals += 1
            self._pending_counts.update(verdict_keys(call.tool, verdict, blocking))
            self._tracker.note(
                Event.OK if failed is None else Event.FAILED, call.action_class, score
            )
            full = len(self._pending) + self._pending_refusals >= self._batch
            convergence = self._tracker.convergence()
        if full:
            self.flush()
        shadow_signals(call.tool, verdict, blocking, self.scope)
        return RecordResult(failure, (), (), convergence)

    def record_incident(
        self,
        type: str,
        agent: str | None = None,
        provider: str | None = None,
        status_code: int | None = None,
        message: str = "",
    ) -> RecordResult:
        """Record a failure that is not a tool call (incident-log style).

        The incident counts towards :meth:`patterns`, so the prompt guard shows its kind once
        it repeats. It is not a tool call, so it never teaches a constraint. When the message
        matches no signature and ``type`` names one, that signature is used.
        """
        call = self.describe(type, {"agent": agent, "provider": provider})
        text = message or type
        signature = self.signatures.match(text, status_code=status_code)
        known = self.signatures.get(type)
        if known is not None and signature.name.startswith("error:"):
            signature = known
        outcome = Outcome(
            ok=False, error=text, status_code=status_code, agent=agent, provider=provider
        )
        return self._record_failure(call, outcome, signature, teaches=False)

    def _record_failure(
        self,
        call: Call,
        outcome: Outcome,
        signature: Signature,
        *,
        teaches: bool = True,
        counted: bool = True,
    ) -> RecordResult:
        adapter = self.adapter_for(call.tool)
        blame = adapter.blame(signature, outcome) or classify_blame(signature, outcome)
        shell_like = is_shell_like(call, signature.name, self.policy.stale_after_change)
        observed: Mapping[str, str] = {}
        depends: tuple[str, ...] = ()
        deterministic = (
            signature.name in self.policy.deterministic
            if self.policy.deterministic is not None
            else signature.deterministic
        )
        if teaches and counted and blame is not _HARNESS:
            self._load_index_once()  # (the constraints it updates are read from it)
            normalise = getattr(adapter, "normalise_target", os.path.normpath)
            paths = dependencies(
                call, outcome.error, shell_like=shell_like, normalise=normalise,
                signature=signature.name,
            )  # fmt: skip
            if shell_like:  # what its code may have read: the modules it imports...
                paths = with_read_files(
                    call, paths, normalise, self._revalidator.observer, conditioned=deterministic
                )
            # a path that needs redacting is not kept (nor observed): it could only lift less;
            # paths are kept absolute, so a memory opened elsewhere revalidates the same files
            kept = self._kept_paths(paths)
            observed = self._revalidator.observe(kept)
            depends = self._revalidator.condition(
                call, signature.name, outcome.error, observed, self.root, self.redactor
            )
        with self._lock:
            now = self.clock()
            failure = self._failure(call, signature, blame, now, outcome)
            with self._view:
                pending, self._pending = self._pending, []
            batched = pending or self._pending_counts or self._pending_refusals
            keeping = self._keeping(pending) if batched else _NOTHING_BATCHED
            with keeping as counts, self._write() as tx:
                if pending or counts:  # nothing batched: nothing to write
                    self._apply_successes(tx, pending, counts, now)
                stored = tx.add_failure(failure)
                lesson = Lesson(
                    call,
                    stored,
                    signature,
                    deterministic,
                    teaches=teaches,
                    shell_like=shell_like,
                    observed=observed,
                    root=self.root,
                    depends=depends,
                )
                learned = learn(tx, lesson, self.policy, adapter, now) if counted else []
                evicted = enforce_cap(tx, self.policy, now) if learned else []
                if tx.keeps_receipts:
                    tx.receipt("failure", _failure_payload(stored, learned, evicted), now)
            with self._view:
                if counted:
                    self._tracker.note(_FAILED, call.action_class, outcome.score)
                self._progress.forget(call.fingerprint, tool=call.tool)
        outcome_signals(call.tool, stored.signature, blame.value, learned, (), self.scope)
        found = Classification(signature, blame, retry_after(outcome.error))
        # the convergence is computed when first read, as a success's is (nobody may ask)
        return RecordResult(stored, tuple(learned), (), self._tracker.convergence, found)

    def _write(self) -> contextlib.AbstractContextManager[RecordingTransaction]:
        """Open a write transaction that keeps the cached index in step (hold ``_lock``).

        When nothing else committed since the index was loaded, the constraints this
        transaction put and removed are applied to the index and it stays current; otherwise
        the next check reloads it from the store.
        """
        return _Writing(self)


def _failure_payload(
    stored: Failure, learned: Sequence[Constraint], evicted: Sequence[Constraint]
) -> CanonicalPayload:
    """Return a failure's receipt payload, which writes its canonical text directly.

    The text of ``receipts.seal`` (keys sorted, floats as their ``repr``), built by the
    unsorted encoder from dictionaries made in sorted order: the float-free copy of the
    general walk and the encoder's sort cost more, on every failure.
    """
    row = stored.to_row()
    learned_keys = [c.key for c in learned]
    evicted_keys = [c.key for c in evicted]

    def write() -> str:
        sorted_row = {}
        for name in _ROW_ORDER:
            value = row[name]
            sorted_row[name] = repr(value) if isinstance(value, float) else value
        return _UNSORTED({"evicted": evicted_keys, "failure": sorted_row, "learned": learned_keys})

    payload = {"failure": row, "learned": learned_keys, "evicted": evicted_keys}
    return CanonicalPayload(payload, write)


_ROW_ORDER = tuple(sorted(attrs.fields_dict(Failure)))
"""A failure row's keys in sorted order (the canonical text's)."""
_UNSORTED = compact()


class _Writing:
    """The context of :meth:`FailureRecording._write` (a class: it runs on every failure)."""

    __slots__ = ("_fresh", "_memory", "_opened", "_recording", "_tx")
    _opened: contextlib.AbstractContextManager[Transaction]
    _tx: Transaction
    _recording: RecordingTransaction
    _fresh: bool

    def __init__(self, memory: FailureRecording) -> None:
        self._memory = memory

    def __enter__(self) -> RecordingTransaction:
        memory = self._memory
        self._opened = opened = memory.store.transaction(memory.scope)
        self._tx = tx = opened.__enter__()
        try:
            begin = tx.begin_generation
            self._fresh = fresh = begin == memory._generation or begin in memory._tokens
            self._recording = RecordingTransaction(tx, memory._index if fresh else None)
        except BaseException as exc:  # (nothing of the body ran: roll back, as with would)
            opened.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self._recording

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._opened.__exit__(kind, exc, tb)  # commits, or rolls back (never swallows)
        committed = self._tx.commit_generation
        if kind is None and self._fresh and committed is not None:
            memory = self._memory
            with memory._view:
                self._recording.apply_to(memory._index)
                memory._generation = committed
                memory._tokens = {committed: None}  # (every other token named the old state)
