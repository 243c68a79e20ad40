"""The PostgreSQL store (:class:`PostgresStore`): one memory shared by fleets of agents.

Importing this package imports psycopg 3 (``pip install "scarguard[postgres]"``); the
``scarguard.stores`` package imports it only on first use of ``PostgresStore``.

Its modules: ``_store`` (the store and its write transaction, its discipline described there),
``_upkeep`` (clear, wipe, retention, import; the chain's read and checkpoint), ``_conn``
(connections, URLs, locks, migrations), ``_deadline`` (a bound on every round trip),
``_schema`` (the schema as named migrations and the SQL), ``_tx`` (pipelined transactions) and
``_watch`` (change detection by ``LISTEN``/``NOTIFY``). What PostgreSQL shares with SQLite is
in ``scarguard.stores._sql``.
"""

from __future__ import annotations

import psycopg  # noqa: F401  # first: without psycopg, this package fails to import, at once

from scarguard.stores.postgres._store import PostgresStore

__all__ = ["PostgresStore"]
