"""What a JSON store reads: its files under the lock, reloaded when they changed, recovered.

* Every read holds a shared ``flock`` on ``<path>.lock`` (a transaction holds it
  exclusively); inside the lock the state is reloaded if the file changed
  (the state file's ``(inode, mtime_ns, size)`` tells).
* The change token a check reads (:meth:`JSONReads.generation`, that ``stat``) is trusted
  for :data:`FRESH_FOR` (1 ms) without another ``stat``, unless this process committed to
  the file since (by any store on it): another process's commit is seen by every check that
  starts 1 ms after it or later, this process's by the next check.
* A state file that cannot be parsed is never overwritten: under the exclusive lock it is
  renamed to ``<name>.corrupt-<UTC time>``, reported by a :class:`StoreCorruptionWarning`
  and a log line, and the state is rebuilt from the journals. A file that is not a store of
  ours (foreign JSON, or not JSON with no journals beside it) is refused, left untouched.
* The failures journal is read up to its committed length only, into a cache per tenant
  brought up to date from where it was last read.
* A journal holding fewer bytes than committed is damage: the chain read names it.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any

from scarguard._warnings import warn
from scarguard.errors import SchemaVersionError, StoreCorruptionWarning, StoreError
from scarguard.model import Constraint, Failure, Scope
from scarguard.receipts import Chain, FileCheckpoint, Receipt
from scarguard.stores.json import _state as js
from scarguard.stores.json._locking import file_lock
from scarguard.stores.protocol import CounterValue
from scarguard.stores.records import export_records

__all__ = ["FRESH_FOR", "NO_FILE", "JSONReads"]

NO_FILE = ("no state file",)
"""The change token while no state file exists."""
FRESH_FOR = 0.001
"""Seconds a change token is trusted without another ``stat`` of the state file.

The staleness bound for commits by other processes (as SQLite's, in
``scarguard.stores.sqlite._token``): a check starting at least this long after such a
commit sees it. Commits made in this process, by any store on the file, are seen by the
next check.
"""
_monotonic = time.monotonic


class _FileCommits:
    """This process's commits to one state file, by any of its stores."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        self.last = 0


_COMMITS: dict[str, _FileCommits] = {}
"""The real path of a state file -> this process's commits to it."""
_COMMIT_NUMBERS = itertools.count(1)
"""Unique commit numbers (``next`` on ``itertools.count`` is atomic: no lock across fork)."""

_log = logging.getLogger("scarguard.stores.json_store")


