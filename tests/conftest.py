"""Fixtures for the store tests: every store kind on fresh files in ``tmp_path``.

The ``postgres`` kind opens a fresh schema on the test server (``helpers.postgres``) for
each store and drops it afterwards; it is skipped only when the server is unreachable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from helpers.postgres import PG_URL, drop_schema, new_schema, require_postgres
from scarguard.stores import JSONStore, MemoryStore, SQLiteStore, Store

STORE_KINDS = ("memory", "sqlite", "json", "postgres")


def make_store(kind: str, folder: Path, name: str = "memory", **options: object) -> Store:
    """Open a store of ``kind`` on fresh files in ``folder``."""
    if kind == "memory":
        return MemoryStore(receipts=True, **options)  # type: ignore[arg-type]
    if kind == "sqlite":
        return SQLiteStore(folder / f"{name}.db", **options)  # type: ignore[arg-type]
    if kind == "json":
        return JSONStore(folder / f"{name}.json", **options)  # type: ignore[arg-type]
    if kind == "postgres":
        require_postgres()
        from scarguard.stores import PostgresStore

        return PostgresStore(PG_URL, schema=new_schema(), **options)  # type: ignore[arg-type]
    raise ValueError(kind)


def dispose(store: Store) -> None:
    """Close ``store``; drop its schema if it is a test PostgreSQL store."""
    store.close()
    schema = getattr(store, "schema", None)
    if type(store).__name__ == "PostgresStore" and isinstance(schema, str):
        drop_schema(schema)


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Yield each store kind in turn, on fresh files."""
    opened = make_store(request.param, tmp_path)
    yield opened
    dispose(opened)


@pytest.fixture
def store_factory(tmp_path: Path) -> Iterator[Callable[..., Store]]:
    """Return a function opening stores of any kind on fresh files; close them afterwards."""
    opened: list[Store] = []
    names = iter(range(1_000_000))

    def factory(kind: str, **options: object) -> Store:
        new = make_store(kind, tmp_path, name=f"store{next(names)}", **options)
        opened.append(new)
        return new

    yield factory
    for each in opened:
        dispose(each)


@pytest.fixture
def fresh_db(tmp_path: Path) -> Iterator[SQLiteStore]:
    """Yield an SQLite store on a new file."""
    db = SQLiteStore(tmp_path / "fresh.db")
    yield db
    db.close()


@pytest.fixture
def fresh_json(tmp_path: Path) -> Iterator[JSONStore]:
    """Yield a JSON store on a new file."""
    js = JSONStore(tmp_path / "fresh.json")
    yield js
    js.close()
