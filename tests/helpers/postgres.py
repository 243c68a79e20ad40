"""The PostgreSQL server the tests use, a schema per test, and the skip when it is absent.

``SCARGUARD_TEST_POSTGRES`` names the server (default: trust auth on 127.0.0.1:5432,
database ``test``). When it cannot be reached the PostgreSQL tests are skipped with the
reason, unless ``SCARGUARD_REQUIRE_POSTGRES=1`` (CI), where they fail instead.
"""

from __future__ import annotations

import functools
import os
import uuid

import pytest

PG_URL = os.environ.get("SCARGUARD_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


@functools.cache
def unreachable() -> str | None:
    """Return why the test server cannot be used, or ``None`` when it can."""
    import psycopg  # in the test extra: a missing driver is an error, not a skip

    try:
        with psycopg.connect(PG_URL, connect_timeout=3, autocommit=True) as conn:
            conn.execute("SELECT 1")
    except psycopg.OperationalError as exc:
        return f"PostgreSQL not reachable at {PG_URL} ({str(exc).strip()[:200]})"
    return None


def require_postgres() -> None:
    """Skip the calling test when the server is unreachable (fail if it is required)."""
    reason = unreachable()
    if reason is None:
        return
    if os.environ.get("SCARGUARD_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"{reason}; SCARGUARD_REQUIRE_POSTGRES=1")
    pytest.skip(f"{reason}; set SCARGUARD_TEST_POSTGRES to a server to run these tests")


def new_schema() -> str:
    """Return a fresh schema name, unique to one test."""
    return f"t_{uuid.uuid4().hex[:16]}"


def url_for(schema: str) -> str:
    """Return the test server's URL selecting ``schema``."""
    separator = "&" if "?" in PG_URL else "?"
    return f"{PG_URL}{separator}schema={schema}"


def drop_schema(schema: str) -> None:
    """Drop ``schema`` and everything in it."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
