"""The SQLite schema, as named sqlite-utils migrations, and the version it carries.

``PRAGMA user_version`` holds :data:`SCHEMA_VERSION` once every migration ran; a file with
a higher number was written by a newer scarguard and is refused before anything is written.
Migrations run inside the opener's ``BEGIN IMMEDIATE`` transaction (sqlite-utils nests its
own ``atomic()`` as a savepoint), so several processes opening a fresh file at once apply
them exactly once.

Every query the stores make has an index: failures by tenant and id (newest first), by
signature, by tool, by time; counters and constraints by their primary keys (a key range
serves prefix queries); constraints by creation time (oldest first).
"""

from __future__ import annotations

import functools
import sqlite3
from typing import TYPE_CHECKING

from scarguard.stores._sql import (
    CONSTRAINT_COLUMNS,
    CONSTRAINT_SQL,
    INSERT_COLUMNS,
    Dialect,
)

if TYPE_CHECKING:
    from sqlite_utils import Database
    from sqlite_utils.migrations import Migrations

__all__ = [
    "BUMP",
    "BUMP_MANY_ROWS",
    "INSERT_FAILURE",
    "INSERT_RECEIPT",
    "PUT_CONSTRAINT",
    "SCHEMA_VERSION",
    "SQL",
    "TENANT",
    "apply_migrations",
    "bump_many_returning_sql",
    "bump_many_sql",
    "user_version",
]

SCHEMA_VERSION = 1
"""The ``PRAGMA user_version`` of a database this scarguard wrote."""

SQL = Dialect("?")
"""The query text shared with the PostgreSQL store, with sqlite3's placeholder."""
TENANT = SQL.tenant
INSERT_FAILURE = (
    f"INSERT INTO failures (workspace, project, {', '.join(INSERT_COLUMNS)})"
    f" VALUES (?, ?, {', '.join('?' * len(INSERT_COLUMNS))})"
)
PUT_CONSTRAINT = (
    f"INSERT OR REPLACE INTO constraints (workspace, project, {CONSTRAINT_SQL})"
    f" VALUES (?, ?, {', '.join('?' * len(CONSTRAINT_COLUMNS))})"
)
BUMP = (
    "INSERT INTO counters (workspace, project, key, count, last_at) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (workspace, project, key)"
    " DO UPDATE SET count = count + excluded.count, last_at = excluded.last_at"
)
BUMP_RETURNING = BUMP + " RETURNING count"
"""One statement instead of two where the library has ``RETURNING`` (SQLite 3.35 and newer)."""
BUMP_MANY_ROWS = 100
"""Rows per multi-row bump: 500 bound variables, under SQLite's oldest limit of 999."""
INSERT_RECEIPT = (
    "INSERT INTO receipts (seq, prev, type, at_ms, payload, hash) VALUES (?, ?, ?, ?, ?, ?)"
)


@functools.lru_cache(maxsize=8)
def bump_many_sql(rows: int) -> str:
    """Return :data:`BUMP` for ``rows`` rows in one statement.

    SQLite resolves ``ON CONFLICT`` row by row, so a key listed twice is simply bumped twice
    (PostgreSQL refuses that; its store adds duplicates up first).
    """
    values = ", ".join(["(?, ?, ?, ?, ?)"] * rows)
    return BUMP.replace("VALUES (?, ?, ?, ?, ?)", f"VALUES {values}", 1)


@functools.lru_cache(maxsize=8)
def bump_many_returning_sql(rows: int) -> str:
    """Return :func:`bump_many_sql` answering each row's ``key`` and new ``count``."""
    return f"{bump_many_sql(rows)} RETURNING key, count"


_INITIAL = (
    """CREATE TABLE failures (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        workspace TEXT NOT NULL,
        project TEXT NOT NULL,
        tool TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        signature TEXT NOT NULL,
        blame TEXT NOT NULL,
        at REAL NOT NULL,
        session TEXT NOT NULL,
        action_class TEXT,
        targets TEXT NOT NULL,
        args TEXT NOT NULL,
        error TEXT,
        status_code INTEGER,
        duration_ms REAL,
        agent TEXT,
        provider TEXT
    )""",
    "CREATE INDEX failures_by_id ON failures (workspace, project, id)",
    "CREATE INDEX failures_by_signature ON failures (workspace, project, signature, id)",
    "CREATE INDEX failures_by_tool ON failures (workspace, project, tool, id)",
    "CREATE INDEX failures_by_at ON failures (workspace, project, at)",
    """CREATE TABLE counters (
        workspace TEXT NOT NULL,
        project TEXT NOT NULL,
        key TEXT NOT NULL,
        count INTEGER NOT NULL,
        last_at REAL NOT NULL,
        PRIMARY KEY (workspace, project, key)
    ) WITHOUT ROWID""",
    """CREATE TABLE constraints (
        workspace TEXT NOT NULL,
        project TEXT NOT NULL,
        key TEXT NOT NULL,
        kind TEXT NOT NULL,
        signature TEXT NOT NULL,
        reason TEXT NOT NULL,
        hint TEXT NOT NULL,
        level TEXT NOT NULL,
        occurrences INTEGER NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        expires_at REAL,
        tool TEXT,
        target TEXT,
        action_class TEXT,
        fingerprint TEXT,
        params TEXT NOT NULL,
        PRIMARY KEY (workspace, project, key)
    )""",
    "CREATE INDEX constraints_by_age ON constraints (workspace, project, created_at, key)",
    # UNIQUE(prev): two writers can never both extend the same head, so the chain cannot fork.
    """CREATE TABLE receipts (
        seq INTEGER PRIMARY KEY,
        prev TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        payload TEXT NOT NULL,
        hash TEXT NOT NULL
    )""",
)


def _initial(db: Database) -> None:
    for statement in _INITIAL:
        db.execute(statement)


@functools.lru_cache(maxsize=1)
def migrations() -> Migrations:
    """Return the named migrations (sqlite-utils is imported only when a file needs them)."""
    from sqlite_utils.migrations import Migrations

    found = Migrations("scarguard")
    found(name="0001_initial")(_initial)
    return found


def user_version(conn: sqlite3.Connection) -> int:
    """Return the schema version stored in the file (0 for a new file)."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def apply_migrations(conn: sqlite3.Connection) -> None:
    """Apply pending migrations and stamp the version, inside the caller's transaction."""
    from sqlite_utils import Database

    db = Database(conn, recursive_triggers=False, execute_plugins=False)
    migrations().apply(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
