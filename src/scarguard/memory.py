"""The engine: check a call before it runs, record what happened after, learn, report.

:class:`FailureMemory` is the one object everything else delegates to (the decorator, the
prompt guard, the CLI). Its hot path is ``check()``: a generation token from the store, a
dictionary lookup in the cached constraint index, nothing else. Successes are counted in
memory and flushed in batches; a failure is one write transaction.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
import uuid
import weakref
from collections import Counter
from collections.abc import Awaitable, Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from scarguard import _fork
from scarguard.adapters import ToolCallAdapter
from scarguard.adapters._shell import reports_no_change
from scarguard.adapters.protocol import Adapter
from scarguard.adapters.tool_call import Screen
from scarguard.canonical import storable_text
from scarguard.errors import ConfigurationError, StoreError
from scarguard.guard.step import Attempt
from scarguard.learning._recording import FailureRecording
from scarguard.learning.convergence import Event, SessionTracker
from scarguard.learning.index import FAILED_TOOL, ConstraintIndex
from scarguard.learning.keys import class_prefixes
from scarguard.learning.lifting import lift_on_success, liftable, reset_keys_for_success
from scarguard.learning.messages import decision_message
from scarguard.learning.observed import Revalidator
from scarguard.learning.progress import (
    NO_RESULT,
    ProgressTracker,
    changes_results,
    may_change,
    result_digest,
)
from scarguard.maintenance import MaintenanceMixin
from scarguard.model import (
    Call,
    Constraint,
    ConstraintKind,
    Convergence,
    Decision,
    Failure,
    Level,
    Outcome,
    Pattern,
    RecordResult,
    Scope,
    Violation,
)
from scarguard.naming.blame import classify_blame
from scarguard.naming.classify import Classification, error_parts
from scarguard.naming.retry_after import retry_after
from scarguard.naming.signatures import Signature, SignatureBank
from scarguard.observe import LocalObserver, Observer
from scarguard.policy import Policy
from scarguard.redact import Redactor
from scarguard.refusals import refusal_keys
from scarguard.stores.factory import open_store
from scarguard.stores.protocol import Store, Transaction
from scarguard.summary import MemoryStats, build_patterns, build_stats, signature_named

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor
from scarguard.telemetry import decision_signals, outcome_signals
from scarguard.tenancy import derive_project

__all__ = ["Classification", "FailureMemory", "default_memory", "set_default_memory"]

_MEMORIES: weakref.WeakSet[FailureMemory] = weakref.WeakSet()
_SHADOW_ENTRIES = 1024
"""Would-be refusals awaiting their call's outcome, per memory (oldest dropped first)."""
_UNLOADED: Hashable = object()
"""The generation of an index never loaded from the store."""
_SCREENS = 4096
"""Tools whose fast-path screening is remembered, per memory."""
_OUTAGE_RETRY = 5.0
"""Seconds between attempts to reload the constraints while the store cannot be read."""
_log = logging.getLogger("scarguard")
_T = TypeVar("_T")


