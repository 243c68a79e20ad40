"""SQLiteStore: schema and migrations, PRAGMAs, indexes, busy handling, bad input."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
import tenacity

from helpers.factories import failure
from scarguard.errors import SchemaVersionError, StoreError
from scarguard.model import Scope
from scarguard.receipts import verify_store
from scarguard.stores import SQLiteStore
from scarguard.stores._sql import FAILURE_COLUMNS
from scarguard.stores.sqlite import _token
from scarguard.stores.sqlite._conn import Connections
from scarguard.stores.sqlite._schema import SCHEMA_VERSION

SCOPE = Scope("acme", "web")


def raw(store: SQLiteStore) -> sqlite3.Connection:
    return sqlite3.connect(store.location)


def test_schema_is_migrated_and_versioned(fresh_db: SQLiteStore) -> None:
    """A new file gets every table, the named migration and PRAGMA user_version."""
    with raw(fresh_db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"failures", "counters", "constraints", "receipts", "_sqlite_migrations"} <= tables
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        names = [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations")]
        assert names == ["0001_initial", "0002_lighter_writes"]
        columns = [r[1] for r in conn.execute("PRAGMA table_info(failures)")]
        assert set(FAILURE_COLUMNS) | {"workspace", "project"} == set(columns)


def test_reopening_does_not_migrate_twice(tmp_path: Path) -> None:
    """Opening an existing file keeps its data and applies no migration again."""
    path = tmp_path / "m.db"
    with SQLiteStore(path).transaction(SCOPE) as tx:
        tx.add_failure(failure(0))
    again = SQLiteStore(path)
    assert len(again.failures(SCOPE)) == 1
    with raw(again) as conn:
        assert conn.execute("SELECT count(*) FROM _sqlite_migrations").fetchone()[0] == 2


@pytest.mark.parametrize(("durable", "level"), [(False, 1), (True, 2)])
def test_wal_and_synchronous_pragmas(tmp_path: Path, durable: bool, level: int) -> None:
    """The journal is WAL; synchronous is NORMAL, or FULL with durable=True."""
    store = SQLiteStore(tmp_path / "p.db", durable=durable, busy_timeout_ms=1234)
    conn = store._db.get()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == level
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 1234


@pytest.mark.parametrize(
    ("sql", "params"),
    [
        ("SELECT * FROM failures WHERE workspace=? AND project=? ORDER BY id DESC LIMIT 5", 2),
        ("SELECT * FROM failures WHERE workspace=? AND project=? AND tool=? ORDER BY id DESC", 3),
        ("SELECT * FROM failures WHERE workspace=? AND project=? AND signature=? ORDER BY id", 3),
        ("SELECT * FROM failures WHERE workspace=? AND project=? AND at>=?", 3),
        ("SELECT * FROM counters WHERE workspace=? AND project=? AND key>=? AND key<?", 4),
        ("SELECT * FROM constraints WHERE workspace=? AND project=? ORDER BY created_at, key", 2),
    ],
)
def test_every_query_uses_an_index(fresh_db: SQLiteStore, sql: str, params: int) -> None:
    """The planner answers each store query from an index, never a table scan."""
    plan = " ".join(
        str(r[-1]) for r in fresh_db._db.get().execute(f"EXPLAIN QUERY PLAN {sql}", ["x"] * params)
    )
    assert "USING" in plan and "TEMP B-TREE" not in plan, plan


def test_newer_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    """A file with a higher user_version raises SchemaVersionError naming file and versions."""
    path = tmp_path / "newer.db"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    before = path.read_bytes()
    with pytest.raises(SchemaVersionError) as caught:
        SQLiteStore(path)
    assert str(path) in str(caught.value) and "99" in str(caught.value)
    assert caught.value.path == str(path)
    assert path.read_bytes() == before
    assert not Path(f"{path}-wal").exists()


def test_a_file_that_is_not_sqlite_is_refused_byte_identical(tmp_path: Path) -> None:
    """A non-SQLite file raises StoreError and is not modified."""
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database\n" * 10)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not an SQLite database"):
        SQLiteStore(path)
    assert path.read_bytes() == before


def test_a_folder_is_refused(tmp_path: Path) -> None:
    """A path that is a folder raises StoreError naming it."""
    (tmp_path / "dir.db").mkdir()
    with pytest.raises(StoreError, match="folder") as caught:
        SQLiteStore(tmp_path / "dir.db")
    assert caught.value.path == str(tmp_path / "dir.db")


def test_parent_folders_are_created(tmp_path: Path) -> None:
    """Missing parent folders are created."""
    store = SQLiteStore(tmp_path / "a" / "b" / "c.db")
    assert Path(store.location).exists()


def test_a_parent_that_is_a_file_raises_store_error(tmp_path: Path) -> None:
    """A parent path that cannot be a folder raises StoreError, not OSError."""
    (tmp_path / "plain").write_text("x")
    with pytest.raises(StoreError):
        SQLiteStore(tmp_path / "plain" / "x.db")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores permissions")
def test_a_read_only_folder_raises_store_error(tmp_path: Path) -> None:
    """A folder where the file cannot be created raises StoreError."""
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(StoreError):
            SQLiteStore(folder / "x.db")
    finally:
        folder.chmod(0o700)


def hold_write_lock(path: str) -> sqlite3.Connection:
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    return blocker


def test_busy_past_the_retries_raises_store_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer holding the lock past every retry gives a StoreError saying "locked"."""
    monkeypatch.setattr(Connections, "retry_wait", tenacity.wait_none())
    store = SQLiteStore(tmp_path / "busy.db", busy_timeout_ms=1)
    blocker = hold_write_lock(store.location)
    with pytest.raises(StoreError, match="locked") as caught, store.transaction(SCOPE) as tx:
        tx.add_failure(failure(0))
    assert caught.value.path == store.location
    blocker.execute("ROLLBACK")
    with store.transaction(SCOPE) as tx:
        tx.add_failure(failure(0))
    assert len(store.failures(SCOPE)) == 1


