"""A cheap generation token for the PostgreSQL store: LISTEN/NOTIFY plus a periodic check.

Every write transaction bumps ``meta.generation`` and sends ``NOTIFY scarguard_<schema>``
with a token naming the sending store instance; PostgreSQL delivers the notification when
the transaction commits (never when it rolls back). Each store keeps one listening
connection per process. :meth:`Watch.generation` makes no round trip: it drains whatever
notifications already reached the socket (``PQconsumeInput``, non-blocking) and bumps a
local counter when one came from another store instance (its own commits are counted by
the store directly, so they are skipped here).

A notification can be missed (the listening connection dropped, a proxy in between), so
every ``revalidate_every`` seconds the watch also reads ``meta.generation`` (one indexed
single-row ``SELECT``) and bumps the counter if it moved; a dropped listener is reopened
then. **Staleness bound**: a commit made elsewhere changes the token at the first call
after its notification arrives (about one network latency after the commit); if the
notification is lost, at most ``revalidate_every`` seconds after the commit, as long as the
server is reachable. While the server is unreachable the last token is kept (``check()``
goes on with the cached constraints) and one warning is logged per outage.

The watch also counts this store instance's own commits (:attr:`Watch.own`), under the same
lock, together with the commits in flight, so that a transaction can tell its
``begin_generation`` (:meth:`Watch.begin_token`) and ``commit_generation``
(:meth:`Watch.end_commit`) without a round trip. Neither can see a notification that has
not reached the socket yet: a commit made elsewhere just before a transaction's lock may be
noticed only after its commit. Then :meth:`Watch.generation` moves when the notification is
drained (or at the next periodic check), so the token differs from ``commit_generation``
and the engine reloads: late, within the staleness bound above, never wrong for longer.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import threading
import time

import psycopg
from psycopg import sql

from scarguard import _fork
from scarguard.errors import StoreError
from scarguard.stores.postgres._conn import Connection, Connections

__all__ = ["Watch", "channel_for"]

_log = logging.getLogger("scarguard.stores.postgres")


def channel_for(schema: str) -> str:
    """Return the NOTIFY channel of ``schema``: ``scarguard_<schema>`` (hashed when too long)."""
    name = f"scarguard_{schema}"
    if len(name.encode()) <= 63:
        return name
    return "scarguard_" + hashlib.blake2b(schema.encode(), digest_size=16).hexdigest()


class Watch:
    """Track commits of every writer of one schema, cheaply.

    Args:
        db: The store's connections.
        revalidate_every: Seconds between safety reads of ``meta.generation``.
    """

    def __init__(self, db: Connections, revalidate_every: float) -> None:
        self._db = db
        self.every = float(revalidate_every)
        self.channel = channel_for(db.schema)
        self._lock = threading.Lock()
        self._io = threading.Lock()  # who may use the listener's socket
        self._checking = False  # a background safety read is running
        self._listener: Connection | None = None
        self._seen = 0
        self._dirty = False
        self._db_generation = 0
        self._next_check = 0.0
        self._warned = False
        self.own = 0  # ticket of this instance's latest commit in this process
        self._tickets = 0
        self._inflight = 0  # own commits sent but not yet counted
        self._unique = 0  # for begin tokens no generation() ever returns
        self._new_token()
        with self._lock:
            self._listener = self._listen()  # errors surface at open, not on the hot path
            self._db_generation = self._read(self._listener)
            self._next_check = time.monotonic() + self.every
        _fork.track(self, Watch.forget)

    def _new_token(self) -> None:
        self.token = f"{os.getpid()}-{secrets.token_hex(6)}"
        self._token_bytes = self.token.encode()

    def _listen(self) -> Connection:
        conn = self._db.connect()
        try:
            conn.add_notify_handler(self._on_notify)
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
        except psycopg.Error as exc:
            self._db.discard(conn)
            raise self._db.error("cannot listen for commits", exc) from exc
        return conn

    def _on_notify(self, notify: psycopg.Notify) -> None:
        if notify.payload != self.token:
            self._dirty = True

    @staticmethod
    def _read(conn: Connection) -> int:
        row = conn.execute("SELECT generation FROM meta").fetchone()
        return int(row[0]) if row else 0

    def generation(self) -> int:
        """Return a counter bumped whenever another store instance's commit is noticed.

        No network round trip: notifications already on the socket are drained
        (non-blocking), and the periodic safety read runs in a background thread, so a
        server that stops answering never blocks this call.
        """
        with self._lock:
            listener = self._listener
            if listener is not None and self._io.acquire(blocking=False):
                try:
                    pgconn = listener.pgconn
                    pgconn.consume_input()
                    notify = pgconn.notifies()
                    while notify is not None:
                        if notify.extra != self._token_bytes:
                            self._dirty = True
                        notify = pgconn.notifies()
                except psycopg.Error:
                    self._drop()
                finally:
                    self._io.release()
            if time.monotonic() >= self._next_check and not self._checking:
                self._checking = True
                self._next_check = time.monotonic() + self.every
                threading.Thread(
                    target=self._revalidate, name="scarguard-pg-revalidate", daemon=True
                ).start()
            if self._dirty:
                self._dirty = False
                self._seen += 1
            return self._seen

    def _revalidate(self) -> None:
        """Read ``meta.generation`` (reopening the listener if needed), off the hot path."""
        try:
            with self._io:
                try:
                    if self._listener is None:
                        self._listener = self._listen()
                    value = self._read(self._listener)
                except (psycopg.Error, StoreError) as exc:
                    with self._lock:
                        self._drop()
                        # no reconnect storm in an outage
                        self._next_check = time.monotonic() + self.every
                        warn = not self._warned
                        self._warned = True
                    if warn:
                        _log.warning(
                            "scarguard: cannot check %s for new commits (%s); using cached"
                            " constraints",
                            self._db.safe_url,
                            type(exc).__name__,
                        )
                    return
            with self._lock:
                self._warned = False
                if value != self._db_generation:
                    self._db_generation = value
                    self._dirty = True
        finally:
            self._checking = False

    def begin_token(self) -> tuple[int, int]:
        """Return the token ``(generation(), own)`` for a transaction holding its locks.

        Pending notifications are drained first (non-blocking). While another thread's
        commit is in flight (sent, not yet counted in :attr:`own`) the token would hide that
        commit, so a token no :meth:`generation` ever returns is given instead (a negative
        own count): it matches no cached token, and the engine reloads.
        """
        seen = self.generation()
        with self._lock:
            if self._inflight:
                self._unique += 1
                return (seen, -self._unique)
            return (seen, self.own)

    def start_commit(self) -> int:
        """Note that an own commit is about to be sent; return its ticket.

        Tickets are handed out in the order commits are sent, so two commits of one tenant
        (serialised by its lock) get increasing tickets. Pair with :meth:`end_commit`.
        """
        with self._lock:
            self._inflight += 1
            self._tickets += 1
            return self._tickets

    def end_commit(self, ticket: int, committed: bool, value: int | None = None) -> None:
        """Close :meth:`start_commit`; when ``committed``, count it in :attr:`own`.

        :attr:`own` becomes the largest ticket committed, so it never goes back, and a
        later commit of the same tenant always leaves it past this one's ticket.

        ``value`` is ``meta.generation`` as this commit left it. It is taken as the last
        value seen only when it follows the one seen before, i.e. no other writer bumped it
        meanwhile; otherwise the periodic check still finds the difference, so a commit
        whose notification was lost is noticed even when an own commit followed it.
        """
        with self._lock:
            self._inflight -= 1
            if not committed:
                return
            self.own = max(self.own, ticket)
            if value is not None and value == self._db_generation + 1:
                self._db_generation = value

    def _drop(self) -> None:
        listener, self._listener = self._listener, None
        self._next_check = 0.0  # check (and reopen) on the next call
        if listener is not None and not self._db.closed:
            self._db.discard(listener)

    def forget(self) -> None:
        """In a forked child: drop the inherited listener (never closed) and the token."""
        self._lock = threading.Lock()
        self._io = threading.Lock()
        self._checking = False
        self._listener = None
        self._next_check = 0.0
        self._inflight = 0  # the parent's commits in flight are not this process's
        self._new_token()

    def close(self) -> None:
        """Forget the listener (the connections' owner closes it)."""
        with self._lock:
            self._listener = None
        _fork.untrack(self)
