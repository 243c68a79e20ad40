"""The SQLite store (:class:`SQLiteStore`): the default, one file shared by threads and processes.

Its modules: ``_store`` (the store, its discipline described there), ``_tx`` (a write
transaction: the context manager and the operations it gives), ``_conn`` (one connection
per thread, busy retries), ``_token`` (the change token), ``_schema`` (the schema, its
migrations, the SQL of the write path) and ``_shm`` (noticing a commit from the WAL-index
header, without a statement). What SQLite shares with PostgreSQL is in
``scarguard.stores._sql``.
"""

from __future__ import annotations

from scarguard.stores.sqlite._store import SQLiteStore

__all__ = ["SQLiteStore"]
