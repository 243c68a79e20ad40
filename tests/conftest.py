"""Shared fixtures: a fake clock and an in-memory memory on it, every store kind on fresh
files in ``tmp_path``, and the CLI's directory.

The ``postgres`` kind opens a fresh schema on the test server (``helpers.postgres``) for
each store and drops it afterwards; it is skipped only when the server is unreachable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from helpers.cli import clean_cwd, learned_store
from helpers.peer import Peer
from helpers.postgres import PG_URL, drop_schema, new_schema, require_postgres
from helpers.shared import SHARED_KINDS, Shared
from scarguard import FailureMemory
from scarguard.stores import JSONStore, MemoryStore, SQLiteStore, Store
from scarguard.testing import FakeClock, memory_for_tests

_SLOW_MODULE = "pytestmark = pytest.mark.slow"


class _Marks(dict[str, bool]):
    """The markers of a test whose only marker is ``slow``, for a ``-m`` expression."""

    def __missing__(self, name: str) -> bool:
        return False


def _deselects_slow(config: pytest.Config) -> bool:
    """Whether ``-m`` deselects every slow test (``-m "not slow"``, the quick loop)."""
    expression = config.getoption("markexpr", "")
    if not expression or "slow" not in expression:
        return False
    try:
        return not eval(expression, {"__builtins__": {}}, _Marks(slow=True))
    except Exception:  # an expression this reading does not understand: collect everything
        return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """In the quick loop, do not even import a module whose tests are all slow.

    Such modules import agent frameworks or start servers at import time; skipping their
    collection is what keeps ``pytest -m "not slow"`` quick. Their tests would be deselected
    anyway.
    """
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    if not _deselects_slow(config):
        return None
    text = collection_path.read_text(encoding="utf-8")
    return True if any(line.startswith(_SLOW_MODULE) for line in text.splitlines()) else None


@pytest.fixture
def clock() -> FakeClock:
    """A clock that moves only when the test advances it (2026-01-01 00:00 UTC at first)."""
    return FakeClock()


@pytest.fixture
def memory(clock: FakeClock) -> FailureMemory:
    """An in-memory ``FailureMemory`` on the ``clock`` fixture."""
    return memory_for_tests(clock=clock)


@pytest.fixture
def sqlite_memory(tmp_path: Path, clock: FakeClock) -> Iterator[FailureMemory]:
    """A ``FailureMemory`` on a new SQLite file (``memory.db`` in ``tmp_path``) on the ``clock``
    fixture; closed afterwards."""
    with FailureMemory(tmp_path / "memory.db", clock=clock) as opened:
        yield opened


@pytest.fixture
def in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the test from ``tmp_path`` (its working directory), for code that writes there."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """The memory file the processes of a test share: ``memory.db`` in ``tmp_path``."""
    return tmp_path / "memory.db"


@pytest.fixture
def header_read_at_every_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checks in this process read SQLite's WAL-index header (and stat a JSON state file)
    every time (no 1 ms of trust), so the check right after a ``peer`` statement sees it."""
    from scarguard.stores.json import _reads
    from scarguard.stores.sqlite import _token

    monkeypatch.setattr(_token, "FRESH_FOR", 0.0)
    monkeypatch.setattr(_reads, "FRESH_FOR", 0.0)


@pytest.fixture
def peer(path: str | Path) -> Iterator[Peer]:
    """Another process holding a memory on ``path`` (``helpers.peer``); ended afterwards."""
    with Peer(path) as other:
        yield other


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


def _kinds(kinds: tuple[str, ...]) -> list[object]:
    """``kinds`` as fixture parameters, PostgreSQL marked slow.

    Each PostgreSQL store is a fresh schema on the server: the quick loop (-m "not slow") runs
    the contract suite and the process tests over the other kinds, the full suite over all.
    """
    return [
        pytest.param(kind, marks=[pytest.mark.slow] if kind == "postgres" else []) for kind in kinds
    ]


@pytest.fixture(params=_kinds(STORE_KINDS))
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


@pytest.fixture(params=_kinds(SHARED_KINDS))
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Shared]:
    """Yield each store kind several processes can share in turn (``helpers.shared``): a file
    in ``tmp_path``, or a fresh PostgreSQL schema dropped afterwards."""
    place = Shared(request.param, tmp_path)
    yield place
    place.close()


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


@pytest.fixture
def cli_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the ``scarguard`` command in ``tmp_path``, without ``$SCARGUARD_PATH`` or colours."""
    clean_cwd(tmp_path, monkeypatch)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A store with two agent mistakes learned and one rate limit in workspace acme/web."""
    return learned_store(tmp_path)
