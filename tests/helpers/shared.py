"""Where the processes of one test meet: a store file in ``tmp_path`` or a PostgreSQL schema.

The store kinds a second process can open (:data:`SHARED_KINDS`): an SQLite or JSON file, or
a fresh schema on the test PostgreSQL server (``helpers.postgres``), dropped when the test
ends. The memory store lives in one process, so it is none of them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Hashable
from pathlib import Path

from helpers.postgres import drop_schema, new_schema, require_postgres, url_for
from helpers.waiting import wait_until
from scarguard.stores.protocol import Store

SHARED_KINDS = ("sqlite", "json", "postgres")
"""The store kinds several processes share (the memory store lives in one process)."""
SUFFIX = {"sqlite": "db", "json": "json"}


class Shared:
    """Where the processes of one test meet: a file in ``folder`` or a fresh PostgreSQL schema.

    Args:
        kind: One of :data:`SHARED_KINDS`.
        folder: The test's ``tmp_path``, for the file kinds.
    """

    def __init__(self, kind: str, folder: Path) -> None:
        self.kind = kind
        self.folder = folder
        self.schema: str | None = None
        if kind == "postgres":
            require_postgres()
            self.schema = new_schema()

    def location(self, name: str) -> str:
        """The path or URL of the store called ``name`` (one schema a test for PostgreSQL)."""
        if self.schema is not None:
            return url_for(self.schema)
        return str(self.folder / f"{name}.{SUFFIX[self.kind]}")

    def noticed(self, store: Store, before: Hashable) -> None:
        """Wait until ``store`` can notice a commit made elsewhere since it said ``before``.

        At once on the file kinds. On PostgreSQL another store's commit reaches this one
        by a notification that arrives when the server sends it, after that commit has
        returned: the store's token moves once it is here. The memory over ``store`` must
        still notice the commit itself.
        """
        if self.kind == "postgres":
            assert wait_until(lambda: store.generation() != before), "no notification came"

    def check_integrity(self, location: str) -> None:
        """SQLite: the database file passes its own integrity check."""
        if self.kind == "sqlite":
            with sqlite3.connect(location) as conn:
                assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    def close(self) -> None:
        """Drop the PostgreSQL schema, if any."""
        if self.schema is not None:
            drop_schema(self.schema)
            self.schema = None
