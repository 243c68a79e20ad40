"""The engine: check a call before it runs, record what happened after, learn, report.

:class:`FailureMemory` is the one object everything else delegates to (the decorator, the
prompt guard, the CLI). Its hot path is ``check()``: a generation token from the store, a
dictionary lookup in the cached constraint index, nothing else. Successes are counted in
memory and flushed in batches; a failure is one write transaction. The check side lives in
:mod:`scarguard.guard._checking`, the success side in :mod:`scarguard.guard._successes`, the
failure side in :mod:`scarguard.learning._recording`, the read-only reports in
:mod:`scarguard._reports` (mixins of :class:`FailureMemory`).
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
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from scarguard import _fork
from scarguard._reports import ReportsMixin
from scarguard.adapters import ToolCallAdapter
from scarguard.adapters.protocol import Adapter
from scarguard.adapters.tool_call import Screen
from scarguard.canonical import storable_text
from scarguard.errors import ConfigurationError
from scarguard.guard._checking import UNLOADED, CheckingMixin
from scarguard.guard._successes import SuccessMixin
from scarguard.guard.step import Attempt
from scarguard.learning._recording import FailureRecording
from scarguard.learning.convergence import SessionTracker
from scarguard.learning.index import ConstraintIndex
from scarguard.learning.observed import Revalidator
from scarguard.learning.progress import (
    ProgressTracker,
)
from scarguard.maintenance import MaintenanceMixin
from scarguard.model import Call, Constraint, Decision, Scope
from scarguard.naming.signatures import SignatureBank
from scarguard.observe import LocalObserver, Observer
from scarguard.policy import Policy
from scarguard.redact import Redactor
from scarguard.stores.factory import open_store
from scarguard.stores.protocol import Store

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor
from scarguard.tenancy import derive_project

__all__ = ["FailureMemory", "default_memory", "set_default_memory"]

_MEMORIES: weakref.WeakSet[FailureMemory] = weakref.WeakSet()
_log = logging.getLogger("scarguard")
_T = TypeVar("_T")


class FailureMemory(
    CheckingMixin, SuccessMixin, FailureRecording, MaintenanceMixin, ReportsMixin
):
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
        self._generation: Hashable = UNLOADED
        # the change tokens the index is known current under: one per connection that
        # checked since the store last changed (tokens of two connections never compare)
        self._tokens: dict[Hashable, None] = {}
        self._retry_at = 0.0  # while the store cannot be read: when to try again
        self._outage = False
        self._tracker = SessionTracker(self.policy)
        self._progress = ProgressTracker(self.policy, self._raw_fingerprint)
        self._screens: dict[str, tuple[Adapter, Callable[..., Screen] | None]] = {}
        self._screened: tuple[str, Mapping[str, Any], Screen] | None = None
        self._shapes: dict[tuple[str, ...], tuple[Adapter, Screen | None]] = {}
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
        return self._describe_args(tool, args or {}, targets)

    def _describe_args(
        self, tool: str, args: Mapping[str, Any], targets: Sequence[str] | None = None
    ) -> Call:
        """:meth:`describe` of a tool name and arguments known to be valid."""
        call = self.adapter_for(tool).describe(tool, args, targets, self._last_ok.get(tool))
        self._described = call = self._safe_targets(call)
        return call

    def _safe_targets(self, call: Call) -> Call:
        targets = call.targets
        if not targets:
            safe = targets
        elif len(targets) == 1:  # (most calls: no map, no generator; this runs on every one)
            safe = (self.redactor.target(targets[0]),)
        else:
            safe = tuple(map(self.redactor.target, targets))
        tool = call.tool
        if not tool.isascii() or "\x00" in tool:  # (what storable_text asks first)
            tool = storable_text(tool)
        if safe == targets and tool == call.tool:
            return call
        return attrs.evolve(call, tool=tool, targets=safe)

    # -- the two calls of the hot path -----------------------------------------------------

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

    def flush(self) -> None:
        """Write the successes and refusals counted in memory (done in batches and at exit)."""
        self._flush()

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
        memory._generation = UNLOADED
        memory._tokens = {}
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
