"""The JSON store: the fallback when SQLite is unavailable, safe for many processes.

The discipline (file layout in ``_state``; the files read, reloaded and recovered in
``_reads``):

* Every transaction holds an exclusive ``flock`` on ``<path>.lock``; every read a shared
  one. Inside the lock the state is reloaded if the file changed, so a writer always
  builds on the latest commit: the last writer never silently wins, and ids (kept in the
  state) are never handed out twice.
* A transaction works on copies; nothing is written until the body returns. Then it
  appends to the journals, flushes them, and renames a new state into place: that rename
  is the commit. An exception in the body leaves every file as it was.
* A state file that cannot be parsed is never overwritten: it is renamed to
  ``<name>.corrupt-<UTC time>``, reported by a :class:`StoreCorruptionWarning` and a log
  line, and the store rebuilds from the journals (failures, next id and receipt chain;
  counters and constraints are relearned).
* :meth:`JSONStore.generation` is the state file's ``(inode, mtime_ns, size)`` (trusted
  for 1 ms, see ``_reads``); a commit
  sets the new file's mtime strictly past the old one, so the token never repeats. A
  transaction's ``begin_generation`` is that token under its exclusive lock (after any
  reload), its ``commit_generation`` the new file's token, taken before the lock is freed.
* Temporary files left by killed writers (``<path>.tmp-<pid>-*``) are swept at open.

POSIX only (``fcntl``).
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from scarguard import _fork
from scarguard._warnings import warn
from scarguard.errors import StoreCorruptionWarning, StoreError
from scarguard.model import Scope
from scarguard.stores._files import ShortFile, append_committed, atomic_write
from scarguard.stores.json import _retention as retention
from scarguard.stores.json import _state as js
from scarguard.stores.json._reads import NO_FILE, JSONReads
from scarguard.stores.json._tx import JSONTransaction
from scarguard.stores.records import import_records

__all__ = ["JSONStore"]

_log = logging.getLogger("scarguard.stores.json_store")
_STALE_SECONDS = 60.0

MAX_ENTRIES = 10_000
"""Default limit of counters and constraints in a JSON store's state (see ``max_entries``)."""


def _entries(tenants: Mapping[js.Tenant, js.TenantState]) -> int:
    return sum(len(t.counters) + len(t.constraints) for t in tenants.values())


def _forget_after_fork(store: JSONStore) -> None:
    # a mutex held by another parent thread would never be freed
    store._mutex = threading.RLock()
    store._depth = 0


