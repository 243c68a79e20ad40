"""Connections to one PostgreSQL schema: one per thread, new ones after ``fork``, migrations.

Each thread gets its own psycopg connection, opened on first use and reopened when the
server dropped it. A child process forgets every inherited connection without closing it
(closing would end the parent's session; psycopg's ``PGconn`` never finishes a connection
created by another process). Connections run with psycopg's implicit transactions off: the
store issues every ``BEGIN`` … ``COMMIT`` itself, so no connection is ever left idle in a
transaction, and a read outside a transaction is one statement.

Errors name the URL without its password (``user:secret@`` and ``?password=`` are removed,
and the password is scrubbed from the driver's message).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import sql

from scarguard.errors import ConfigurationError, SchemaVersionError, StoreError
from scarguard.stores._threads import PerThread
from scarguard.stores.postgres._deadline import BoundedConnection
from scarguard.stores.postgres._schema import BOOTSTRAP, MIGRATIONS, SCHEMA_VERSION

__all__ = ["Connection", "Connections", "lock_key", "redact_url", "rollback", "split_url"]

Connection = psycopg.Connection[tuple[Any, ...]]

_SCHEMA_PARAM = "schema"


def split_url(url: str) -> tuple[str, str | None]:
    """Return ``url`` without its ``schema=`` query parameter, and that parameter."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = next((v for k, v in query if k == _SCHEMA_PARAM), None)
    rest = urlencode([(k, v) for k, v in query if k != _SCHEMA_PARAM])
    return urlunsplit(parts._replace(query=rest)), schema


