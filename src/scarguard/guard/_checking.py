"""The check side of :class:`~scarguard.FailureMemory`: deciding whether a call may run.

The hot path of every guarded call: the store's change token, the cached constraint index
(reloaded only when the token moved), the fast path's screening of a tool the memory knows
nothing about, and the one place a refusal is decided and counted. A mixin of
``FailureMemory``; its public ``check`` and ``attempt`` build on it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from scarguard.adapters import ToolCallAdapter
from scarguard.adapters.protocol import Adapter
from scarguard.adapters.tool_call import Screen
from scarguard.canonical import storable_text
from scarguard.errors import StoreError
from scarguard.learning.convergence import Event, SessionTracker
from scarguard.learning.index import FAILED_TOOL, ConstraintIndex, keep_token
from scarguard.learning.keys import refusal_keys
from scarguard.learning.messages import decision_message
from scarguard.learning.observed import Revalidator
from scarguard.learning.progress import ProgressTracker
from scarguard.model import Call, Constraint, Decision, Level, Scope, Violation
from scarguard.policy import Policy
from scarguard.stores.protocol import Store
from scarguard.telemetry import decision_signals

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["UNLOADED", "CheckingMixin"]

UNLOADED: Hashable = object()
"""The generation of an index never loaded from the store."""
_SHADOW_ENTRIES = 1024
"""Would-be refusals awaiting their call's outcome, per memory (oldest dropped first)."""
_SCREENS = 4096
"""Tools whose fast-path screening is remembered, per memory."""
_OUTAGE_RETRY = 5.0
"""Seconds between attempts to reload the constraints while the store cannot be read."""
_log = logging.getLogger("scarguard")
_T = TypeVar("_T")


