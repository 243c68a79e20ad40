"""The PostgreSQL schema, as named migrations, and the version it carries.

Everything lives in one PostgreSQL schema (``scarguard`` by default), so that several
memories can share a database. ``meta`` holds :data:`SCHEMA_VERSION` and the ``generation``
bumped by every write; ``migrations`` names the steps applied, like sqlite-utils'
``_sqlite_migrations``. A schema with a higher version was written by a newer scarguard and
is refused before anything is written. Migrations run in one transaction under an advisory
lock, so several processes opening a fresh schema at once apply them exactly once.

Every query the store makes has an index, as in SQLite: failures by tenant and id (newest
first), by signature, by tool, by time; counters and constraints by their primary keys (a
key range serves prefix queries); constraints by creation time. Keys are ``COLLATE "C"``:
byte order of UTF-8 is code point order, the order Python and SQLite sort strings in, and
what makes ``key >= prefix AND key < prefix_end(prefix)`` select exactly one prefix.

``receipt_head`` is one row: the chain's head (``seq``, ``hash``) and the next failure id.
Appending a receipt or adding a failure locks it (``FOR UPDATE`` / ``UPDATE``) until commit,
which serialises chain appends and gives failure ids transactionally (a rolled-back
transaction gives its ids back, as in SQLite and the other stores; a sequence would not).
"""

from __future__ import annotations

from scarguard.receipts import GENESIS
from scarguard.stores._sql import CONSTRAINT_COLUMNS, CONSTRAINT_SQL, INSERT_COLUMNS, Dialect

__all__ = [
    "BOOTSTRAP",
    "BUMP",
    "BUMP_MANY",
    "INSERT_FAILURE",
    "INSERT_RECEIPT",
    "MIGRATIONS",
    "PUT_CONSTRAINT",
    "SCHEMA_VERSION",
    "SQL",
    "TENANT",
]

SCHEMA_VERSION = 2
"""The ``meta.version`` of a schema this scarguard wrote."""

SQL = Dialect("%s")
"""The query text shared with the SQLite store, with psycopg's placeholder."""
TENANT = SQL.tenant

INSERT_FAILURE = (
    "WITH h AS (UPDATE receipt_head SET next_failure_id = next_failure_id + 1"
    " RETURNING next_failure_id - 1 AS id, seq, hash)"
    f" INSERT INTO failures (id, workspace, project, {', '.join(INSERT_COLUMNS)})"
    f" VALUES ((SELECT id FROM h), %s, %s, {', '.join(['%s'] * len(INSERT_COLUMNS))})"
    " RETURNING id, (SELECT seq FROM h), (SELECT hash FROM h)"
)
"""Add a failure with the next id; answer the id and the chain's head, which the update
of ``receipt_head`` locks until commit (so a receipt appended next needs no read)."""
PUT_CONSTRAINT = (
    f"INSERT INTO constraints (workspace, project, {CONSTRAINT_SQL})"
    f" VALUES (%s, %s, {', '.join(['%s'] * len(CONSTRAINT_COLUMNS))})"
    " ON CONFLICT (workspace, project, key) DO UPDATE SET "
    + ", ".join(f"{c} = EXCLUDED.{c}" for c in CONSTRAINT_COLUMNS if c != "key")
)
BUMP = (
    "INSERT INTO counters (workspace, project, key, count, last_at) VALUES (%s, %s, %s, %s, %s)"
    " ON CONFLICT (workspace, project, key)"
    " DO UPDATE SET count = counters.count + EXCLUDED.count, last_at = EXCLUDED.last_at"
    " RETURNING count"
)
BUMP_MANY = (
    "INSERT INTO counters (workspace, project, key, count, last_at)"
    " SELECT %s, %s, k, c, %s FROM unnest(%s::text[], %s::bigint[]) AS t (k, c)"
    " ON CONFLICT (workspace, project, key)"
    " DO UPDATE SET count = counters.count + EXCLUDED.count, last_at = EXCLUDED.last_at"
)
"""Many counters in one statement; the keys must be distinct (ON CONFLICT cannot update a
row twice), so the caller adds duplicates up first."""
INSERT_RECEIPT = (
    "WITH r AS (INSERT INTO receipts (seq, prev, type, at_ms, payload, hash)"
    " VALUES (%s, %s, %s, %s, %s, %s))"
    " UPDATE receipt_head SET seq = %s, hash = %s"
)


