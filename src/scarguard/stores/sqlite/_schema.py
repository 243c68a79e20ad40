"""The SQLite schema, as named sqlite-utils migrations, and the version it carries.

``PRAGMA user_version`` holds :data:`SCHEMA_VERSION` once every migration ran; a file with
a higher number was written by a newer scarguard and is refused before anything is written.
Migrations run inside the opener's ``BEGIN IMMEDIATE`` transaction (sqlite-utils nests its
own ``atomic()`` as a savepoint), so several processes opening a fresh file at once apply
them exactly once.

Every query the stores make has an index: failures by tenant and id (newest first), by
signature, by tool, by time; counters and constraints by their primary keys (a key range
serves prefix queries); constraints by creation time (oldest first).

Version 2 (``0002_lighter_writes``) makes a failure record write fewer pages, with the same
guarantees: a failure's id comes from the largest id stored and a high-water mark kept by a
delete trigger (``failure_ids``), instead of ``AUTOINCREMENT``'s ``sqlite_sequence`` row
written at every insert; and the receipt chain is kept from forking by a trigger that makes
every append extend the head, instead of a ``UNIQUE(prev)`` index (a random page per receipt,
since ``prev`` is a hash).
"""

from __future__ import annotations

import functools
import sqlite3
from typing import TYPE_CHECKING

from scarguard.receipts import GENESIS
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
    "bump_many_sql",
    "user_version",
]

SCHEMA_VERSION = 2
"""The ``PRAGMA user_version`` of a database this scarguard wrote."""

SQL = Dialect("?")
"""The query text shared with the PostgreSQL store, with sqlite3's placeholder."""
TENANT = SQL.tenant
NEXT_FAILURE_ID = (
    "max((SELECT coalesce(max(id), 0) FROM failures), (SELECT given FROM failure_ids)) + 1"
)
"""Above every id ever given, deleted ones included: ids are cursors, never reused."""
INSERT_FAILURE = (
    f"INSERT INTO failures (id, workspace, project, {', '.join(INSERT_COLUMNS)})"
    f" VALUES ({NEXT_FAILURE_ID}, ?, ?, {', '.join('?' * len(INSERT_COLUMNS))})"
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
    # UNIQUE(prev): two writers can never both extend the same head, so the chain cannot fork
    # (version 2 has a trigger instead: see _LIGHTER_WRITES).
    """CREATE TABLE receipts (
        seq INTEGER PRIMARY KEY,
        prev TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        payload TEXT NOT NULL,
        hash TEXT NOT NULL
    )""",
)


_FAILURES_V2 = (
    _INITIAL[0]
    .replace("CREATE TABLE failures", "CREATE TABLE failures_v2", 1)
    .replace(" AUTOINCREMENT", "", 1)
)
_FAILURE_COPY = f"id, workspace, project, {', '.join(INSERT_COLUMNS)}"
_RECEIPTS_V2 = """CREATE TABLE receipts_v2 (
        seq INTEGER PRIMARY KEY,
        prev TEXT NOT NULL,
        type TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        payload TEXT NOT NULL,
        hash TEXT NOT NULL
    )"""
_LIGHTER_WRITES = (
    # The largest id given so far, deleted ones included (AUTOINCREMENT kept it in
    # sqlite_sequence). A new id is above both it and every stored id.
    "CREATE TABLE failure_ids (given INTEGER NOT NULL)",
    "INSERT INTO failure_ids (given) SELECT max("
    " coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'failures'), 0),"
    " coalesce((SELECT max(id) FROM failures), 0))",
    _FAILURES_V2,
    f"INSERT INTO failures_v2 ({_FAILURE_COPY}) SELECT {_FAILURE_COPY} FROM failures ORDER BY id",
    "DROP TABLE failures",
    "ALTER TABLE failures_v2 RENAME TO failures",
    *(s for s in _INITIAL if s.startswith("CREATE INDEX failures_")),
    # Only the deletion of the largest id can let an id come back: remember it. Per row, so
    # that every delete (clear, purge, wipe, by hand) keeps the guarantee; the largest id
    # ever given has no larger one left when it goes, so only that row writes here.
    """CREATE TRIGGER failures_keep_the_largest_id AFTER DELETE ON failures
    WHEN OLD.id > (SELECT given FROM failure_ids)
      AND NOT EXISTS (SELECT 1 FROM failures WHERE id > OLD.id)
    BEGIN UPDATE failure_ids SET given = OLD.id; END""",
    _RECEIPTS_V2,
    "INSERT INTO receipts_v2 SELECT seq, prev, type, at_ms, payload, hash FROM receipts"
    " ORDER BY seq",
    "DROP TABLE receipts",
    "ALTER TABLE receipts_v2 RENAME TO receipts",
    # The chain cannot fork: a receipt above the head must be the next one and link to the
    # head (an empty chain starts at 1 from GENESIS), and none may go below the oldest one
    # kept (compaction). A receipt that links to the one before it passes at the first test
    # (one lookup by seq: every append). Two writers extending one head collide on seq; a
    # row inside the chain (only an edit by hand puts one there) is verification's to find.
    f"""CREATE TRIGGER receipts_extend_the_head BEFORE INSERT ON receipts
    WHEN NEW.prev IS NOT (SELECT hash FROM receipts WHERE seq = NEW.seq - 1)
      AND (NEW.seq < (SELECT min(seq) FROM receipts)
        OR NEW.seq > (SELECT coalesce(max(seq), 0) FROM receipts)
          AND NOT (NEW.seq = 1 AND NEW.prev = '{GENESIS}'))
    BEGIN SELECT RAISE(ABORT, 'a receipt must extend the head of the chain'); END""",
)


def _initial(db: Database) -> None:
    for statement in _INITIAL:
        db.execute(statement)


def _lighter_writes(db: Database) -> None:
    for statement in _LIGHTER_WRITES:
        db.execute(statement)


@functools.lru_cache(maxsize=1)
def migrations() -> Migrations:
    """Return the named migrations (sqlite-utils is imported only when a file needs them)."""
    from sqlite_utils.migrations import Migrations

    found = Migrations("scarguard")
    found(name="0001_initial")(_initial)
    found(name="0002_lighter_writes")(_lighter_writes)
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
