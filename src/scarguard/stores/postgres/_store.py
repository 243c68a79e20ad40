"""The PostgreSQL store: one failure memory shared by fleets of agents on many machines.

Install with ``pip install "scarguard[postgres]"`` (psycopg 3). Open with a URL:
``PostgresStore("postgresql://user:pw@host/db")`` or ``open_store("postgresql://…")``; an
optional ``?schema=name`` URL parameter (or ``schema=``) picks the PostgreSQL schema that
holds the tables (default ``scarguard``), so several memories can share one database.

The discipline, and why:

* **READ COMMITTED plus explicit locks, taken in one fixed order**, so that a transaction
  never deadlocks and never has to be retried (the body of ``with store.transaction()`` is
  the caller's code and cannot be replayed, which rules out SERIALIZABLE-and-retry):

  1. ``pg_advisory_xact_lock_shared(<schema>)``: every writer; :meth:`wipe` and migrations
     take it exclusively.
  2. ``pg_advisory_xact_lock(<schema, workspace, project>)``: one writer per tenant at a
     time, as SQLite's ``BEGIN IMMEDIATE`` gives, so that counters read, constraints
     written and receipts appended never interleave with another writer of the tenant.
     Both are queued behind ``BEGIN`` and taken in the transaction's first round trip.
  3. the single ``receipt_head`` row, locked by the first ``add_failure`` or ``receipt``
     until commit: chain appends of all tenants are serialised (the chain cannot fork;
     ``UNIQUE(prev)`` backs this up) and failure ids are given transactionally.
  4. the ``meta`` row, bumped in the ``COMMIT`` round trip (held only for the commit).

* **Pipeline mode** (psycopg): a statement whose answer nobody reads (the locks, counters
  bumped in bulk, a receipt, the commit's statements) is sent without waiting; one whose
  answer is read waits for it and everything before it in one round trip. A failure record
  is three: the locks with the failure (whose insert also answers the chain head it
  locks), the counters, the receipt with the commit. An error of a statement sent earlier
  surfaces at the next wait, still inside the transaction, which is then rolled back.

  Counters are ``INSERT … ON CONFLICT … DO UPDATE … RETURNING count``: atomic in any case.
* **Every write is one explicit ``BEGIN`` … ``COMMIT``**; any exception rolls back, and the
  rollback never masks the exception in flight. Driver errors become :class:`StoreError`
  naming the URL without its password.
* **One connection per thread, new ones after ``fork``** (see ``_conn``).
* **Cheap revalidation**: :meth:`PostgresStore.generation` makes no round trip; it drains
  LISTEN/NOTIFY messages already received, with a safety read of ``meta.generation`` every
  ``revalidate_every`` seconds (see ``_watch`` for the staleness bound). A
  transaction's ``begin_generation`` is that token once its locks are taken (pending
  notifications drained), its ``commit_generation`` the token after its own commit was
  counted. A notification of an earlier commit that arrives only later makes
  :meth:`~PostgresStore.generation` differ from ``commit_generation`` then: the safe
  direction (the engine reloads).
* **Receipts** are appended in the same transaction as what they attest. The checkpoint of
  the verified head is kept in the table ``receipt_checkpoint`` (there is no file beside a
  database). A database administrator can roll the chain and the checkpoint back together,
  so for real tamper evidence export the head elsewhere: :meth:`PostgresStore.checkpoint`
  returns the report carrying it. The chain's read and checkpoint, and the store's upkeep
  (clear, wipe, retention, import), are in ``_upkeep``.
* ``durable=False`` sets ``synchronous_commit=off``: faster commits; a crash of the
  *server* may lose the last few hundred milliseconds of commits (never corrupts).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import psycopg

from scarguard.errors import SchemaVersionError, StoreError
from scarguard.model import Scope
from scarguard.stores.postgres._conn import (
    Connection,
    Connections,
    lock_key,
    redact_url,
    rollback,
    split_url,
)
from scarguard.stores.postgres._schema import SQL
from scarguard.stores.postgres._tx import Opened, Pipelined, PostgresTransaction
from scarguard.stores.postgres._upkeep import PostgresUpkeep
from scarguard.stores.postgres._watch import Watch

__all__ = ["PostgresStore"]

_log = logging.getLogger("scarguard.stores.postgres")

_T = TypeVar("_T")

_Pipeline = contextlib.AbstractContextManager[psycopg.Pipeline]
_BUMP_GENERATION = "UPDATE meta SET generation = generation + 1 RETURNING generation"


def _abandon(conn: Connection, pipeline: _Pipeline) -> None:
    """Leave pipeline mode and roll back; never raise (an exception is already in flight)."""
    with contextlib.suppress(psycopg.Error):
        pipeline.__exit__(None, None, None)
    rollback(conn)


class PostgresStore(PostgresUpkeep):
    """Keep the failure memory in a PostgreSQL schema shared by many processes and machines.

    Args:
        url: A ``postgresql://`` (or ``postgres://``) URL, as libpq reads it, optionally with
            ``?schema=name``.
        schema: The PostgreSQL schema of the tables (default: the URL's, else ``scarguard``);
            created, with its tables, on first open.
        receipts: Whether to keep the tamper-evident receipt chain.
        receipt_key: HMAC key for the chain (default: ``SCARGUARD_RECEIPT_KEY``).
        durable: ``synchronous_commit=on`` (the default); ``False`` trades the last few
            hundred milliseconds of commits on a server crash for faster commits.
        revalidate_every: Seconds between safety checks of the generation (see
            :meth:`generation`).
        connect_timeout: Seconds to wait for the server when connecting.
        lock_timeout: Seconds a write waits for another writer of the same tenant (or a
            ``wipe()``) before failing with :class:`~scarguard.StoreError`; a peer stuck inside
            its transaction then cannot stall this process's tool calls for longer.
        io_timeout: Seconds any one round trip may take (at least ``lock_timeout`` + 1): a
            server that stops answering without closing the connection fails the call with
            :class:`~scarguard.StoreError` after that long, instead of blocking it forever.
        defer_connect: When the server cannot be reached at construction, do not raise:
            every use raises :class:`~scarguard.StoreError` instead (a new attempt at most
            every ``retry_every`` seconds) until it can. ``FailureMemory("postgresql://...")``
            opens the store this way, so an agent starts while the database is down and its
            guarded tools fail open.
        retry_every: Seconds between connection attempts while the server is unreachable.

    Raises:
        StoreError: The server is unreachable, the URL is malformed, or authentication
            failed (the message names the URL without its password).
        SchemaVersionError: The schema was written by a newer scarguard (left untouched).
        ConfigurationError: ``schema`` is given twice with different values, or invalid.
    """

    _sql = SQL

    def __init__(
        self,
        url: str,
        *,
        schema: str | None = None,
        receipts: bool = True,
        receipt_key: bytes | str | None = None,
        durable: bool = True,
        revalidate_every: float = 2.0,
        connect_timeout: float = 10.0,
        lock_timeout: float = 5.0,
        io_timeout: float = 10.0,
        defer_connect: bool = False,
        retry_every: float = 5.0,
    ) -> None:
        from scarguard.errors import ConfigurationError

        try:
            bare, in_url = split_url(url)
        except ValueError as exc:
            raise ConfigurationError(f"not a PostgreSQL URL: {exc}") from None
        if schema is not None and in_url is not None and schema != in_url:
            raise ConfigurationError(f"schema given twice: {schema!r} and {in_url!r} in the URL")
        self.schema = schema or in_url or "scarguard"
        self.receipts = receipts
        self._key = receipt_key
        if not lock_timeout > 0:
            raise ConfigurationError(
                f"lock_timeout must be a positive number of seconds, not {lock_timeout!r}"
            )
        self._tenant_keys: dict[tuple[str, str], int] = {}
        self._safe_url = redact_url(bare)
        self._retry_every = float(retry_every)
        self._offline: StoreError | None = None
        self._retry_at = 0.0
        self._opening = threading.Lock()
        self._closed = False

        def open_now() -> tuple[Connections, Watch]:
            db = Connections(
                bare,
                self.schema,
                durable=durable,
                connect_timeout=connect_timeout,
                lock_timeout=lock_timeout,
                io_timeout=io_timeout,
            )
            try:
                return db, Watch(db, revalidate_every)
            except BaseException:
                db.close()
                raise

        self._open_now = open_now
        try:
            self._db, self._watch = open_now()
        except SchemaVersionError:
            raise
        except StoreError as exc:
            if not defer_connect:
                raise
            self._offline, self._retry_at = exc, time.monotonic() + self._retry_every
            _log.warning("%s; scarguard goes on without it and retries", exc)

    def _ready(self) -> None:
        """Open the store if construction could not (or raise why it still cannot)."""
        if self._offline is None:
            return
        with self._opening:
            if self._offline is None:
                return
            if self._closed:
                raise StoreError(f"PostgreSQL store {self.location}: the store is closed")
            if time.monotonic() < self._retry_at:
                raise self._offline
            try:
                self._db, self._watch = self._open_now()
            except StoreError as exc:
                self._offline, self._retry_at = exc, time.monotonic() + self._retry_every
                raise
            self._offline = None

    @property
    def location(self) -> str:
        """The URL without password, with ``?schema=`` naming the schema."""
        separator = "&" if "?" in self._safe_url else "?"
        return f"{self._safe_url}{separator}schema={self.schema}"

    @contextmanager
    def transaction(self, scope: Scope) -> Iterator[PostgresTransaction]:
        """Hold the tenant's write lock (READ COMMITTED); roll back if the body raises.

        The transaction runs in pipeline mode (see ``_tx.Pipelined``): the locks go
        out with the first statement whose answer is needed, the commit with the statements
        queued last.
        """
        with self._pipelined(scope) as opened:
            tx = PostgresTransaction(
                opened.link,
                scope,
                receipts=self.receipts,
                key=self._key,
                error=self._db.error,
                begin=opened.begin,
            )
            yield tx
            opened.changed = tx.changed
        begin = opened.begin
        tx.committed = begin if opened.own is None else (begin[0], opened.own)

    @contextmanager
    def _pipelined(
        self, scope: Scope | None, *, chain_only: bool = False, what: str = "write failed"
    ) -> Iterator[Opened]:
        """Run the ``with`` block as one write transaction in pipeline mode, all or nothing.

        The locks of :meth:`_begin_statements` are queued behind ``BEGIN``; the commit bumps
        the generation and notifies unless the block set ``changed`` false. Anything raised
        rolls back (the rollback never masks it); a driver error becomes :class:`StoreError`
        saying ``what`` failed.
        """
        self._ready()
        conn = self._db.get()
        pipeline = conn.pipeline()
        try:
            opened = Opened(Pipelined(conn, pipeline.__enter__()))
        except psycopg.Error as exc:
            raise self._db.error("cannot start a write transaction", exc) from exc
        try:
            for statement in self._begin_statements(scope, chain_only=chain_only):
                opened.link.queue(statement)
            opened.begin = self._watch.begin_token()
            yield opened
        except psycopg.Error as exc:
            _abandon(conn, pipeline)
            raise self._db.error(what, exc) from exc
        except BaseException:
            _abandon(conn, pipeline)
            raise
        opened.own = self._commit(conn, pipeline, opened.changed)

    def _begin_statements(self, scope: Scope | None, *, chain_only: bool = False) -> list[str]:
        """The statements starting a write transaction: the schema lock, the tenant lock.

        ``scope`` ``None`` takes the schema lock exclusively (every tenant); ``chain_only``
        takes it shared and no tenant's (the chain's checkpoint belongs to no tenant).
        """
        if chain_only:
            return [
                "BEGIN ISOLATION LEVEL READ COMMITTED",
                f"SELECT pg_advisory_xact_lock_shared({self._db.global_key})",
            ]
        if scope is None:  # every tenant: the schema lock, exclusively
            return ["BEGIN", f"SELECT pg_advisory_xact_lock({self._db.global_key})"]
        tenant = (scope.workspace, scope.project)
        key = self._tenant_keys.get(tenant)
        if key is None:
            key = self._tenant_keys[tenant] = lock_key("tenant", self.schema, *tenant)
        return [
            "BEGIN ISOLATION LEVEL READ COMMITTED",
            f"SELECT pg_advisory_xact_lock_shared({self._db.global_key})",
            f"SELECT pg_advisory_xact_lock({key})",
        ]

    def _commit(self, conn: Connection, pipeline: _Pipeline, changed: bool) -> int | None:
        """Queue the commit and end the pipeline (one round trip); return the own ticket."""
        if not changed:
            try:
                conn.execute("COMMIT")
                pipeline.__exit__(None, None, None)
            except psycopg.Error as exc:
                _abandon(conn, pipeline)
                raise self._db.error("commit failed", exc) from exc
            return None
        ticket = self._watch.start_commit()
        committed, value = False, None
        try:
            bumped = conn.execute(_BUMP_GENERATION)
            conn.execute("SELECT pg_notify(%s, %s)", (self._watch.channel, self._watch.token))
            conn.execute("COMMIT")
            pipeline.__exit__(None, None, None)
            row = bumped.fetchone()
            committed, value = True, None if row is None else int(row[0])
        except psycopg.Error as exc:
            _abandon(conn, pipeline)
            raise self._db.error("commit failed", exc) from exc
        finally:
            self._watch.end_commit(ticket, committed, value)
        return ticket

    def generation(self) -> Hashable:
        """Return ``(commits noticed from elsewhere, own commits)``: no round trip.

        Another process's commit is noticed at the first call after its NOTIFY arrives,
        and at the latest ``revalidate_every`` seconds after the commit. While the store
        could not be opened yet, a token that changes when a new attempt is due.
        """
        if self._offline is not None:
            return ("offline", time.monotonic() >= self._retry_at)
        return (self._watch.generation(), self._watch.own)

    def peek_generation(self) -> Hashable | None:
        """Return :meth:`generation`, which makes no round trip; ``None`` while offline.

        It drains notifications already on the socket without waiting, so an event loop
        may ask it.
        """
        return None if self._offline is not None else self.generation()

    def _read(self, read: Callable[[Connection], _T], *, snapshot: bool = False) -> _T:
        """Run ``read`` on this thread's connection, in one read-only snapshot if asked."""
        self._ready()
        if snapshot:
            with self._db.snapshot() as conn:
                return read(conn)
        try:
            return read(self._db.get())
        except psycopg.Error as exc:
            raise self._db.error("read failed", exc) from exc

    def close(self) -> None:
        """Close every connection (the listener too); the store may not be used afterwards."""
        with self._opening:
            self._closed = True
            if self._offline is not None:
                return
        self._watch.close()
        self._db.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.location!r})"