class JSONStore(JSONReads):
    """Keep the failure memory in a JSON state file and two JSON-lines journals.

    Args:
        path: The state file (``.json``, ``~`` expanded); journals, lock, checkpoint beside it.
        receipts: Whether to keep the tamper-evident receipt chain.
        receipt_key: HMAC key for the chain (default: ``SCARGUARD_RECEIPT_KEY``).
        clock: Seconds since the epoch; decides when a temporary file is stale.
        max_entries: The most counters and constraints the state may hold (every commit
            rewrites it, so each write costs time in proportion): a write that would grow it
            past this fails with :class:`StoreError` saying to move to SQLite. Writes that
            shrink it (``clear()``, ``forget()``, ``wipe()``) always work.

    Raises:
        StoreError: The path is a folder, its folder cannot be created, or the file is JSON
            that scarguard did not write (left untouched).
        SchemaVersionError: The file was written by a newer scarguard (left untouched).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        receipts: bool = True,
        receipt_key: bytes | str | None = None,
        clock: Callable[[], float] = time.time,
        max_entries: int = MAX_ENTRIES,
    ) -> None:
        self.max_entries = max_entries
        super().__init__(path, receipts=receipts, receipt_key=receipt_key, clock=clock)
        self._found: list[str] = []  # damage found during the write in progress
        if os.path.isdir(self._path):
            raise StoreError(f"JSON store {self._path}: is a folder, not a file", path=self._path)
        try:
            os.makedirs(os.path.dirname(self._path), exist_ok=True)
        except OSError as exc:
            raise self._error("cannot create its folder", exc) from exc
        with self._locked(exclusive=True):
            js.sweep_temps(self._path, now=self._clock(), stale_after=_STALE_SECONDS)
        _fork.track(self, _forget_after_fork)

    @contextmanager
    def transaction(self, scope: Scope) -> Iterator[JSONTransaction]:
        """Hold the exclusive file lock; write nothing unless the body returns."""
        with self._locked(exclusive=True) as state:
            tx = JSONTransaction(
                state,
                (scope.workspace, scope.project),
                receipts=self.receipts,
                key=self._key,
                # reloaded or checked under this lock: the file's token, as generation() says it
                begin=NO_FILE if self._stat is None else self._stat,
                stored_failures=lambda: self._failures(state, (scope.workspace, scope.project)),
            )
            yield tx
            if tx.changed:
                self._commit(state, tx)
            tx.committed = NO_FILE if self._stat is None else self._stat

    def _append(self, path: str, committed: int, lines: Iterable[bytes]) -> int:
        data = b"".join(lines)
        try:
            try:
                return append_committed(path, committed, data)
            except ShortFile as short:
                self._note_damage(path, short.committed - short.found)
                return append_committed(path, committed, data, short_ok=True)
        except OSError as exc:
            raise self._error(f"cannot write {path}", exc) from exc

    def _note_damage(self, path: str, missing: int) -> None:
        """A journal lost committed bytes: warn, and keep it in the state until acknowledged."""
        when = datetime.datetime.fromtimestamp(self._clock(), datetime.timezone.utc)
        note = (
            f"{os.path.basename(path)} held {missing} bytes fewer than committed (cut off, or"
            f" restored from an older copy), found {when:%Y-%m-%d %H:%M:%S} UTC: records"
            " written before then may be lost"
        )
        self._found.append(note)
        message = (
            f"JSON store {self._path}: {note}; new records go on a fresh line, and verify()"
            " fails until JSONStore.acknowledge_damage() is called"
        )
        _log.warning(message)
        warn(message, StoreCorruptionWarning, stacklevel=6, logged=True)

    def _with_damage(self, state: js.State) -> js.State:
        """Return ``state`` carrying the damage found during this write (a new epoch if any)."""
        if not self._found:
            return state
        found, self._found = tuple(self._found), []
        epoch = max(state.epoch + 1, int(self._clock() * 1000))
        return state.evolve(damage=state.damage + found, epoch=epoch)

    def acknowledge_damage(self) -> list[str]:
        """Accept the damage verification reports (after looking at it); return what it was.

        Journals shorter than committed are taken as they are now, and the damage notes are
        dropped, so :func:`~scarguard.receipts.verify_store` checks the chain again from here.
        """
        with self._locked(exclusive=True) as state:
            notes = [*state.damage, *self._missing(state)]
            sizes = []
            for path in (self.failures_path, self.receipts_path):
                try:
                    sizes.append(os.path.getsize(path))
                except OSError:
                    sizes.append(0)
            self._write_state(
                state.evolve(
                    damage=(),
                    failures_bytes=min(state.failures_bytes, sizes[0]),
                    receipts_bytes=min(state.receipts_bytes, sizes[1]),
                    epoch=max(state.epoch + 1, int(self._clock() * 1000)),
                )
            )
            return notes

    def _commit(self, state: js.State, tx: JSONTransaction) -> None:
        tenants = dict(state.tenants)
        tenants[tx.tenant] = tx.held
        size = _entries(tenants)
        if size > self.max_entries and size > _entries(state.tenants):
            raise self._error(
                f"holds {size} counters and constraints, past the {self.max_entries} the JSON"
                " store is made for (every write rewrites them all); nothing was written. Move"
                " the memory to SQLite (memory.export() into FailureMemory('memory.db')"
                ".import_(...)), or clear() what is no longer needed"
            )
        new = state.evolve(
            next_id=tx.next_id,
            receipt_seq=tx.receipt_seq,
            receipt_head=tx.receipt_head,
            tenants=tenants,
            failures_bytes=self._append(
                self.failures_path,
                state.failures_bytes,
                (js.failure_line(tx.tenant, f) for f in tx.failures),
            ),
            receipts_bytes=self._append(
                self.receipts_path, state.receipts_bytes, map(js.receipt_line, tx.receipts)
            ),
        )
        self._write_state(self._with_damage(new))

    def _write_state(self, state: js.State) -> None:
        """Rename a new state into place (the commit point), its mtime past the old one."""
        mtime = time.time_ns()
        if isinstance(self._stat, tuple):
            mtime = max(mtime, self._stat[1] + 1)
        try:
            atomic_write(self._path, js.dump_state(state), mtime_ns=mtime)
        except OSError as exc:
            raise self._error("cannot write the state file", exc) from exc
        finally:
            self._committed()  # (even a failed rename may have replaced the file)
        self._state, self._stat = state, self._stat_token()

    def clear(self, scope: Scope) -> None:
        """Forget the tenant's records; other tenants and the chain are untouched."""
        tenant = (scope.workspace, scope.project)
        with self._locked(exclusive=True) as state:
            tenants = {k: v for k, v in state.tenants.items() if k != tenant}
            end = self._append(self.failures_path, state.failures_bytes, [js.clear_line(tenant)])
            self._write_state(self._with_damage(state.evolve(tenants=tenants, failures_bytes=end)))

    def wipe(self) -> None:
        """Forget every tenant, the receipt chain and its checkpoint (ids are not reused)."""
        with self._locked(exclusive=True) as state:
            epoch = max(state.epoch + 1, int(self._clock() * 1000))
            self._write_state(js.State(next_id=state.next_id, epoch=epoch))
            for path in (self.failures_path, self.receipts_path):
                self._append(path, 0, ())
            # The emptied journal then records the next id, so that a state rebuilt from it
            # (after corruption) still never hands out an id twice.
            end = self._append(self.failures_path, 0, [js.wiped_line(state.next_id)])
            self._write_state(self._state.evolve(failures_bytes=end))
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.checkpoint_path)

    def _rewrite(self, path: str, body: bytes) -> None:
        try:
            atomic_write(path, body)
        except OSError as exc:
            raise self._error(f"cannot rewrite {path}", exc) from exc

    def purge_failures(self, scope: Scope, before: float) -> int:
        """Rewrite the failures journal without the tenant's failures before ``before``."""
        with self._locked(exclusive=True) as state:
            data = self._read_journal(self.failures_path)[: state.failures_bytes]
            tenant = (scope.workspace, scope.project)
            body, dropped = retention.purge_failures(data, tenant, before, state.next_id)
            if dropped:
                self._rewrite(self.failures_path, body)
                epoch = max(state.epoch + 1, int(self._clock() * 1000))
                self._write_state(state.evolve(failures_bytes=len(body), epoch=epoch))
            return dropped

    def compact_receipts(self, scope: Scope, before: float, at: float) -> int:
        """Rewrite the receipts journal from the first receipt sealed at ``before`` or later."""
        if not self.receipts:
            return 0
        with self._locked(exclusive=True) as state:
            data = self._read_journal(self.receipts_path)[: state.receipts_bytes]
            done = retention.compact_receipts(data, before, at, self._key)
            if done is None:
                return 0
            body, head, dropped = done
            self._rewrite(self.receipts_path, body)
            self._write_state(
                state.evolve(receipts_bytes=len(body), receipt_seq=head.seq, receipt_head=head.hash)
            )
            return dropped

    def import_(self, scope: Scope, records: Iterable[Mapping[str, Any]]) -> int:
        """Add exported records to the tenant (all or nothing)."""
        with self.transaction(scope) as tx:
            return import_records(tx, records)

    def close(self) -> None:
        """Drop cached state (no handle stays open between operations)."""
        self._cache.clear()

    def __repr__(self) -> str:
        return f"JSONStore({self._path!r})"
