"""Storage backends for :class:`~scarguard.FailureMemory`.

``SQLiteStore`` is imported on first use, so that a Python built without ``sqlite3`` can
still import this package and fall back to the JSON store; ``PostgresStore`` too, so that
importing scarguard never imports psycopg (installed by ``scarguard[postgres]``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scarguard.errors import StoreCorruptionWarning
from scarguard.stores.factory import DEFAULT_PATH, default_path, open_store
from scarguard.stores.json_store import JSONStore
from scarguard.stores.memory import MemoryStore
from scarguard.stores.protocol import CounterValue, Store, Transaction, VerifyReport

if TYPE_CHECKING:
    from scarguard.stores.postgres import PostgresStore
    from scarguard.stores.sqlite import SQLiteStore

__all__ = [
    "DEFAULT_PATH",
    "CounterValue",
    "JSONStore",
    "MemoryStore",
    "PostgresStore",
    "SQLiteStore",
    "Store",
    "StoreCorruptionWarning",
    "Transaction",
    "VerifyReport",
    "default_path",
    "open_store",
]


def __getattr__(name: str) -> Any:
    if name == "SQLiteStore":
        from scarguard.stores.sqlite import SQLiteStore

        return SQLiteStore
    if name == "PostgresStore":
        from scarguard.stores.postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
