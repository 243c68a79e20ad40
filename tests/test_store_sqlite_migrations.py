"""SQLite schema versions: a version 1 file is migrated once and keeps every record; the
version 2 schema keeps failure ids increasing and never reused, and the chain unforkable."""

from __future__ import annotations

import contextlib
import multiprocessing
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.factories import failure
from scarguard import FailureMemory
from scarguard.model import Scope
from scarguard.receipts import GENESIS, verify_store
from scarguard.stores import SQLiteStore
from scarguard.stores._sql import INSERT_COLUMNS
from scarguard.stores.sqlite import _conn, _schema, _tx
from scarguard.testing import FakeClock

SCOPE = Scope("acme", "web")
ERROR = "command failed: exit code 1"
V1_INSERT_FAILURE = (
    f"INSERT INTO failures (workspace, project, {', '.join(INSERT_COLUMNS)})"
    f" VALUES (?, ?, {', '.join('?' * len(INSERT_COLUMNS))})"
)
"""What version 1 inserted a failure with (AUTOINCREMENT gave the id)."""


def raw(path: Path | str) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def migration_names(path: Path | str) -> list[str]:
    with contextlib.closing(raw(path)) as conn:
        return [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY rowid")]


@contextlib.contextmanager
def version_1(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Make the stores opened in the block write version 1 files, as scarguard 1 did."""
    from sqlite_utils.migrations import Migrations

    only_initial = Migrations("scarguard")
    only_initial(name="0001_initial")(_schema._initial)
    with monkeypatch.context() as patch:
        patch.setattr(_conn, "SCHEMA_VERSION", 1)
        patch.setattr(_schema, "SCHEMA_VERSION", 1)
        patch.setattr(_schema, "migrations", lambda: only_initial)
        patch.setattr(_tx, "INSERT_FAILURE", V1_INSERT_FAILURE)
        yield


def v1_file(path: Path, monkeypatch: pytest.MonkeyPatch, records: int = 6) -> dict[str, Any]:
    """Write a version 1 file through the engine: failures, counters, constraints, receipts.

    The failure with the largest id is deleted afterwards, so that version 1's
    ``sqlite_sequence`` is ahead of the ids stored. Returns what the file holds.
    """
    clock = FakeClock()
    with version_1(monkeypatch):
        memory = FailureMemory(path, workspace=SCOPE.workspace, project=SCOPE.project, clock=clock)
        for i in range(records):
            clock.advance(1.0)
            memory.record("bash", {"command": f"make job-{i % 2}"}, error=ERROR)
        last = max(f.id for f in memory.recent_failures(100) if f.id is not None)
        memory.close()
    with contextlib.closing(raw(path)) as conn:
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'failures'").fetchone()[0]
        assert "AUTOINCREMENT" in sql  # really the version 1 schema
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
        conn.execute("DELETE FROM failures WHERE id = ?", (last,))
    with contextlib.closing(raw(path)) as conn:
        failures = conn.execute("SELECT * FROM failures ORDER BY id").fetchall()
        counters = conn.execute("SELECT * FROM counters ORDER BY key").fetchall()
        constraints = conn.execute("SELECT * FROM constraints ORDER BY key").fetchall()
        receipts = conn.execute("SELECT * FROM receipts ORDER BY seq").fetchall()
    assert failures and counters and constraints and receipts
    return {
        "failures": failures,
        "counters": counters,
        "constraints": constraints,
        "receipts": receipts,
        "largest_id": last,
    }


def test_a_fresh_file_is_version_2(fresh_db: SQLiteStore) -> None:
    """A new file has version 2: no AUTOINCREMENT, no index on prev, both triggers."""
    with contextlib.closing(raw(fresh_db.location)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
        schema = dict(conn.execute("SELECT name, sql FROM sqlite_master"))
        assert "AUTOINCREMENT" not in schema["failures"]
        assert "UNIQUE" not in schema["receipts"]
        assert not [n for n in schema if n.startswith("sqlite_autoindex_receipts")]
        assert {"receipts_extend_the_head", "failures_keep_the_largest_id"} <= set(schema)
        assert conn.execute("SELECT given FROM failure_ids").fetchall() == [(0,)]
    assert migration_names(fresh_db.location) == ["0001_initial", "0002_lighter_writes"]


def test_a_version_1_file_is_migrated_once_and_keeps_every_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every row survives the migration, the chain verifies and new records chain on, with
    ids above every id version 1 gave (the deleted largest one included)."""
    path = tmp_path / "v1.db"
    before = v1_file(path, monkeypatch)
    memory = FailureMemory(path, workspace=SCOPE.workspace, project=SCOPE.project)
    with contextlib.closing(raw(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
        assert conn.execute("SELECT * FROM failures ORDER BY id").fetchall() == before["failures"]
        assert conn.execute("SELECT * FROM counters ORDER BY key").fetchall() == before["counters"]
        found = conn.execute("SELECT * FROM constraints ORDER BY key").fetchall()
        assert found == before["constraints"]
        assert conn.execute("SELECT * FROM receipts ORDER BY seq").fetchall() == before["receipts"]
        assert conn.execute("SELECT given FROM failure_ids").fetchone()[0] == before["largest_id"]
    report = memory.verify()
    assert report.valid and report.count == len(before["receipts"]), report
    memory.record("bash", {"command": "make after"}, error=ERROR)
    (newest,) = memory.recent_failures(1)
    assert newest.id == before["largest_id"] + 1
    report = memory.verify()
    assert report.valid and report.count == len(before["receipts"]) + 1, report
    memory.close()
    SQLiteStore(path).close()
    assert migration_names(path) == ["0001_initial", "0002_lighter_writes"]
    with contextlib.closing(raw(path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_compacted_version_1_chain_is_migrated_and_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chain that starts past 1 (compacted) is copied as is and extended afterwards."""
    path = tmp_path / "v1.db"
    v1_file(path, monkeypatch, records=8)
    with version_1(monkeypatch):
        store = SQLiteStore(path)
        assert store.compact_receipts(SCOPE, before=1e12, at=2e9) > 0
        store.close()
    store = SQLiteStore(path)
    with store.transaction(SCOPE) as tx:
        tx.receipt("note", {"after": "migration"}, 2e9 + 1)
    report = verify_store(store)
    assert report.valid and report.count == 3, report
    store.close()


def _open_and_write(path: str, barrier: Any, n: int) -> None:
    barrier.wait(timeout=60)
    store = SQLiteStore(path)
    with store.transaction(Scope("acme", "web", session=f"p{n}")) as tx:
        stored = tx.add_failure(failure(n, session=f"p{n}"))
        tx.receipt("failure", {"id": stored.id, "n": n}, stored.at)
    store.close()


@pytest.mark.slow
def test_processes_opening_a_version_1_file_at_once_migrate_it_exactly_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four processes open a version 1 file together: one migrates, all write, none fails."""
    path = tmp_path / "v1.db"
    before = v1_file(path, monkeypatch, records=40)
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(4)
    workers = [
        context.Process(target=_open_and_write, args=(str(path), barrier, n)) for n in range(4)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    assert migration_names(path) == ["0001_initial", "0002_lighter_writes"]
    store = SQLiteStore(path)
    ids = sorted(f.id for f in store.failures(SCOPE) if f.id is not None)
    assert len(ids) == len(before["failures"]) + 4 == len(set(ids))
    assert min(ids[-4:]) > before["largest_id"]
    report = verify_store(store)
    assert report.valid and report.count == len(before["receipts"]) + 4, report
    store.close()
    with contextlib.closing(raw(path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _largest_away(store: SQLiteStore, how: str) -> None:
    if how == "clear":
        store.clear(SCOPE)
    elif how == "purge":
        assert store.purge_failures(SCOPE, before=1e12) == 2
    elif how == "wipe":
        store.wipe()
    else:
        with contextlib.closing(raw(store.location)) as conn:
            conn.execute("DELETE FROM failures WHERE id = (SELECT max(id) FROM failures)")


@pytest.mark.parametrize("how", ["clear", "purge", "wipe", "by hand"])
def test_a_failure_id_is_never_given_twice(fresh_db: SQLiteStore, how: str) -> None:
    """However the failure with the largest id went, the next id is above it."""
    with fresh_db.transaction(SCOPE) as tx:
        assert [tx.add_failure(failure(i)).id for i in range(2)] == [1, 2]
    _largest_away(fresh_db, how)
    with fresh_db.transaction(SCOPE) as tx:
        assert tx.add_failure(failure(3)).id == 3
        assert tx.add_failure(failure(4)).id == 4


@pytest.mark.parametrize("order", [(3, 2), (2, 3), (1, 3, 2)])
def test_deletes_in_any_order_never_give_an_id_twice(
    fresh_db: SQLiteStore, order: tuple[int, ...]
) -> None:
    """One delete at a time, largest first or last: the next id is above all three."""
    with fresh_db.transaction(SCOPE) as tx:
        assert [tx.add_failure(failure(i)).id for i in range(3)] == [1, 2, 3]
    with contextlib.closing(raw(fresh_db.location)) as conn:
        for gone in order:
            conn.execute("DELETE FROM failures WHERE id = ?", (gone,))
    with fresh_db.transaction(SCOPE) as tx:
        assert tx.add_failure(failure(9)).id == 4


def test_ids_of_tenants_share_one_sequence(fresh_db: SQLiteStore) -> None:
    """Clearing one tenant never lets another tenant's later failure take a cleared id."""
    other = Scope("acme", "api")
    with fresh_db.transaction(other) as tx:
        tx.add_failure(failure(0))
    with fresh_db.transaction(SCOPE) as tx:
        assert tx.add_failure(failure(1)).id == 2
    fresh_db.clear(SCOPE)
    with fresh_db.transaction(other) as tx:
        assert tx.add_failure(failure(2)).id == 3


def _receipts(store: SQLiteStore, n: int) -> None:
    for i in range(n):
        with store.transaction(SCOPE) as tx:
            tx.receipt("note", {"n": i}, float(i))


def _head(path: str) -> tuple[int, str]:
    with contextlib.closing(raw(path)) as conn:
        seq, hash_ = conn.execute("SELECT seq, hash FROM receipts ORDER BY seq DESC").fetchone()
        return int(seq), str(hash_)


@pytest.mark.parametrize(
    ("row", "why"),
    [
        ("next seq, wrong prev", "does not link to the head"),
        ("past the next seq", "leaves a gap"),
        ("genesis again", "a second start"),
        ("below the oldest", "under a compacted chain"),
    ],
)
def test_the_schema_refuses_a_receipt_that_does_not_extend_the_head(
    fresh_db: SQLiteStore, row: str, why: str
) -> None:
    """Only the next receipt, linked to the head, can be added on top of the chain."""
    _receipts(fresh_db, 4)
    seq, head = _head(fresh_db.location)
    candidates = {
        "next seq, wrong prev": (seq + 1, "a" * 64),
        "past the next seq": (seq + 2, head),
        "genesis again": (seq + 1, GENESIS),
        "below the oldest": (1, GENESIS),
    }
    if row == "below the oldest":
        assert fresh_db.compact_receipts(SCOPE, before=1e9, at=10.0) == 3
    with contextlib.closing(raw(fresh_db.location)) as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO receipts VALUES (?, ?, 't', 1, '{}', 'h')", candidates[row])
    assert verify_store(fresh_db).valid, why


def test_the_schema_accepts_the_next_receipt_and_a_first_one(fresh_db: SQLiteStore) -> None:
    """The chain's first receipt starts from GENESIS at 1; the next links to the head."""
    with contextlib.closing(raw(fresh_db.location)) as conn:
        conn.execute("INSERT INTO receipts VALUES (1, ?, 't', 1, '{}', 'h1')", (GENESIS,))
        conn.execute("INSERT INTO receipts VALUES (2, 'h1', 't', 1, '{}', 'h2')")
        assert conn.execute("SELECT count(*) FROM receipts").fetchone()[0] == 2


def _stale_head(store: SQLiteStore, head: tuple[int, str]) -> None:
    """Make the store's connection trust ``head`` at the current data_version (a stale cache)."""
    conn = store._db.get()
    version = int(conn.execute("PRAGMA data_version").fetchone()[0])
    store._db.keep_head(conn, version, head)


@pytest.mark.parametrize("stale", ["behind", "from before a wipe"])
def test_two_stores_with_stale_heads_reseal_and_the_chain_stays_whole(
    tmp_path: Path, stale: str
) -> None:
    """A head cached wrongly by either of two stores is refused by the schema and the
    receipt resealed after the real head, whether its seq is taken or free."""
    path = tmp_path / "m.db"
    first, second = SQLiteStore(path), SQLiteStore(path)
    _receipts(first, 3)
    old = _head(str(path))
    _receipts(second, 2)
    if stale == "from before a wipe":
        first.wipe()
        _receipts(second, 1)  # the chain is one receipt long, the stale head says 3
        _stale_head(second, old)
        with second.transaction(SCOPE) as tx:
            tx.receipt("note", {"stale": True}, 9.0)
        expected = 2
    else:
        for store in (first, second):
            _stale_head(store, old)  # both behind: seq 4 is taken, by a different receipt
            with store.transaction(SCOPE) as tx:
                tx.receipt("note", {"stale": True}, 9.0)
        expected = 7
    for store in (first, second):
        report = verify_store(store)
        assert report.valid and report.count == expected, report
    first.close()
    second.close()