def test_busy_is_retried_and_succeeds_once_the_lock_is_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A busy BEGIN IMMEDIATE is retried by tenacity; the retry succeeds when the lock frees."""
    store = SQLiteStore(tmp_path / "busy.db", busy_timeout_ms=1)
    blocker = hold_write_lock(store.location)
    waits: list[int] = []

    def release_then_retry(state: Any) -> float:
        waits.append(state.attempt_number)
        if blocker.in_transaction:
            blocker.execute("ROLLBACK")
        return 0.0

    monkeypatch.setattr(Connections, "retry_wait", staticmethod(release_then_retry))
    with store.transaction(SCOPE) as tx:
        tx.add_failure(failure(0))
    assert waits and len(store.failures(SCOPE)) == 1


def test_generation_sees_commits_of_other_connections(tmp_path: Path) -> None:
    """Another store on the same file committing changes this store's generation."""
    path = tmp_path / "g.db"
    mine, theirs = SQLiteStore(path), SQLiteStore(path)
    before = mine.generation()
    with theirs.transaction(SCOPE) as tx:
        tx.bump("k", 1.0)
    assert mine.generation() != before


class _Clock:
    """A monotonic clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_another_process_commit_is_seen_once_the_staleness_bound_has_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """For ``FRESH_FOR`` after a read that found nothing new, the token is trusted without
    reading the WAL-index header; a commit this process did not make (a plain connection,
    as another process would) is seen by the first check after that."""
    clock = _Clock()
    monkeypatch.setattr(_token, "_monotonic", clock)
    path = tmp_path / "g.db"
    store = SQLiteStore(path)
    before = store.generation()
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as other:
        other.execute(
            "INSERT INTO counters (workspace, project, key, count, last_at)"
            " VALUES ('acme', 'web', 'k', 1, 1.0)"
        )
    clock.now += _token.FRESH_FOR / 2
    assert store.generation() == before
    clock.now += _token.FRESH_FOR
    assert store.generation() != before


def test_a_commit_by_another_store_of_this_process_is_seen_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stores of one process share the file's commit counter: no staleness between them."""
    clock = _Clock()
    monkeypatch.setattr(_token, "_monotonic", clock)
    path = tmp_path / "g.db"
    mine, theirs = SQLiteStore(path), SQLiteStore(path)
    before = mine.generation()
    assert mine.generation() == before
    with theirs.transaction(SCOPE) as tx:
        tx.bump("k", 1.0)
    assert mine.generation() != before


def test_peek_generation_answers_while_nobody_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``peek_generation`` (what an event loop asks) gives the token last read on any
    thread while the header shows no commit, and ``None`` once anyone committed. (Each
    ``generation()`` here reads the header, as it does once its 1 ms of trust has passed.)"""
    monkeypatch.setattr(_token, "FRESH_FOR", 0.0)
    path = tmp_path / "g.db"
    store, theirs = SQLiteStore(path), SQLiteStore(path)
    assert store.peek_generation() is None  # nothing read yet
    token = store.generation()
    on_another_thread: list[object] = []
    worker = threading.Thread(target=lambda: on_another_thread.append(store.peek_generation()))
    worker.start()
    worker.join()
    assert on_another_thread == [token]
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as other:
        other.execute(
            "INSERT INTO counters (workspace, project, key, count, last_at)"
            " VALUES ('acme', 'web', 'k', 1, 1.0)"
        )
    assert store.peek_generation() is None
    moved = store.generation()
    assert moved != token and store.peek_generation() == moved
    with theirs.transaction(SCOPE) as tx:  # this process, another store
        tx.bump("k", 1.0)
    assert store.peek_generation() is None


def test_each_thread_has_its_own_connection_and_threads_lose_nothing(
    fresh_db: SQLiteStore,
) -> None:
    """Four threads writing 50 records each use four connections and keep all 200 records."""
    connections = set()
    errors: list[BaseException] = []

    def work() -> None:
        try:
            connections.add(id(fresh_db._db.get()))
            for i in range(50):
                with fresh_db.transaction(SCOPE) as tx:
                    tx.add_failure(failure(i))
                    tx.bump("k", 1.0)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(connections) == 4
    assert len(fresh_db.failures(SCOPE)) == 200 and fresh_db.counters(SCOPE)["k"].count == 200


def test_a_closed_store_raises_store_error(tmp_path: Path) -> None:
    """Using a store after close() raises StoreError."""
    store = SQLiteStore(tmp_path / "c.db")
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.failures(SCOPE)


def test_location_is_the_absolute_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """location is the database file's absolute path."""
    monkeypatch.chdir(tmp_path)
    assert SQLiteStore("rel.db").location == str(tmp_path / "rel.db")