BOOTSTRAP = (
    """CREATE TABLE IF NOT EXISTS meta (
        id smallint PRIMARY KEY CHECK (id = 1),
        version integer NOT NULL,
        generation bigint NOT NULL
    )""",
    "INSERT INTO meta (id, version, generation) VALUES (1, 0, 0) ON CONFLICT (id) DO NOTHING",
    """CREATE TABLE IF NOT EXISTS migrations (
        name text PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now()
    )""",
)
"""Run before the migrations: the tables that say which migrations ran."""

_TEXT = 'text COLLATE "C"'

_INITIAL = (
    f"""CREATE TABLE failures (
        id bigint PRIMARY KEY,
        workspace {_TEXT} NOT NULL,
        project {_TEXT} NOT NULL,
        tool {_TEXT} NOT NULL,
        fingerprint {_TEXT} NOT NULL,
        signature {_TEXT} NOT NULL,
        blame {_TEXT} NOT NULL,
        at double precision NOT NULL,
        session {_TEXT} NOT NULL,
        action_class {_TEXT},
        targets text NOT NULL,
        args text NOT NULL,
        error text,
        status_code bigint,
        duration_ms double precision,
        agent {_TEXT},
        provider {_TEXT}
    )""",
    "CREATE INDEX failures_by_id ON failures (workspace, project, id)",
    "CREATE INDEX failures_by_signature ON failures (workspace, project, signature, id)",
    "CREATE INDEX failures_by_tool ON failures (workspace, project, tool, id)",
    "CREATE INDEX failures_by_at ON failures (workspace, project, at)",
    f"""CREATE TABLE counters (
        workspace {_TEXT} NOT NULL,
        project {_TEXT} NOT NULL,
        key {_TEXT} NOT NULL,
        count bigint NOT NULL,
        last_at double precision NOT NULL,
        PRIMARY KEY (workspace, project, key)
    )""",
    f"""CREATE TABLE constraints (
        workspace {_TEXT} NOT NULL,
        project {_TEXT} NOT NULL,
        key {_TEXT} NOT NULL,
        kind {_TEXT} NOT NULL,
        signature {_TEXT} NOT NULL,
        reason text NOT NULL,
        hint text NOT NULL,
        level {_TEXT} NOT NULL,
        occurrences bigint NOT NULL,
        created_at double precision NOT NULL,
        updated_at double precision NOT NULL,
        expires_at double precision,
        tool {_TEXT},
        target {_TEXT},
        action_class {_TEXT},
        fingerprint {_TEXT},
        params text NOT NULL,
        PRIMARY KEY (workspace, project, key)
    )""",
    "CREATE INDEX constraints_by_age ON constraints (workspace, project, created_at, key)",
    # UNIQUE(prev): two writers can never both extend the same head, so the chain cannot fork.
    """CREATE TABLE receipts (
        seq bigint PRIMARY KEY,
        prev text NOT NULL UNIQUE,
        type text NOT NULL,
        at_ms bigint NOT NULL,
        payload text NOT NULL,
        hash text NOT NULL
    )""",
    """CREATE TABLE receipt_head (
        id smallint PRIMARY KEY CHECK (id = 1),
        seq bigint NOT NULL,
        hash text NOT NULL,
        next_failure_id bigint NOT NULL
    )""",
    f"INSERT INTO receipt_head (id, seq, hash, next_failure_id) VALUES (1, 0, '{GENESIS}', 1)",
    """CREATE TABLE receipt_checkpoint (
        id smallint PRIMARY KEY CHECK (id = 1),
        seq bigint NOT NULL,
        hash text NOT NULL
    )""",
)

MIGRATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("0001_initial", _INITIAL),
    # the checkpoint's HMAC when a receipt key is set (receipts.checkpoint_mac)
    ("0002_checkpoint_mac", ("ALTER TABLE receipt_checkpoint ADD COLUMN mac text",)),
)
"""Named migration steps, applied in order, each once (recorded in ``migrations``)."""
