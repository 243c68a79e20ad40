"""Fixtures for the store tests: every store kind on fresh files in ``tmp_path``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scarguard.stores import JSONStore, MemoryStore, SQLiteStore, Store

STORE_KINDS = ("memory", "sqlite", "json")


def make_store(kind: str, folder: Path, name: str = "memory", **options: object) -> Store:
    """Open a store of ``kind`` on fresh files in ``folder``."""
    if kind == "memory":
        return MemoryStore(receipts=True, **options)  # type: ignore[arg-type]
    if kind == "sqlite":
        return SQLiteStore(folder / f"{name}.db", **options)  # type: ignore[arg-type]
    if kind == "json":
        return JSONStore(folder / f"{name}.json", **options)  # type: ignore[arg-type]
    raise ValueError(kind)


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Yield each store kind in turn, on fresh files."""
    opened = make_store(request.param, tmp_path)
    yield opened
    opened.close()


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
        each.close()


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
