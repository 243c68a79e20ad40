"""The success side of :class:`~scarguard.FailureMemory`: counting what went well.

A success is counted in memory (the session's progress, loop detection, ``ok:<tool>``)
and written with the next batch; one that may disprove a constraint lifts it in a write
transaction of its own. A call the fast path allowed is counted without being described.
A mixin of ``FailureMemory``; its public ``record`` and ``flush`` build on it.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from scarguard._results import RecordResult
from scarguard.adapters import ToolCallAdapter
from scarguard.adapters._shell import reports_no_change
from scarguard.adapters.protocol import Adapter
from scarguard.adapters.tool_call import Screen
from scarguard.guard._checking import UNLOADED
from scarguard.learning.convergence import Event, SessionTracker
from scarguard.learning.index import ConstraintIndex, RecordingTransaction
from scarguard.learning.keys import class_prefixes, exact_prefix
from scarguard.learning.lifting import lift_on_success, liftable
from scarguard.learning.progress import (
    NO_RESULT,
    ProgressTracker,
    changes_results,
    result_digest,
)
from scarguard.model import Call, Constraint, Scope
from scarguard.policy import Policy
from scarguard.stores.protocol import Store, Transaction
from scarguard.telemetry import outcome_signals

__all__ = ["SuccessMixin", "success_resets"]


def success_resets(
    pending: Sequence[Call | tuple[str, str | None]],
) -> tuple[Counter[str], list[str]]:
    """Return a batch's successes per tool and the counter prefixes they reset.

    What :func:`~scarguard.learning.lifting.reset_keys_for_success` says of each described
    success (its exact-call prefix, and its action class's strategy prefixes), and the
    strategy prefixes of each fast-path one (``(tool, action class)``: a tool that never
    failed), each prefix once. An action class's prefixes are made once per batch, not once
    per success: a batch holds up to ``success_batch`` calls, mostly of a few classes.
    """
    per_tool: Counter[str] = Counter()
    exact: dict[str, None] = {}
    classes: dict[str, None] = {}
    for done in pending:
        if isinstance(done, Call):
            tool, action_class = done.tool, done.action_class
            exact[exact_prefix(done)] = None
        else:
            tool, action_class = done
        per_tool[tool] += 1
        if action_class:
            classes[action_class] = None
    prefixes = list(exact)
    for action_class in classes:
        prefixes.extend(class_prefixes(action_class))
    return per_tool, prefixes


class SuccessMixin:
    """Count successes and write them in batches (the state is ``FailureMemory``'s)."""

    store: Store
    policy: Policy
    scope: Scope
    clock: Callable[[], float]
    _batch: int
    _lock: threading.RLock
    _view: threading.RLock
    _index: ConstraintIndex
    _generation: Hashable
    _tracker: SessionTracker
    _progress: ProgressTracker
    _screened: tuple[str, Mapping[str, Any], Screen] | None
    _adapters: dict[str, Adapter]
    adapter: Adapter
    _last_ok: dict[str, Call]
    _pending: list[Call | tuple[str, str | None]]
    _pending_counts: Counter[str]
    _pending_refusals: int
    _shadow: dict[str, tuple[Constraint, ...]]

    if TYPE_CHECKING:  # provided by FailureMemory and its other mixins

        def adapter_for(self, tool: str) -> Adapter:
            """Return the adapter that describes ``tool``'s calls."""

        def flush(self) -> None:
            """Write the successes and refusals counted in memory."""

        def _current_index(self, now: float) -> ConstraintIndex:
            """Return the cached index, reloaded first if the store changed."""

        def _shape(self, tool: str, args: Mapping[str, Any]) -> Screen | None:
            """Return the fast path's screen of a call (``None``: never fast)."""


        @contextmanager
        def _write(self) -> Iterator[RecordingTransaction]:
            """Open a write transaction that keeps the cached index in step."""

    def _record_success(
        self, call: Call, score: float | None, result: Any = NO_RESULT, *, nowait: bool = False
    ) -> RecordResult | None:
        """Count a success; lift what it disproves; flush a full batch.

        With ``nowait`` nothing touches the store: ``None`` is returned instead when the
        success needs a round trip (a lift, a full batch, an index never loaded).
        """
        lifted = self._count_described(call, score, result, nowait)
        if lifted is None:
            return None
        return RecordResult(None, (), lifted, self._tracker.convergence)

    def _count_described(
        self, call: Call, score: float | None, result: Any = NO_RESULT, nowait: bool = False
    ) -> tuple[Constraint, ...] | None:
        """:meth:`_record_success`, returning only what it lifted (``None``: deferred)."""
        tool = call.tool
        adapter = self.adapter_for(tool)
        if self._generation is UNLOADED:
            if nowait:
                return None
            self._current_index(self.clock())
        # check() revalidated the index just before this call ran; asking the store again
        # would double the cost of every success for a lift that can wait one call.
        index = self._index
        mutating = adapter.mutating(call)
        lift = quiet = False
        if index.by_key:
            # "Already up to date.": this run changed nothing (asked only when something
            # may lift and the call would change the world otherwise: then it matters)
            quiet = mutating and reports_no_change(result)
            found = liftable(
                index, call, adapter, self.policy, changed_nothing=quiet, mutating=mutating
            )
            lift = bool(found)
        full = len(self._pending) + self._pending_refusals + 1 >= self._batch
        if nowait and (lift or full):
            return None
        changing = changes_results(call.action_class, call.args, mutating)  # (may_change)
        digest = None if changing or result is NO_RESULT else result_digest(result)
        now = self.clock()
        view = self._view  # (acquire and release: a with block costs twice as much here)
        view.acquire()
        try:
            if score is None:
                self._tracker.ok(call.action_class)
            else:
                self._tracker.note(Event.OK, call.action_class, score)
            if call.params:
                self._last_ok[tool] = call
            # count it towards a no-progress loop, or forget the loops it may end (after the
            # tracker's note, which clears the loop's reason)
            progress = self._progress
            if changing:
                progress.changed()
            elif digest is not None:
                count = progress.returned(call.fingerprint, digest, now, tool=tool)
                if count >= self.policy.loop_warn:
                    since = progress.since(call.fingerprint)
                    reason = progress.reason(count, now if since is None else since)
                    self._tracker.loop_reason = reason
            else:
                progress.forget(call.fingerprint, tool=tool)
            if not lift:
                self._pending.append(call)
        finally:
            view.release()
        lifted: tuple[Constraint, ...] = ()
        if lift:
            with self._lock:
                now = self.clock()
                with self._view:
                    pending, self._pending = [*self._pending, call], []
                with self._keeping(pending) as counts, self._write() as tx:
                    self._apply_successes(tx, pending, counts, now)
                    lifted = tuple(
                        lift_on_success(
                            tx, call, index, adapter, self.policy, now, changed_nothing=quiet
                        )
                    )
                    if lifted:  # (none when another memory lifted them meanwhile)
                        keys = [c.key for c in lifted]
                        tx.receipt("lift", {"by": call.fingerprint, "lifted": keys}, now)
        elif full:
            self.flush()
        outcome_signals(call.tool, None, None, (), lifted, self.scope)
        return lifted

    def _record_success_nowait(
        self,
        call: Call | str,
        duration_ms: float | None = None,
        result: Any = NO_RESULT,
        args: Mapping[str, Any] | None = None,
        targets: Sequence[str] | None = None,
    ) -> RecordResult | None:
        """Count a success in memory if that needs no store round trip; else return ``None``.

        What an event loop calls after a guarded call succeeded: the common success is a
        counter bumped in memory (flushed later, in a batch, off the loop). When the success
        needs the store (it lifts a constraint, or fills the batch), ``None`` says to
        :meth:`record` it off the loop instead.
        """
        if self._shadow:
            return None
        if not isinstance(call, Call):
            return self._quick_success(call, args, targets, result, None, nowait=True)
        return self._record_success(call, None, result, nowait=True)

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
        """Count a success without describing the call, when nothing can need it described.

        The call's tool never failed and nothing indexed applies to it (the test of
        :meth:`_quick_check`), and its success lifts nothing (it does not change the world,
        or no constraint is indexed). It is counted in memory: the session's progress, its
        result for loop detection (by digest, fingerprinted only if a result of the tool
        repeats: :meth:`ProgressTracker.returned_raw`), and ``ok:<tool>`` with its action
        class's strategy counters reset at the next batched write. A tool that never failed
        has no failure record of its own to reset. ``None`` says to take the full path.
        """
        if not isinstance(tool, str):
            return None
        if args is None:
            args = {}
        elif type(args) is not dict and not isinstance(args, Mapping):
            return None
        last = self._screened
        if last is not None and last[1] is args and last[0] == tool:
            shape = last[2]  # screened by the check just before (the same arguments object)
        else:
            found = self._shape(tool, args)
            if found is None:
                return None
            shape = found
        if not self._count_success(tool, args, targets, shape, result, score, nowait):
            return None
        return RecordResult(None, (), (), self._tracker.convergence)

    def _count_success(
        self,
        tool: str,
        args: Mapping[str, Any],
        targets: Sequence[str] | None,
        shape: Screen,
        result: Any,
        score: float | None = None,
        nowait: bool = False,
        signals: bool = True,
    ) -> bool:
        """Count the success of a call screened as ``shape`` (see :meth:`_quick_success`).

        ``signals``: send the outcome's signals (``False``: the caller knows nobody listens).

        Returns:
            Whether it was counted; ``False`` says to record it by the full path.
        """
        if self._shadow or self._generation is UNLOADED:
            return False
        index = self._index
        if not index.quiet(tool, shape.action_class, shape.may_target or bool(targets)):
            return False
        if index.by_key:  # something a mutating success could lift
            mutating = shape.mutating
            if mutating is None:  # kept by argument names: the values decide
                adapter = self._adapters.get(tool, self.adapter)
                if not isinstance(adapter, ToolCallAdapter):
                    return False
                mutating = adapter.mutates(tool, shape.action_class, args)
            if mutating:
                return False  # it may lift other calls' bans: the full path looks
        full = len(self._pending) + self._pending_refusals + 1
        if nowait and full >= self._batch:
            return False
        changing = shape.changes
        if changing is None:
            changing = changes_results(shape.action_class, args, bool(shape.mutating))
        progress = self._progress
        if changing:
            digest, now = None, 0.0
        else:
            digest = None if result is NO_RESULT else result_digest(result)
            now = self.clock()
        view = self._view  # (acquire and release: a with block costs twice as much here)
        view.acquire()
        try:
            if changing:
                progress.changed()
            elif not progress.returned_raw(tool, args, digest, now):
                return False  # one of its results repeats, or a run may end: fingerprint it
            if score is None:
                self._tracker.ok(shape.action_class)
            else:
                self._tracker.note(Event.OK, shape.action_class, score)
            self._pending.append((tool, shape.action_class))
        finally:
            view.release()
        if full >= self._batch:
            self.flush()
        if signals:
            outcome_signals(tool, None, None, (), (), self.scope)
        return True

    @contextmanager
    def _keeping(self, pending: list[Call | tuple[str, str | None]]) -> Iterator[Counter[str]]:
        """Take the pending counts; put them and ``pending`` back if the write fails."""
        with self._view:
            counts, self._pending_counts = self._pending_counts, Counter()
            refusals, self._pending_refusals = self._pending_refusals, 0
        try:
            yield counts
        except BaseException:
            with self._view:
                self._pending[:0] = pending
                self._pending_counts.update(counts)
                self._pending_refusals += refusals
            raise

    def _apply_successes(
        self,
        tx: Transaction,
        pending: Sequence[Call | tuple[str, str | None]],
        counts: Counter[str],
        now: float,
    ) -> None:
        """Write the batched counts: successes, refusals, and the counters successes reset.

        A described success resets its own failure record and its action class's strategy
        counters; a fast-path one (a tool that never failed) only the latter
        (:func:`success_resets`). The counters go in one ``bump_many`` per distinct amount,
        the resets in one ``reset_many``.
        """
        per_tool, prefixes = success_resets(pending)
        amounts = Counter(counts)
        amounts.update({f"ok:{tool}": n for tool, n in per_tool.items()})
        by_amount: dict[int, list[str]] = {}
        for key, n in amounts.items():
            by_amount.setdefault(n, []).append(key)
        for n, keys in by_amount.items():
            tx.bump_many(keys, now, n)
        if not pending:
            return
        tx.reset_many(prefixes)
        tools = dict(sorted(per_tool.items()))
        tx.receipt("successes", {"count": len(pending), "tools": tools}, now)

    def _flush(self) -> None:
        """Write the successes and refusals counted in memory (what ``flush`` does)."""
        with self._lock:
            with self._view:
                pending, self._pending = self._pending, []
            if not pending and not self._pending_counts:
                return
            now = self.clock()
            with self._keeping(pending) as counts, self._write() as tx:
                self._apply_successes(tx, pending, counts, now)
