"""The JSON store: the fallback when SQLite is unavailable, safe for many processes.

The discipline (file layout in ``_state``):

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
* :meth:`JSONStore.generation` is the state file's ``(inode, mtime_ns, size)``; a commit
  sets the new file's mtime strictly past the old one, so the token never repeats. A
  transaction's ``begin_generation`` is that token under its exclusive lock (after any
  reload), its ``commit_generation`` the new file's token, taken before the lock is freed.
* Temporary files left by killed writers (``<path>.tmp-<pid>-*``) are swept at open.

POSIX only (``fcntl``).
"""

from __future__ import annotations

import contextlib
import datetime
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from scarguard import _fork
from scarguard._warnings import warn
from scarguard.errors import SchemaVersionError, StoreCorruptionWarning, StoreError
from scarguard.model import Constraint, Failure, Scope
from scarguard.receipts import Chain, FileCheckpoint, Receipt
from scarguard.stores._files import ShortFile, append_committed, atomic_write
from scarguard.stores.json import _retention as retention
from scarguard.stores.json import _state as js
from scarguard.stores.json._locking import file_lock
from scarguard.stores.json._tx import JSONTransaction
from scarguard.stores.protocol import CounterValue
from scarguard.stores.records import export_records, import_records

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


class JSONStore:
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
        self._cache: dict[js.Tenant, list[Failure]] = {}
        self._cache_at = (-1, 0)  # (epoch, offset) of the journal read into _cache
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
        aside = js.quarantine(self._path, now=self._clock())
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

    @contextmanager
    def transaction(self, scope: Scope) -> Iterator[JSONTransaction]:
        """Hold the exclusive file lock; write nothing unless the body returns."""
        with self._locked(exclusive=True) as state:
            tx = JSONTransaction(
                state,
                (scope.workspace, scope.project),
                receipts=self.receipts,
                key=self._key,
                begin=self._stat,  # reloaded or checked under this lock: the file's token
                stored_failures=lambda: self._failures(state, (scope.workspace, scope.project)),
            )
            yield tx
            if tx.changed:
                self._commit(state, tx)
            tx.committed = self._stat

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
        tenants[tx.tenant] = tx.data
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
        self._state, self._stat = state, self._stat_token()

    def generation(self) -> Hashable:
        """Return the state file's ``(inode, mtime_ns, size)``: changes with every commit."""
        return self._stat_token()

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

    def export(self, scope: Scope) -> Iterator[dict[str, Any]]:
        """Yield the tenant's records in the shared export format."""
        tenant = (scope.workspace, scope.project)
        with self._locked(exclusive=False) as state:
            data = state.tenants.get(tenant, js.TenantState())
            rows = self._failures(state, tenant)
            records = list(export_records(rows, data.counters, data.constraints.values()))
        yield from records

    def import_(self, scope: Scope, records: Iterable[Mapping[str, Any]]) -> int:
        """Add exported records to the tenant (all or nothing)."""
        with self.transaction(scope) as tx:
            return import_records(tx, records)

    def close(self) -> None:
        """Drop cached state (no handle stays open between operations)."""
        self._cache.clear()

    def __repr__(self) -> str:
        return f"JSONStore({self._path!r})"