class FailureMemory(FailureRecording, MaintenanceMixin):
    """Remember failed tool calls and refuse the ones known to fail again.

    Args:
        path: Where the memory lives: ``None`` for the default SQLite file
            (``SCARGUARD_PATH`` or ``.scarguard/memory.db``), ``":memory:"``, a ``.db``,
            ``.sqlite`` or ``.sqlite3`` file, a ``.json`` file, a ``postgresql://`` URL, or a
            :class:`~scarguard.stores.Store`.
        workspace: Tenant: the workspace records belong to.
        project: Tenant: the project records belong to (default: derived from the project
            root, the git top level of the working directory or else the directory itself,
            so repositories sharing one store stay apart; see
            :func:`~scarguard.tenancy.derive_project`).
        policy: Every threshold of the learning rules.
        adapter: How calls are described (default :class:`~scarguard.adapters.ToolCallAdapter`).
        adapters: Adapters for particular tools, by tool name.
        signatures: The signature bank errors are matched against.
        redactor: Redacts secrets before anything is stored; a :class:`Redactor` or a plain
            ``str -> str`` callable applied after the default redaction.
        clock: Returns the time in seconds since the epoch (inject one in tests).
        session: This process's session id (default: a fresh random id).
        durable: Make every SQLite write survive power loss (``synchronous=FULL``).
        receipts: Keep a receipt chain (default: on for files, off in memory).
        success_batch: Successes (and refusals) counted in memory before one batched write.
        enforce: ``False`` for shadow mode: every decision is computed and counted, nothing
            is refused; each call that would have been refused runs, and its real outcome
            is counted (``stats().refusals``) instead of being learned from, so the memory
            learns exactly what an enforcing one would.
        root: The agent's workspace (default: the working directory when the memory is
            created): paths are normalised against it and the default observer reads it.
        observer: Reports state tokens of the paths a failure depends on (default: a
            :class:`~scarguard.observe.LocalObserver` under ``root``). A constraint whose
            paths changed is stale and refuses nothing; observation only ever lifts.

    Raises:
        ConfigurationError: An option is invalid.
        StoreError: The store cannot be opened.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | Store | None = None,
        *,
        workspace: str = "default",
        project: str | None = None,
        policy: Policy | None = None,
        adapter: Adapter | None = None,
        adapters: Mapping[str, Adapter] | None = None,
        signatures: SignatureBank | None = None,
        redactor: Redactor | Callable[[str], str] | None = None,
        clock: Callable[[], float] | None = None,
        session: str | None = None,
        durable: bool = False,
        receipts: bool | None = None,
        success_batch: int = 64,
        enforce: bool = True,
        root: str | os.PathLike[str] | None = None,
        observer: Observer | None = None,
    ) -> None:
        if project is None:
            project = derive_project()
        for name, value in (("workspace", workspace), ("project", project)):
            if not isinstance(value, str) or not value.strip():
                raise ConfigurationError(f"{name} must be a non-empty string, got {value!r}")
        if policy is not None and not isinstance(policy, Policy):
            raise ConfigurationError(
                f"policy must be a scarguard.Policy, got {type(policy).__name__}"
            )
        if not isinstance(success_batch, int) or success_batch < 1:
            raise ConfigurationError(
                f"success_batch must be an integer >= 1, got {success_batch!r}"
            )
        if observer is not None and not isinstance(observer, Observer):
            raise ConfigurationError(f"observer: {observer!r} does not implement Observer")
        self.policy = policy or Policy()
        self.clock: Callable[[], float] = clock or time.time
        try:
            self.root = os.path.abspath(os.fspath(root) if root is not None else os.getcwd())
        except (TypeError, OSError) as exc:
            raise ConfigurationError(f"root must be a directory path, got {root!r}") from exc
        self.observer: Observer = observer or LocalObserver(self.root)
        self._revalidator = Revalidator(self.observer)
        self.adapter: Adapter = _rooted(adapter or ToolCallAdapter(), self.root)
        self._adapters = {tool: _rooted(a, self.root) for tool, a in (adapters or {}).items()}
        for tool, candidate in [("adapter", self.adapter), *self._adapters.items()]:
            if not isinstance(candidate, Adapter):
                raise ConfigurationError(f"{tool}: {candidate!r} does not implement Adapter")
        self._signatures = signatures  # None: the default bank, built on first use
        if isinstance(redactor, Redactor) or redactor is None:
            self.redactor = redactor or Redactor()
        else:
            self.redactor = Redactor(extra=redactor)
        self._fixed_session = session is not None
        self.scope = Scope(workspace, project, session or uuid.uuid4().hex[:12])
        self.store: Store = open_store(path, durable=durable, receipts=receipts)
        self._batch = success_batch
        # Two locks, so that a check never waits on the store: ``_lock`` serialises this
        # memory's writes and is held across store I/O; ``_view`` guards what a check reads
        # and counts (the index, its generation, the session tracker, pending work) and is
        # only ever held for in-memory work. Lock order: ``_lock`` before ``_view``.
        self._lock = threading.RLock()
        self._view = threading.RLock()
        self._worker: ThreadPoolExecutor | None = None
        self._index = ConstraintIndex()
        self._generation: Hashable = _UNLOADED
        self._retry_at = 0.0  # while the store cannot be read: when to try again
        self._outage = False
        self._tracker = SessionTracker(self.policy)
        self._progress = ProgressTracker(self.policy, self._raw_fingerprint)
        self._screens: dict[str, tuple[Adapter, Callable[..., Screen] | None]] = {}
        self._screened: tuple[str, Mapping[str, Any], Screen] | None = None
        self._last_ok: dict[str, Call] = {}
        self._described: Call | None = None  # the latest call describe() made safe
        # successes to write: described calls, and (tool, action class) of fast-path ones
        self._pending: list[Call | tuple[str, str | None]] = []
        self._pending_counts: Counter[str] = Counter()
        self._pending_refusals = 0
        self.enforce = bool(enforce)
        self._shadow: dict[str, tuple[Constraint, ...]] = {}
        self._redacted: dict[str, str] = {}
        self._redacted_by = self.redactor
        _MEMORIES.add(self)
        atexit.register(_flush_at_exit, weakref.ref(self))
        self._apply_retention()

    @property
    def signatures(self) -> SignatureBank:
        """The signature bank that names failures.

        The default bank is built on first use: compiling its patterns is a good part of a
        process's start, and a process that only checks calls (a hook answering one
        ``PreToolUse``) never needs it.
        """
        bank = self._signatures
        if bank is None:
            from scarguard.naming.signatures import DEFAULT_BANK

            bank = self._signatures = DEFAULT_BANK
        return bank

    @signatures.setter
    def signatures(self, bank: SignatureBank) -> None:
        self._signatures = bank

    def __repr__(self) -> str:
        s = self.scope
        where = self.store.location
        return f"FailureMemory({where!r}, workspace={s.workspace!r}, project={s.project!r})"

    def __enter__(self) -> FailureMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- describing calls ------------------------------------------------------------------

    def adapter_for(self, tool: str) -> Adapter:
        """Return the adapter that describes ``tool``'s calls."""
        return self._adapters.get(tool, self.adapter)

    def describe(
        self,
        tool: str | Call,
        args: Mapping[str, Any] | None = None,
        *,
        targets: Sequence[str] | None = None,
    ) -> Call:
        """Return the :class:`Call` the adapter makes of a tool name and its arguments.

        Its targets are redacted (:meth:`Redactor.target`): what is stored, keyed and shown
        never holds a secret a path or URL carried.
        """
        if isinstance(tool, Call):
            if tool is self._described:
                return tool  # made safe by this memory just before (check, then record)
            return self._safe_targets(tool)
        if not isinstance(tool, str) or not tool:
            raise ConfigurationError(f"tool must be a non-empty string or a Call, got {tool!r}")
        if args is not None and not isinstance(args, Mapping):
            raise ConfigurationError(
                f"args of {tool!r} must be a mapping of argument names, got {type(args).__name__}"
            )
        if isinstance(targets, str):
            targets = (targets,)
        call = self.adapter_for(tool).describe(tool, args or {}, targets, self._last_ok.get(tool))
        self._described = call = self._safe_targets(call)
        return call

    def _safe_targets(self, call: Call) -> Call:
        safe = tuple(self.redactor.target(t) for t in call.targets)
        tool = storable_text(call.tool)
        if safe == call.targets and tool == call.tool:
            return call
        return attrs.evolve(call, tool=tool, targets=safe)

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

    # -- the two calls of the hot path -----------------------------------------------------

    def _current_index(self, now: float) -> ConstraintIndex:
        """Return the cached index, reloaded first if the store changed (I/O, no lock held).

        A store that cannot be read (a database server down or not answering) leaves the
        cached constraints in force; the read is tried again at most every
        ``_OUTAGE_RETRY`` seconds, so an outage does not slow every call down. Only a memory
        that never loaded its constraints raises (and a guarded tool then fails open).
        """
        generation = self.store.generation()
        if generation != self._generation:
            if self._generation is not _UNLOADED and time.monotonic() < self._retry_at:
                return self._index
            try:
                rules = self.store.load_constraints(self.scope)
                failed = self.store.counters(self.scope, FAILED_TOOL)
            except StoreError as exc:
                if self._generation is _UNLOADED:
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

    def _quick_check(
        self,
        tool: str,
        args: Mapping[str, Any],
        targets: Sequence[str] | None,
        nowait: bool = False,
    ) -> bool:
        """Return whether the call is allowed without describing it (the fast path).

        True when nothing the memory knows can apply to the call: its tool never failed and
        has no constraint, no constraint of its action class, none about targets when it may
        have some, and no loop of the tool's calls running (see
        :meth:`ConstraintIndex.quiet`). Then no fingerprint is computed, no :class:`Call`
        built; ``False`` sends the call through :meth:`check`. With ``nowait`` nothing
        touches the store (``False`` when the index's currency is not known without I/O).
        """
        screen = self._screen(tool)
        if screen is None:
            return False
        if nowait:
            if self._generation is _UNLOADED:
                return False
            peek = getattr(self.store, "peek_generation", None)
            if peek is None or peek() != self._generation:
                return False
            index = self._index
        elif self.store.generation() == self._generation:
            index = self._index
        else:
            index = self._current_index(self.clock())
        shape = screen(tool, args)
        if not index.quiet(tool, shape.action_class, shape.may_target or bool(targets)):
            return False
        self._screened = (tool, args, shape)  # the record of this call reuses it
        if self._progress.hot_for(tool):
            return False
        decision_signals(tool, "allowed", (), self.scope)
        return True

    def check(
        self,
        tool: str | Call,
        args: Mapping[str, Any] | None = None,
        *,
        targets: Sequence[str] | None = None,
        enforce: bool | None = None,
    ) -> Decision:
        """Decide whether a call may run.

        Every refusal is counted (``stats().refusals``), so call it once per call the agent
        makes, as :meth:`attempt` does.

        Args:
            tool: The tool's name, or a :class:`Call` built by :meth:`describe`.
            args: The call's arguments by name.
            targets: Explicit targets (default: extracted from the arguments).
            enforce: ``False``: decide in shadow mode (allow and count a would-be refusal)
                for this call; ``True``: refuse; ``None``: as the memory's ``enforce``.

        Returns:
            A :class:`Decision`; when refused, ``message`` tells the LLM why and what to do.
        """
        return self._check_described(self.describe(tool, args, targets=targets), enforce)

    def _check_described(self, call: Call, enforce: bool | None = None) -> Decision:
        """:meth:`check` of a call :meth:`describe` already made (not described again)."""
        now = self.clock()
        enforcing = self.enforce if enforce is None else bool(enforce)
        decision, full = self._decide(call, self._current_index(now), now, enforcing)
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
        if self._generation is _UNLOADED:
            return None
        peek = getattr(self.store, "peek_generation", None)
        if peek is None or peek() != self._generation:
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

    def _decide(
        self, call: Call, index: ConstraintIndex, now: float, enforce: bool
    ) -> tuple[Decision, bool]:
        """Return the decision on ``call`` and whether the batch of pending counts is full.

        The one place a refusal is decided (and, in shadow mode, turned into an allowed
        decision that remembers it would have refused). Only a call that runs into a
        constraint is observed (a stale constraint refuses nothing): the hot path stays
        untouched.
        """
        progress = self._progress
        if not index and not progress.hot:
            decision_signals(call.tool, "allowed", (), self.scope)
            return Decision(True, call), False
        with self._view:
            hits = list(index.match(call, self.adapter_for(call.tool), now)) if index else []
        if hits:
            hits = [v for v in hits if not self._revalidator.stale(v.constraint)]
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

    def attempt(
        self,
        tool: str,
        args: Mapping[str, Any] | None = None,
        *,
        targets: Sequence[str] | None = None,
    ) -> Attempt:
        """Guard one call: check on entering the block, record on leaving it.

        Use with ``with`` or ``async with``::

            with memory.attempt("edit_file", args) as attempt:
                if attempt.refused:
                    return attempt.message
                result = edit(**args)       # an exception is recorded and propagates
                attempt.succeeded(result)   # or attempt.failed("error text")

        A block that leaves without either call and without an exception is recorded as a
        success. Under ``async with`` the store is never waited on by the event loop.

        Args:
            tool: The tool's name.
            args: The call's arguments by name.
            targets: Explicit targets (default: extracted from the arguments).

        Returns:
            The :class:`~scarguard.guard.Attempt`, not yet checked.

        Raises:
            ConfigurationError: ``tool`` or ``args`` is not valid.
        """
        return Attempt(self, tool, args, targets=targets)

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

    def _record_success(
        self, call: Call, score: float | None, result: Any = NO_RESULT, *, nowait: bool = False
    ) -> RecordResult | None:
        """Count a success; lift what it disproves; flush a full batch.

        With ``nowait`` nothing touches the store: ``None`` is returned instead when the
        success needs a round trip (a lift, a full batch, an index never loaded).
        """
        adapter = self.adapter_for(call.tool)
        if self._generation is _UNLOADED:
            if nowait:
                return None
            self._current_index(self.clock())
        # check() revalidated the index just before this call ran; asking the store again
        # would double the cost of every success for a lift that can wait one call.
        index = self._index
        # "Already up to date.": this run changed nothing (only asked when something may lift)
        quiet = bool(index) and reports_no_change(result)
        lift = bool(index) and bool(
            liftable(index, call, adapter, self.policy, changed_nothing=quiet)
        )
        full = (
            len(self._pending) + self._pending_refusals + 1
            >= self._batch
        )
        if nowait and (lift or full):
            return None
        changing = may_change(call, adapter.mutating(call))
        digest = None if changing or result is NO_RESULT else result_digest(result)
        with self._view:
            self._tracker.note(Event.OK, call.action_class, score)
            if call.params:
                self._last_ok[call.tool] = call
            self._note_progress(call, changing, digest, self.clock())
            if not lift:
                self._pending.append(call)
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
                    keys = [c.key for c in lifted]
                    tx.receipt("lift", {"by": call.fingerprint, "lifted": keys}, now)
        elif full:
            self.flush()
        outcome_signals(call.tool, None, None, (), lifted, self.scope)
        return RecordResult(None, (), lifted, self._tracker.convergence)

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
        if self._shadow or self._generation is _UNLOADED or not isinstance(tool, str):
            return None
        if args is None:
            args = {}
        elif type(args) is not dict and not isinstance(args, Mapping):
            return None
        last = self._screened
        if last is not None and last[1] is args and last[0] == tool:
            shape = last[2]  # screened by the check just before (the same arguments object)
        else:
            screen = self._screen(tool)
            if screen is None:
                return None
            shape = screen(tool, args)
        index = self._index
        if not index.quiet(tool, shape.action_class, shape.may_target or bool(targets)):
            return None
        if shape.mutating and index:
            return None  # it may lift other calls' bans: the full path looks
        full = len(self._pending) + self._pending_refusals + 1
        if nowait and full >= self._batch:
            return None
        changing = changes_results(shape.action_class, args, shape.mutating)
        digest = None if changing or result is NO_RESULT else result_digest(result)
        now = self.clock()
        progress = self._progress
        with self._view:
            if changing:
                progress.changed()
            elif not progress.returned_raw(tool, args, digest, now):
                return None  # one of its results repeats, or a run may end: fingerprint it
            self._tracker.note(Event.OK, shape.action_class, score)
            self._pending.append((tool, shape.action_class))
        if full >= self._batch:
            self.flush()
        outcome_signals(tool, None, None, (), (), self.scope)
        return RecordResult(None, (), (), self._tracker.convergence)

    def _note_progress(
        self, call: Call, changing: bool, digest: Hashable | None, now: float
    ) -> None:
        """Count a success towards a no-progress loop, or forget the loops it may end."""
        progress = self._progress
        if changing:
            progress.changed()
        elif digest is not None:
            count = progress.returned(call.fingerprint, digest, now, tool=call.tool)
            if count >= self.policy.loop_warn:
                since = progress.since(call.fingerprint)
                self._tracker.loop_reason = progress.reason(count, now if since is None else since)
        else:
            progress.forget(call.fingerprint, tool=call.tool)

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
        counters; a fast-path one (a tool that never failed) only the latter. The counters
        go in one ``bump_many`` per distinct amount, the resets in one ``reset_many``.
        """
        per_tool: Counter[str] = Counter()
        prefixes: dict[str, None] = {}
        for done in pending:
            if isinstance(done, Call):
                per_tool[done.tool] += 1
                mutating = self.adapter_for(done.tool).mutating(done)
                prefixes.update(dict.fromkeys(reset_keys_for_success(done, self.policy, mutating)))
            else:
                tool, action_class = done
                per_tool[tool] += 1
                if action_class:
                    prefixes.update(dict.fromkeys(class_prefixes(action_class)))
        amounts = Counter(counts)
        amounts.update({f"ok:{tool}": n for tool, n in per_tool.items()})
        by_amount: dict[int, list[str]] = {}
        for key, n in amounts.items():
            by_amount.setdefault(n, []).append(key)
        for n, keys in by_amount.items():
            tx.bump_many(keys, now, n)
        if not pending:
            return
        tx.reset_many(list(prefixes))
        tools = dict(sorted(per_tool.items()))
        tx.receipt("successes", {"count": len(pending), "tools": tools}, now)

    def flush(self) -> None:
        """Write the successes and refusals counted in memory (done in batches and at exit)."""
        with self._lock:
            with self._view:
                pending, self._pending = self._pending, []
            if not pending and not self._pending_counts:
                return
            now = self.clock()
            with self._keeping(pending) as counts, self._write() as tx:
                self._apply_successes(tx, pending, counts, now)

    # -- reading ---------------------------------------------------------------------------

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

    def close(self) -> None:
        """Flush pending successes and release the store."""
        try:
            self.flush()
        finally:
            worker, self._worker = self._worker, None
            if worker is not None:
                worker.shutdown(wait=True)  # writes already handed to the worker finish
            self.store.close()


def _rooted(adapter: Adapter, root: str) -> Adapter:
    """Return a tool-call adapter without a root of its own, normalising against ``root``."""
    if isinstance(adapter, ToolCallAdapter) and adapter.root is None:
        return attrs.evolve(adapter, root=root)
    return adapter


def _flush_at_exit(ref: weakref.ReferenceType[FailureMemory]) -> None:
    memory = ref()
    if memory is not None:
        with contextlib.suppress(Exception):  # at exit, a store that is gone must not raise
            memory.flush()


@_fork.in_child
def _reset_after_fork() -> None:
    """Give a forked child fresh locks, no inherited pending work and its own session id."""
    global _default_lock
    _default_lock = threading.Lock()
    for memory in list(_MEMORIES):
        memory._lock = threading.RLock()
        memory._view = threading.RLock()
        memory._worker = None  # the parent's worker thread does not exist here
        memory._pending = []
        memory._pending_counts = Counter()
        memory._pending_refusals = 0
        memory._shadow = {}
        memory._generation = _UNLOADED
        memory._tracker = SessionTracker(memory.policy)
        memory._progress = ProgressTracker(memory.policy, memory._raw_fingerprint)
        memory._screened = None
        if not memory._fixed_session:
            memory.scope = attrs.evolve(memory.scope, session=uuid.uuid4().hex[:12])

_default: FailureMemory | None = None
_default_lock = threading.Lock()


def default_memory() -> FailureMemory:
    """Return the process-wide memory at the default path, creating it on first use."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = FailureMemory()
    return _default


def set_default_memory(memory: FailureMemory | None) -> None:
    """Replace the process-wide default memory (``None``: create it afresh on next use)."""
    global _default
    with _default_lock:
        _default = memory