class JSONReads:
    """The files of a JSON store and everything read from them outside a transaction.

    :class:`~scarguard.stores.json.JSONStore` builds its transactions and maintenance on
    this: the paths, the lock with the state reloaded (or recovered) inside it, the
    committed journals, and the reads of the store contract.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        receipts: bool,
        receipt_key: bytes | str | None,
        clock: Callable[[], float],
    ) -> None:
        # Through a symlink, the store is where the link points: a rename over the link
        # itself would replace it with a regular file and split the memory in two.
        self._path = os.path.realpath(os.path.expanduser(os.fspath(path)))
        stem = self._path[:-5] if self._path.endswith(".json") else self._path
        self.failures_path = stem + ".failures.jsonl"
        self.receipts_path = stem + ".receipts.jsonl"
        self.lock_path = self._path + ".lock"
        self.receipts = receipts
        self._key = receipt_key
        self._clock = clock
        self._mutex = threading.RLock()
        self._depth = 0  # > 0 while this store's file lock is held (by the mutex's owner)
        self._state = js.State()
        self._stat: Hashable = None
        self._commits = _COMMITS.setdefault(self._path, _FileCommits())
        # (this process's latest commit, token, trusted until): what generation() answers
        # without a stat while nothing here committed and FRESH_FOR has not passed
        self._trusted: tuple[int, Hashable, float] | None = None
        self._cache: dict[js.Tenant, list[Failure]] = {}
        self._cache_at = (-1, 0)  # (epoch, offset) of the journal read into _cache

    @property
    def location(self) -> str:
        """The state file's absolute path."""
        return self._path

    @property
    def checkpoint_path(self) -> str:
        """Where the chain's checkpoint is kept: ``<path>.head``."""
        return self._path + ".head"

    def _error(self, what: str, exc: BaseException | None = None) -> StoreError:
        detail = f": {exc}" if exc is not None else ""
        return StoreError(f"JSON store {self._path}: {what}{detail}", path=self._path)

    def _stat_token(self) -> Hashable:
        try:
            st = os.stat(self._path)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    @contextmanager
    def _locked(self, *, exclusive: bool) -> Iterator[js.State]:
        """Hold the mutex and the file lock, with the state reloaded if the file changed.

        A read that finds the state corrupt retries under the exclusive lock, which
        quarantines and rebuilds it. A read inside this thread's own transaction reuses
        the lock it already holds (a second ``flock`` would wait for itself).
        """
        with self._mutex:
            if self._depth:
                yield self._state
                return
            self._depth += 1
            try:
                if not exclusive:
                    with file_lock(self.lock_path, exclusive=False):
                        if self._refresh(repair=False):
                            yield self._state
                            return
                with file_lock(self.lock_path, exclusive=True):
                    self._refresh(repair=True)
                    yield self._state
            finally:
                self._depth -= 1

    def _refresh(self, *, repair: bool) -> bool:
        """Reload the state if the file changed; return False if it is corrupt (no repair)."""
        token = self._stat_token()
        if token is not None and token == self._stat:
            return True
        try:
            with open(self._path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            data = b""
        except OSError as exc:
            raise self._error("cannot read the state file", exc) from exc
        try:
            state = js.parse_state(data) if data else self._rebuild()
        except js.NewerFormat as exc:
            raise SchemaVersionError(
                f"JSON store {self._path} has format {exc.found}, newer than the {js.FORMAT}"
                " this scarguard reads; upgrade scarguard (file left untouched)",
                path=self._path,
            ) from exc
        except js.ForeignFile as exc:
            raise self._error("is JSON that scarguard did not write (left untouched)") from exc
        except js.CorruptState as exc:
            if not self._looks_ours(data):
                raise self._error(
                    "is not a scarguard JSON store (not valid JSON; left untouched)"
                ) from exc
            if not repair:
                return False
            self._quarantine(str(exc))
            state, token = self._rebuild(), None
        self._state, self._stat = state, token
        return True

    def _looks_ours(self, data: bytes) -> bool:
        """Whether an unparseable state file is a damaged store of ours, not a stranger's file.

        Ours when it starts as every state this store writes, or when the journals of a
        store lie beside it. Anything else (notes that happen to end in ``.json``) is never
        moved aside.
        """
        head = data.lstrip()[: len(js.HEAD)]
        if head and js.HEAD.startswith(head):  # ours, cut short or damaged further on
            return True
        return os.path.exists(self.failures_path) or os.path.exists(self.receipts_path)

    def _quarantine(self, reason: str) -> None:
        try:
            aside = js.quarantine(self._path, now=self._clock())
        finally:
            self._committed()  # the state file is gone: every store on it stats again
        message = (
            f"JSON store {self._path} was unreadable ({reason}); moved aside to {aside} and"
            " rebuilt from its journals (failures and receipts kept; counters and"
            " constraints will be relearned)"
        )
        _log.warning(message)
        warn(message, StoreCorruptionWarning, stacklevel=5, logged=True)

    def _read_journal(self, path: str) -> bytes:
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except FileNotFoundError:
            return b""
        except OSError as exc:
            raise self._error(f"cannot read {path}", exc) from exc

    def _rebuild(self) -> js.State:
        """Rebuild a state from the journals alone (no state file, or a corrupt one)."""
        return js.rebuild(
            self._read_journal(self.failures_path),
            self._read_journal(self.receipts_path),
            epoch=int(self._clock() * 1000),
        )

    def _missing(self, state: js.State) -> list[str]:
        """Journals that hold fewer bytes than committed right now."""
        notes = []
        for path, committed in (
            (self.failures_path, state.failures_bytes),
            (self.receipts_path, state.receipts_bytes),
        ):
            try:
                size = os.path.getsize(path)
            except FileNotFoundError:
                size = 0
            except OSError:
                continue
            if size < committed:
                notes.append(
                    f"{os.path.basename(path)} holds {committed - size} bytes fewer than"
                    " committed (cut off, or restored from an older copy)"
                )
        return notes

    def generation(self) -> Hashable:
        """Return the state file's ``(inode, mtime_ns, size)``: changes with every commit.

        :data:`NO_FILE` while no state file exists (nothing committed yet). At most
        :data:`FRESH_FOR` old for commits by other processes (the ``stat`` is skipped for
        that long after one), current for this process's.
        """
        now = _monotonic()
        own = self._commits.last
        trusted = self._trusted
        if trusted is not None and trusted[0] == own and now < trusted[2]:
            return trusted[1]
        # (own is read before the stat: a commit in between makes the next call stat again,
        # so the token kept is never older than the commits it is trusted for)
        found = self._stat_token()
        token = NO_FILE if found is None else found
        self._trusted = (own, token, now + FRESH_FOR)
        return token

    def _committed(self) -> None:
        """Note a commit to the state file just made (every store on it stats again)."""
        self._commits.last = next(_COMMIT_NUMBERS)

    def peek_generation(self) -> Hashable | None:
        """Return :meth:`generation` (what an event loop asks): a ``stat`` at most, no lock."""
        return self.generation()

    def load_constraints(self, scope: Scope) -> list[Constraint]:
        """Return the tenant's constraints, oldest first."""
        with self._locked(exclusive=False) as state:
            data = state.tenants.get((scope.workspace, scope.project), js.TenantState())
            return sorted(data.constraints.values(), key=lambda c: (c.created_at, c.key))

    def _failures(self, state: js.State, tenant: js.Tenant) -> list[Failure]:
        """Bring the failure cache up to the committed journal; return the tenant's list."""
        epoch, offset = self._cache_at
        if epoch != state.epoch or offset > state.failures_bytes:
            self._cache, offset = {}, 0
        if offset < state.failures_bytes:
            data = self._read_journal(self.failures_path)[: state.failures_bytes]
            for end, record in js.read_lines(data, offset):
                if record is None:
                    _log.warning(
                        "%s: skipped an unreadable line ending at byte %d", self.failures_path, end
                    )
                elif "wiped" in record:
                    pass
                elif "clear" in record:
                    self._cache.pop((str(record["clear"][0]), str(record["clear"][1])), None)
                else:
                    key = (str(record["workspace"]), str(record["project"]))
                    self._cache.setdefault(key, []).append(Failure.from_row(record))
                offset = end
        self._cache_at = (state.epoch, offset)
        return list(self._cache.get(tenant, ()))

    def failures(
        self,
        scope: Scope,
        *,
        limit: int | None = None,
        since: float | None = None,
        tool: str | None = None,
        signature: str | None = None,
    ) -> list[Failure]:
        """Return the tenant's failures, newest first."""
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be None or >= 0, not {limit}")
        with self._locked(exclusive=False) as state:
            rows = self._failures(state, (scope.workspace, scope.project))
        matching = (
            f
            for f in reversed(rows)
            if (since is None or f.at >= since)
            and (tool is None or f.tool == tool)
            and (signature is None or f.signature == signature)
        )
        return list(itertools.islice(matching, limit))

    def counters(self, scope: Scope, prefix: str = "") -> dict[str, CounterValue]:
        """Return the tenant's counters under ``prefix``."""
        with self._locked(exclusive=False) as state:
            data = state.tenants.get((scope.workspace, scope.project), js.TenantState())
            return {k: v for k, v in data.counters.items() if k.startswith(prefix)}

    @property
    def checkpoints(self) -> FileCheckpoint:
        """The checkpoint of the verified head, in :attr:`checkpoint_path`."""
        return FileCheckpoint(self.checkpoint_path, self._key)

    @contextmanager
    def read_chain(self) -> Iterator[Chain]:
        """The committed receipts, the state's head, and any damage the state records."""
        with self._locked(exclusive=False) as state:
            data = self._read_journal(self.receipts_path)[: state.receipts_bytes]
        receipts: list[Receipt] = []
        unreadable = None
        for _end, record in js.read_lines(data):
            try:
                receipts.append(Receipt.from_row(record or {}))
            except (KeyError, TypeError):
                unreadable = len(receipts) + 1
                break
        damage = [*state.damage, *self._missing(state)]
        found = "; ".join(damage) + " (acknowledge with JSONStore.acknowledge_damage())"
        head = (state.receipt_seq, state.receipt_head or "")  # no head: matches no receipt
        yield Chain(receipts, head, unreadable, found if damage else "", self._key)

    def export(self, scope: Scope) -> Iterator[dict[str, Any]]:
        """Yield the tenant's records in the shared export format."""
        tenant = (scope.workspace, scope.project)
        with self._locked(exclusive=False) as state:
            data = state.tenants.get(tenant, js.TenantState())
            rows = self._failures(state, tenant)
            records = list(export_records(rows, data.counters, data.constraints.values()))
        yield from records