def test_clear_adds_no_receipt_and_wipe_removes_the_checkpoint(fresh_db: SQLiteStore) -> None:
    """clear() leaves the chain as it was; wipe() also deletes the checkpoint file."""
    with fresh_db.transaction(SCOPE) as tx:
        tx.receipt("failure", {"x": 1}, 1.0)
    assert verify_store(fresh_db).count == 1
    fresh_db.clear(SCOPE)
    assert verify_store(fresh_db).count == 1
    assert Path(fresh_db.checkpoint_path).exists()
    fresh_db.wipe()
    assert not Path(fresh_db.checkpoint_path).exists()
    assert verify_store(fresh_db).valid


def test_ids_are_not_reused_after_wipe(fresh_db: SQLiteStore) -> None:
    """After wipe() new failures get ids above every id ever given."""
    with fresh_db.transaction(SCOPE) as tx:
        tx.add_failure(failure(0))
        tx.add_failure(failure(1))
    fresh_db.wipe()
    with fresh_db.transaction(SCOPE) as tx:
        assert tx.add_failure(failure(2)).id == 3


def test_receipts_off_verifies_empty(tmp_path: Path) -> None:
    """With receipts=False nothing is chained and verify() is valid with count 0."""
    store = SQLiteStore(tmp_path / "r.db", receipts=False)
    with store.transaction(SCOPE) as tx:
        tx.receipt("failure", {"x": 1}, 1.0)
    assert verify_store(store).valid and verify_store(store).count == 0
    with raw(store) as conn:
        assert conn.execute("SELECT count(*) FROM receipts").fetchone()[0] == 0


def test_the_chain_cannot_fork(fresh_db: SQLiteStore) -> None:
    """A second receipt extending the same head is rejected by the schema (a trigger)."""
    with fresh_db.transaction(SCOPE) as tx:
        tx.receipt("failure", {"x": 1}, 1.0)
    with raw(fresh_db) as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO receipts VALUES (9, ?, 't', 1, '{}', 'h')", ("0" * 64,))


def test_a_database_deleted_while_open_gets_every_later_record(tmp_path: Path) -> None:
    """No record acknowledged after the file went goes into the unlinked file: the store
    notices (one stat), warns, creates the file afresh at the path, and writes there."""
    from scarguard import FailureMemory
    from scarguard.errors import StoreCorruptionWarning

    path = tmp_path / "memory.db"
    memory = FailureMemory(path)
    memory.record("run", {"n": 0}, error="before")
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")
    with pytest.warns(StoreCorruptionWarning, match="deleted"):
        for n in range(1, 9):
            memory.record("run", {"n": n}, error=f"after {n}")
    seen = {f.error for f in FailureMemory(path).recent_failures(100)}
    assert seen == {f"after {n}" for n in range(1, 9)}


def test_a_database_replaced_while_open_refuses_to_write_into_the_old_file(
    tmp_path: Path,
) -> None:
    """A file replaced under an open store: every write fails loudly instead of landing,
    acknowledged, in the old file; a new memory then uses the file now at the path."""
    from scarguard import FailureMemory

    path = tmp_path / "memory.db"
    memory = FailureMemory(path)
    memory.record("run", {"n": 0}, error="before")
    other = tmp_path / "other.db"
    with FailureMemory(other) as writer:  # closed: its log is in the main file
        writer.record("run", {"n": 9}, error="in the other file")
    os.replace(other, path)
    for n in range(1, 4):
        with pytest.raises(StoreError, match="replaced by another file while open"):
            memory.record("run", {"n": n}, error=f"after {n}")
    memory.store.close()
    fresh = FailureMemory(path)
    fresh.record("run", {"n": 5}, error="after reopening")
    assert {f.error for f in fresh.recent_failures(10)} >= {"after reopening"}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_fork_waits_for_another_threads_read(tmp_path: Path) -> None:
    """A statement is a critical section too: the child closes the connections it inherits,
    so none may be in the middle of one when the process forks."""
    from helpers.forking import in_child

    store = SQLiteStore(tmp_path / "m.db")
    inside, leave, order = threading.Event(), threading.Event(), []

    def slow_read(conn: sqlite3.Connection) -> None:
        conn.execute("SELECT 1").fetchone()
        inside.set()
        leave.wait(5)
        order.append("read")

    thread = threading.Thread(target=lambda: store._read(slow_read))
    thread.start()
    inside.wait(5)
    threading.Timer(0.2, leave.set).start()
    assert in_child(lambda: True)
    order.append("forked")
    thread.join()
    store.close()
    assert order == ["read", "forked"]