class CheckingMixin:
    """Check a call against the cached constraints (the state is ``FailureMemory``'s)."""

    store: Store
    policy: Policy
    scope: Scope
    clock: Callable[[], float]
    enforce: bool
    _batch: int
    _view: threading.RLock
    _worker: ThreadPoolExecutor | None
    _index: ConstraintIndex
    _generation: Hashable
    _tokens: dict[Hashable, None]
    _retry_at: float
    _outage: bool
    _tracker: SessionTracker
    _progress: ProgressTracker
    _revalidator: Revalidator
    _screens: dict[str, tuple[Adapter, Callable[..., Screen] | None]]
    _screened: tuple[str, Mapping[str, Any], Screen] | None
    _shapes: dict[tuple[str, ...], tuple[Adapter, Screen | None]]
    _adapters: dict[str, Adapter]
    adapter: Adapter
    _pending: list[Any]
    _pending_counts: Counter[str]
    _pending_refusals: int
    _shadow: dict[str, tuple[Constraint, ...]]

    if TYPE_CHECKING:  # provided by FailureMemory

        def adapter_for(self, tool: str) -> Adapter:
            """Return the adapter that describes ``tool``'s calls."""

        def flush(self) -> None:
            """Write the successes and refusals counted in memory."""

    def _current_index(self, now: float) -> ConstraintIndex:
        """Return the cached index, reloaded first if the store changed (I/O, no lock held).

        A store that cannot be read (a database server down or not answering) leaves the
        cached constraints in force; the read is tried again at most every
        ``_OUTAGE_RETRY`` seconds, so an outage does not slow every call down. Only a memory
        that never loaded its constraints raises (and a guarded tool then fails open).
        """
        generation = self.store.generation()
        if generation != self._generation:
            if generation in self._tokens:  # current, as another thread's connection saw
                self._generation = generation
                return self._index
            if self._generation is not UNLOADED and time.monotonic() < self._retry_at:
                return self._index
            try:
                rules = self.store.load_constraints(self.scope)
                failed = self.store.counters(self.scope, FAILED_TOOL)
            except StoreError as exc:
                if self._generation is UNLOADED:
                    raise
                self._retry_at = time.monotonic() + _OUTAGE_RETRY
                if not self._outage:
                    self._outage = True
                    _log.warning("%s; checking with the constraints loaded before", exc)
                return self._index
            self._outage = False
            tools = (k[len(FAILED_TOOL) :] for k, v in failed.items() if v.count > 0)
            index = ConstraintIndex.build(rules, now, tools)
            # The token was read before the load: if a writer committed in between, the
            # index may be newer than the token says, never older, and the next check
            # reloads once more.
            with self._view:
                self._index, self._generation = index, generation
                keep_token(self._tokens, generation)
            return index
        return self._index

    def _screen(self, tool: str) -> Callable[..., Screen] | None:
        """Return how to screen ``tool``'s calls for the fast path (``None``: never fast).

        Only the built-in tool-call adapter's own description is known to make calls
        without parameters whose fingerprint is :meth:`ToolCallAdapter.fingerprint`; a tool
        whose name would be stored otherwise than given takes the full path too.
        """
        adapter = self.adapter_for(tool)
        known = self._screens.get(tool)
        if known is not None and known[0] is adapter:
            return known[1]
        screen: Callable[..., Screen] | None = None
        plain = isinstance(tool, str) and bool(tool) and storable_text(tool) == tool
        if isinstance(adapter, ToolCallAdapter) and plain:
            kind = type(adapter)
            own = (
                kind.describe is ToolCallAdapter.describe
                and kind.fingerprint is ToolCallAdapter.fingerprint
            )
            screen = adapter.screen if own else None
        if len(self._screens) < _SCREENS:
            self._screens[tool] = (adapter, screen)
        return screen

    def _raw_fingerprint(self, tool: str, args: Mapping[str, Any]) -> str:
        """The fingerprint of a call described only now (loop detection of fast calls)."""
        return self.adapter_for(tool).describe(tool, args).fingerprint

    def _shape(self, tool: str, args: Mapping[str, Any]) -> Screen | None:
        """Return the fast path's screen of a call (``None``: the tool is never fast).

        Kept per tool and argument names when the adapter says the names alone decide it
        (:meth:`ToolCallAdapter.screen_of_names`); otherwise the call is screened by value.
        """
        key = (tool, *args)
        known = self._shapes.get(key)
        adapter = self._adapters.get(tool, self.adapter)
        if known is not None and known[0] is adapter:
            fixed = known[1]
            if fixed is not None:
                return fixed
        screen = self._screen(tool)
        if screen is None:
            return None
        if known is None or known[0] is not adapter:
            assert isinstance(adapter, ToolCallAdapter)  # the only one with a screen
            fixed = adapter.screen_of_names(tool, args)
            if len(self._shapes) < _SCREENS:
                self._shapes[key] = (adapter, fixed)
            if fixed is not None:
                return fixed
        shape: Screen = screen(tool, args)
        return shape

    def _clean_check(
        self,
        tool: str,
        args: Mapping[str, Any],
        targets: Sequence[str] | None = None,
        nowait: bool = False,
        signals: bool = True,
    ) -> Screen | None:
        """Allow the call without describing it if nothing known applies (the fast path).

        Returns its screen when nothing the memory knows can apply to the call: its tool
        never failed and has no constraint, no constraint of its action class, none about
        targets when it may have some, and no loop of the tool's calls running (see
        :meth:`ConstraintIndex.quiet`). Then no fingerprint is computed, no :class:`Call`
        built; ``None`` sends the call through :meth:`check`. With ``nowait`` nothing
        touches the store (``None`` when the index's currency is not known without I/O);
        without, a ``None`` returned (not raised) leaves the index current as of this check
        (:meth:`_check_indexed` may decide the described call). ``signals``: send the
        decision's signals (``False``: the caller knows nobody listens).
        """
        if nowait:
            if not self._current_without_io():
                return None
            index = self._index
        elif (token := self.store.generation()) == self._generation or token in self._tokens:
            index = self._index
        else:
            index = self._current_index(self.clock())
        if index.concerns(tool):  # (what quiet() asks first, before any screening)
            return None
        known = self._shapes.get((tool, *args))  # (the hit of _shape, inline: every call)
        shape = known[1] if known is not None and known[0] is self.adapter_for(tool) else None
        if shape is None:
            shape = self._shape(tool, args)
            if shape is None:
                return None
        if not index.quiet(tool, shape.action_class, shape.may_target or bool(targets)):
            return None
        if self._progress.hot_for(tool):
            return None
        if signals:
            decision_signals(tool, "allowed", (), self.scope)
        return shape

    def _quick_check(
        self,
        tool: str,
        args: Mapping[str, Any],
        targets: Sequence[str] | None,
        nowait: bool = False,
    ) -> bool:
        """Return whether the call is allowed on the fast path (see :meth:`_clean_check`)."""
        shape = self._clean_check(tool, args, targets, nowait)
        if shape is None:
            return False
        self._screened = (tool, args, shape)  # the record of this call reuses it
        return True

    def _check_described(self, call: Call, enforce: bool | None = None) -> Decision:
        """:meth:`check` of a call :meth:`describe` already made (not described again)."""
        now = self.clock()
        enforcing = self.enforce if enforce is None else bool(enforce)
        decision, full = self._decide(call, self._current_index(now), now, enforcing)
        if full:
            self.flush()
        return decision

    def _check_indexed(self, call: Call, enforce: bool | None = None) -> Decision | None:
        """:meth:`_check_described` against the index as it is (a check just validated it).

        Returns:
            The decision, or ``None`` when nothing applies to the call: it is allowed with
            nothing to say (``Decision(True, call)``, not built).
        """
        now = self.clock()
        hits = self._hits(call, self._index, now)
        if hits is None:
            return None
        enforcing = self.enforce if enforce is None else bool(enforce)
        decision, full = self._decided(call, hits, now, enforcing)
        if full:
            self.flush()
        return decision

    def _check_nowait(self, call: Call, enforce: bool | None = None) -> Decision | None:
        """Decide from state held in memory only; ``None`` when the store must be asked.

        What an event loop calls: it never waits on the store. ``None`` means the cached
        constraints may be out of date (never loaded, or the store's cheap change token is
        not known without I/O, or it moved), or a constraint the call runs into must be
        revalidated by the observer: then run :meth:`check` off the loop. A refusal
        counted here is written with a later batch, off the loop.
        """
        if not self._current_without_io():
            return None
        now = self.clock()
        enforcing = self.enforce if enforce is None else bool(enforce)
        index = self._index
        if index:
            with self._view:
                hits = index.match(call, self.adapter_for(call.tool), now)
            if any(self._revalidator.needs_observation(v.constraint) for v in hits):
                return None
        return self._decide(call, index, now, enforcing)[0]

    def _forget_index(self) -> None:
        """Have the constraint index loaded again before it is next used.

        For a store that lost its rules by other means than a transaction (``clear``).
        """
        with self._view:
            self._generation = UNLOADED
            self._tokens = {}

    def _load_index_once(self) -> None:
        """Load the constraint index if it never was (a store that cannot be read: not).

        A failure that teaches reads the constraints it updates from a current index rather
        than from the store: a memory that records before it ever checked loads it once.
        """
        if self._generation is UNLOADED:
            with contextlib.suppress(StoreError):
                self._current_index(self.clock())

    def _current_without_io(self) -> bool:
        """Return whether the cached index is known current without waiting on the store.

        The store's ``peek_generation`` answers from what it holds in memory (``None``:
        not known so); a store without one is never known current this way.
        """
        if self._generation is UNLOADED:
            return False
        peek = getattr(self.store, "peek_generation", None)
        token = peek() if peek is not None else None
        return token is not None and (token == self._generation or token in self._tokens)

    def _decide(
        self, call: Call, index: ConstraintIndex, now: float, enforce: bool
    ) -> tuple[Decision, bool]:
        """Return the decision on ``call`` and whether the batch of pending counts is full.

        The one place a refusal is decided (and, in shadow mode, turned into an allowed
        decision that remembers it would have refused). Only a call that runs into a
        constraint is observed (a stale constraint refuses nothing): the hot path stays
        untouched.
        """
        hits = self._hits(call, index, now)
        if hits is None:
            return Decision(True, call), False
        return self._decided(call, hits, now, enforce)

    def _hits(self, call: Call, index: ConstraintIndex, now: float) -> list[Violation] | None:
        """Return the constraints ``call`` runs into, not stale; ``None`` when nothing applies.

        ``None`` (the common case) is an allowed call with nothing to say, its decision
        signalled already.
        """
        hot = self._progress.hot
        indexed = bool(index.by_key)
        if not indexed and not hot:
            decision_signals(call.tool, "allowed", (), self.scope)
            return None
        if indexed:
            view = self._view  # (acquire and release: a with block costs twice as much here)
            view.acquire()
            try:
                hits = index.match(call, self.adapter_for(call.tool), now)
            finally:
                view.release()
        else:
            hits = []
        if hits:
            return [v for v in hits if not self._revalidator.stale(v.constraint)]
        if not hot:
            decision_signals(call.tool, "allowed", (), self.scope)
            return None
        return hits

    def _decided(
        self, call: Call, hits: list[Violation], now: float, enforce: bool
    ) -> tuple[Decision, bool]:
        """:meth:`_decide` on the constraints the call runs into (and a loop it may be in)."""
        progress = self._progress
        with self._view:
            loop = progress.violation(call, now) if progress.hot else None
            if loop is not None:
                hits.append(loop)
            blocks = tuple(v for v in hits if v.constraint.level is Level.BLOCK)
            warnings = tuple(v for v in hits if v.constraint.level is not Level.BLOCK)
            full = self._count_refusal(call, blocks, now, enforce) if blocks else False
        blocking = tuple(v.constraint for v in blocks)
        if blocks and not enforce:
            decision_signals(call.tool, "would_refuse", blocking, self.scope)
            shadowed = decision_message(call, (), warnings)
            return Decision(True, call, blocks, warnings, shadowed, shadow=True), full
        decision_signals(call.tool, "refused" if blocks else "allowed", blocking, self.scope)
        message = decision_message(call, blocks, warnings)
        return Decision(not blocks, call, blocks, warnings, message), full

    def _off_loop(self, fn: Callable[..., _T], /, *args: Any) -> Awaitable[_T]:
        """Run ``fn(*args)`` on this memory's store worker thread; await the result.

        The event loop only schedules the call: store round trips (records, flushes,
        reloads) and any lock they wait for happen on the worker. One worker per memory
        keeps this memory's writes in the order they were made.
        """
        import asyncio
        import functools

        loop = asyncio.get_running_loop()
        return loop.run_in_executor(self._store_worker(), functools.partial(fn, *args))

    def _store_worker(self) -> ThreadPoolExecutor:
        worker = self._worker
        if worker is None:
            from concurrent.futures import ThreadPoolExecutor

            with self._view:
                if self._worker is None:
                    self._worker = ThreadPoolExecutor(1, thread_name_prefix="scarguard-store")
                worker = self._worker
        return worker

    def _count_refusal(
        self, call: Call, blocks: Sequence[Violation], now: float, enforce: bool
    ) -> bool:
        """Count a refusal (or a would-be one) for the next batched write (hold ``_view``).

        Returns:
            Whether the batch is full (the caller flushes, outside ``_view``).
        """
        blocking = tuple({v.constraint.key: v.constraint for v in blocks}.values())
        self._pending_refusals += 1
        self._pending_counts.update(
            refusal_keys(call.tool, blocking, now, enforced=enforce)
        )
        if enforce:
            self._tracker.note(Event.BLOCKED, call.action_class)
        else:
            self._shadow.pop(call.fingerprint, None)
            self._shadow[call.fingerprint] = blocking
            if len(self._shadow) > _SHADOW_ENTRIES:
                del self._shadow[next(iter(self._shadow))]
        return len(self._pending) + self._pending_refusals >= self._batch