def _is_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def _conninfo(url: str) -> dict[str, Any] | None:
    """Parse a libpq ``key=value`` string (``None`` when it cannot be parsed)."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        return conninfo_to_dict(url)
    except psycopg.Error:
        return None


def _password(url: str) -> str | None:
    if not _is_url(url):
        found = (_conninfo(url) or {}).get("password")
        return None if found is None else str(found)
    parts = urlsplit(url)
    found = parts.password
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key == "password":
            found = value
    return found


def redact_url(url: str) -> str:
    """Return ``url`` without its password (in the user part, the query, or ``password=``)."""
    if not _is_url(url):  # a libpq key=value string
        from psycopg.conninfo import make_conninfo

        params = _conninfo(url)
        if params is None:
            return "<unparsable PostgreSQL connection string>"
        if "password" in params:
            params["password"] = "***"
        return make_conninfo(**params)
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            user, host = netloc.rsplit("@", 1)
            netloc = f"{user.split(':', 1)[0]}@{host}"
        query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
        safe = urlencode([(k, "***" if k == "password" else v) for k, v in query])
        return urlunsplit(parts._replace(netloc=netloc, query=safe))
    except ValueError:
        return "<unparsable PostgreSQL URL>"


def lock_key(*parts: str) -> int:
    """Return a signed 64-bit advisory lock key for ``parts`` (collisions: 2**-64)."""
    digest = hashlib.blake2b(json.dumps(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def rollback(conn: Connection) -> None:
    """Roll back if a transaction is open; never raise (an exception is already in flight)."""
    with contextlib.suppress(psycopg.Error):
        if not conn.closed and conn.info.transaction_status != 0:  # 0: idle
            conn.execute("ROLLBACK")


class Connections(PerThread[Connection]):
    """Open, validate and migrate one schema, then hand out per-thread connections.

    Args:
        url: A ``postgresql://`` URL without the ``schema`` parameter.
        schema: The PostgreSQL schema holding the tables.
        durable: ``synchronous_commit=on`` (else ``off``).
        connect_timeout: Seconds to wait for the server when connecting.
        lock_timeout: Seconds a statement waits for a lock (a writer of the same tenant stuck
            inside its transaction) before failing with :class:`StoreError`, as SQLite's busy
            timeout does.
        io_timeout: Seconds any one round trip may take before its connection is cut
            (:mod:`scarguard.stores.postgres._deadline`); more than ``lock_timeout``.
    """

    _close_errors = (psycopg.Error,)

    def __init__(
        self,
        url: str,
        schema: str,
        *,
        durable: bool,
        connect_timeout: float,
        lock_timeout: float = 5.0,
        io_timeout: float = 10.0,
    ) -> None:
        if not schema or len(schema.encode()) > 63 or "\x00" in schema:
            raise ConfigurationError(f"schema name must be 1 to 63 bytes, not {schema!r}")
        self.url = url
        self.schema = schema
        self.durable = durable
        self.connect_timeout = max(1, round(connect_timeout))
        self.lock_timeout_ms = max(1, round(lock_timeout * 1000))
        self.io_timeout = max(float(io_timeout), lock_timeout + 1.0)
        self.safe_url = redact_url(url)
        self.global_key = lock_key("global", schema)
        super().__init__()
        self._open()
        self._track()

    def error(self, what: str, exc: BaseException | None = None) -> StoreError:
        """Return a :class:`StoreError` naming the URL (no password), ``what`` failed and why."""
        detail = f": {exc}".rstrip() if exc is not None else ""
        secret = _password(self.url)
        if secret:
            for text in {secret, unquote(secret)}:
                detail = detail.replace(text, "***")
        where = f"{self.safe_url} (schema {self.schema})"
        return StoreError(f"PostgreSQL store {where}: {what}{detail}", path=self.safe_url)

    def connect(self) -> Connection:
        """Open a new connection with the store's settings (not registered per thread)."""
        if self._closed:
            raise self.error("the store is closed")
        try:
            bounded = BoundedConnection.connect(
                self.url,
                autocommit=True,  # we issue BEGIN / COMMIT ourselves
                connect_timeout=self.connect_timeout,
                application_name="scarguard",
                # a dead host is noticed on an idle connection too (the listener)
                keepalives=1,
                keepalives_idle=30,
                keepalives_interval=10,
                keepalives_count=3,
            )
            bounded.io_timeout = self.io_timeout
            conn: Connection = bounded
        except psycopg.Error as exc:
            secret = _password(self.url)
            if secret and any(text in str(exc) for text in {secret, unquote(secret)}):
                raise self.error("cannot connect", exc) from None  # the cause shows it
            raise self.error("cannot connect", exc) from exc
        try:
            sync = "on" if self.durable else "off"
            conn.execute(
                sql.SQL(
                    "SET search_path TO {}; SET synchronous_commit TO {}; SET lock_timeout TO {}"
                ).format(
                    sql.Identifier(self.schema),
                    sql.SQL(sync),
                    sql.Literal(f"{self.lock_timeout_ms}ms"),
                )
            )
        except psycopg.Error as exc:
            conn.close()
            raise self.error("cannot configure the connection", exc) from exc
        return self._register(conn)

    def _open(self) -> None:
        conn = self.connect()
        try:
            if self._version(conn) < SCHEMA_VERSION:  # a newer schema stays untouched
                conn.execute("BEGIN")
                try:
                    key = lock_key("migrate", self.schema)
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (self.global_key,))
                    if self._version(conn) < SCHEMA_VERSION:  # another process may have won
                        self._migrate(conn)
                    conn.execute("COMMIT")
                except BaseException:
                    rollback(conn)
                    raise
        except StoreError:
            self.close()
            raise
        except psycopg.Error as exc:
            self.close()
            raise self.error("cannot open the store", exc) from exc
        self._local.conn = conn

    def _version(self, conn: Connection) -> int:
        name = f"{sql.Identifier(self.schema).as_string(conn)}.meta"
        row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()
        if not row or not row[0]:
            return 0
        found = conn.execute("SELECT version FROM meta").fetchone()
        version = int(found[0]) if found else 0
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"PostgreSQL store {self.safe_url} (schema {self.schema}) has schema version"
                f" {version}, newer than the {SCHEMA_VERSION} this scarguard reads; upgrade"
                " scarguard (schema left untouched)",
                path=self.safe_url,
            )
        return version

    def _migrate(self, conn: Connection) -> None:
        exists = conn.execute(
            "SELECT 1 FROM pg_namespace WHERE nspname = %s", (self.schema,)
        ).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(self.schema)))
        for statement in BOOTSTRAP:
            conn.execute(statement)
        done = {r[0] for r in conn.execute("SELECT name FROM migrations")}
        for name, statements in MIGRATIONS:
            if name not in done:
                for statement in statements:
                    conn.execute(statement)
                conn.execute("INSERT INTO migrations (name) VALUES (%s)", (name,))
        conn.execute("UPDATE meta SET version = %s", (SCHEMA_VERSION,))

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """Give this thread's connection inside one read-only snapshot, rolled back after.

        ``REPEATABLE READ READ ONLY``: every statement of the block sees the same commits. A
        driver error, in the block too, becomes :class:`StoreError` naming the server.
        """
        conn = self.get()
        try:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                yield conn
            finally:
                rollback(conn)
        except psycopg.Error as exc:
            raise self.error("read failed", exc) from exc

    def get(self) -> Connection:
        """Return this thread's connection, opening (or reopening a dropped) one."""
        conn: Connection | None = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            if conn is not None:
                self.discard(conn)
            conn = self._local.conn = self.connect()
        return conn

    def discard(self, conn: Connection) -> None:
        """Close and forget ``conn`` (a dropped or closed connection)."""
        with self._lock:
            if conn in self._all:
                self._all.remove(conn)
        with contextlib.suppress(psycopg.Error):
            conn.close()
