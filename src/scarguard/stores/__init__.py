"""Storage backends for :class:`~scarguard.FailureMemory`.

The package:

- :mod:`~scarguard.stores.protocol`: the :class:`Store` and :class:`Transaction` protocols
  every backend implements (tested once for all of them by the store contract suite);
- :mod:`~scarguard.stores.factory`: :func:`open_store`, from a path, a URL or ``None``;
- :mod:`~scarguard.stores.records`: the export and import format shared by every store;
- the backends: :mod:`~scarguard.stores.memory` (:class:`MemoryStore`) and one package each
  for :mod:`~scarguard.stores.sqlite` (:class:`SQLiteStore`, the default),
  :mod:`~scarguard.stores.json` (:class:`JSONStore`, the fallback without ``sqlite3``) and
  :mod:`~scarguard.stores.postgres` (:class:`PostgresStore`, for fleets), each keeping its
  plumbing in ``_``-prefixed modules (connections, schemas, transactions, deadlines, change
  detection, files and locks);
- what backends share: ``_sql`` (what SQLite and PostgreSQL share), ``_held`` (what the
  memory and JSON transactions share), ``_threads`` (the SQL stores' per-thread
  connections) and ``_files`` (atomic replacement).

The receipt chain every store appends to (``receipts.Appending``) and gives the primitives
to verify it (``receipts.ChainReader``, verified by ``receipts.verify_store``), and
:class:`VerifyReport`, live in :mod:`scarguard.receipts`;
fork safety (the write gate, what a child forgets) in ``scarguard._fork``.

``SQLiteStore`` is imported on first use, so that a Python built without ``sqlite3`` can
still import this package and fall back to the JSON store; ``PostgresStore`` too, so that
importing scarguard never imports psycopg (installed by ``scarguard[postgres]``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scarguard.errors import StoreCorruptionWarning
from scarguard.receipts import VerifyReport
from scarguard.stores.factory import DEFAULT_PATH, default_path, open_store
from scarguard.stores.json import JSONStore
from scarguard.stores.memory import MemoryStore
from scarguard.stores.protocol import CounterValue, Store, Transaction

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
