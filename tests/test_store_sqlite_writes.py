"""SQLiteStore write path: what one failure record costs in statements, and the chain head.

A failure record is one transaction of seven statements: ``BEGIN IMMEDIATE``, ``PRAGMA
data_version``, the failure, every counter in one upsert, the read of the exact-call count
(cheaper than a ``RETURNING`` clause, which buffers its rows), the receipt, ``COMMIT``. The
receipt chain's head is kept per connection and used only while no other connection
committed; the schema (the ``seq`` key, a trigger) catches a head gone stale anyway.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers.factories import constraint, failure
from scarguard import FailureMemory, Policy
from scarguard.errors import StoreError
from scarguard.learning import keys
from scarguard.model import Scope
from scarguard.receipts import verify_store
from scarguard.stores import SQLiteStore
from scarguard.testing import FakeClock

ERROR = "command failed: exit code 1"
SCOPE = Scope("acme", "web")


def statements(memory: FailureMemory, n: int = 1, tag: str = "") -> list[list[str]]:
    """Record ``n`` new failures; return the SQL statements each one ran."""
    store = memory.store
    assert isinstance(store, SQLiteStore)
    conn = store._db.get()
    runs: list[list[str]] = []
    for i in range(n):
        seen: list[str] = []

        def trace(sql: str, seen: list[str] = seen) -> None:
            # sqlite3 reports a trigger's program starting with the text of the statement
            # that fired it: the same text (bound values included) twice is one statement
            if not seen or seen[-1] != sql:
                seen.append(sql)

        conn.set_trace_callback(trace)
        try:
            memory.record("bash", {"command": f"make job-{tag}{i}"}, error=ERROR)
        finally:
            conn.set_trace_callback(None)
        runs.append(seen)
    return runs


def verbs(run: list[str]) -> list[str]:
    return [" ".join(s.split()[:3]) for s in run]


def test_a_failure_record_is_seven_statements_and_reads_no_receipt(tmp_path: Path) -> None:
    memory = FailureMemory(str(tmp_path / "m.db"))
    memory.record("bash", {"command": "warm up"}, error=ERROR)
    for run in statements(memory, 5):
        assert verbs(run) == [
            "BEGIN IMMEDIATE",
            "PRAGMA data_version",
            "INSERT INTO failures",
            "INSERT INTO counters",
            "SELECT count FROM",
            "INSERT INTO receipts",
            "COMMIT",
        ]
        assert not any(s.startswith("SELECT") and "receipts" in s for s in run)
    assert memory.verify().valid
    memory.close()


def test_every_counter_of_a_failure_is_bumped_once(tmp_path: Path) -> None:
    """The held totals and the exact-call counter go out together, each counted once."""
    memory = FailureMemory(str(tmp_path / "m.db"))
    for _ in range(3):
        memory.record("bash", {"command": "make same"}, error=ERROR)
    counters = memory.store.counters(memory.scope)
    exact = [v.count for k, v in counters.items() if k.startswith("x:")]
    assert exact == [3]
    assert counters["ft:bash"].count == 3
    assert sum(v.count for k, v in counters.items() if k.startswith("s:")) == 3
    memory.close()


def test_a_commit_by_another_connection_makes_the_head_read_again(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    first, second = FailureMemory(path), FailureMemory(path)
    first.record("bash", {"command": "a"}, error=ERROR)
    second.record("bash", {"command": "b"}, error=ERROR)
    (run,) = statements(first, tag="x")
    assert "SELECT seq, hash FROM receipts ORDER BY seq DESC LIMIT 1" in run
    (run,) = statements(first, tag="y")
    assert not any(s.startswith("SELECT") and "receipts" in s for s in run)
    report = first.verify()
    assert report.valid and report.count == 4
    first.close()
    second.close()


def test_a_stale_head_is_caught_by_the_schema_and_the_chain_stays_whole(
    tmp_path: Path,
) -> None:
    memory = FailureMemory(str(tmp_path / "m.db"))
    for i in range(3):
        memory.record("bash", {"command": f"job {i}"}, error=ERROR)
    store = memory.store
    assert isinstance(store, SQLiteStore)
    conn = store._db.get()
    version = int(conn.execute("PRAGMA data_version").fetchone()[0])
    store._db.keep_head(conn, version, (1, "f" * 64))  # a head two receipts behind
    memory.record("bash", {"command": "after"}, error=ERROR)
    report = memory.verify()
    assert report.valid and report.count == 4
    memory.close()


def test_a_rolled_back_receipt_never_becomes_the_head(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    with store.transaction(SCOPE) as tx:
        tx.receipt("note", {"n": 1}, 1.0)
    with pytest.raises(RuntimeError), store.transaction(SCOPE) as tx:
        tx.receipt("note", {"n": 2}, 2.0)
        raise RuntimeError("the body fails")
    with store.transaction(SCOPE) as tx:
        tx.receipt("note", {"n": 3}, 3.0)
    report = verify_store(store)
    assert report.valid and report.count == 2
    rows = sqlite3.connect(store.location).execute("SELECT seq FROM receipts").fetchall()
    assert rows == [(1,), (2,)]
    store.close()


def test_after_wipe_the_chain_starts_again_at_one(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    for n in range(3):
        with store.transaction(SCOPE) as tx:
            tx.receipt("note", {"n": n}, float(n))
    store.wipe()
    with store.transaction(SCOPE) as tx:
        tx.receipt("note", {"n": 9}, 9.0)
    report = verify_store(store)
    assert report.valid and report.count == 1
    store.close()


def test_held_bumps_are_visible_to_a_read_in_the_same_transaction(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    with store.transaction(SCOPE) as tx:
        tx.bump_many(["a", "b", "a"], 1.0)
        assert tx.count("a") == 2
        assert tx.bump("b", 2.0) == 2
        tx.bump_many(["c"], 3.0, by=5)
    assert {k: v.count for k, v in store.counters(SCOPE).items()} == {"a": 2, "b": 2, "c": 5}
    store.close()


def test_held_bumps_roll_back_with_the_transaction(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    with pytest.raises(RuntimeError), store.transaction(SCOPE) as tx:
        tx.bump_many(["a"], 1.0)
        raise RuntimeError("the body fails")
    assert store.counters(SCOPE) == {}
    store.close()


def _inside_the_fork_gate() -> bool:
    from scarguard import _fork

    return threading.get_ident() in _fork._active


def _no_failures(store: SQLiteStore) -> bool:
    return not store.failures(SCOPE) and store.counters(SCOPE) == {}


def test_an_sqlite_error_in_the_body_rolls_back_as_store_error(tmp_path: Path) -> None:
    """The error is named with the file; nothing of the transaction is left; the fork gate
    and the write lock are released, so the next transaction writes."""
    store = SQLiteStore(tmp_path / "s.db")
    with pytest.raises(StoreError, match="write failed") as caught, store.transaction(SCOPE) as tx:
        tx.add_failure(failure(0))
        tx.bump("a", 1.0)
        tx._conn.execute("INSERT INTO no_such_table VALUES (1)")
    assert store.location in str(caught.value)
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
    assert _no_failures(store) and not _inside_the_fork_gate()
    with store.transaction(SCOPE) as tx:
        assert tx.add_failure(failure(1)).id == 1
    store.close()


def test_another_exception_in_the_body_propagates_unchanged(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    error = KeyError("the tool's own")
    with pytest.raises(KeyError) as caught, store.transaction(SCOPE) as tx:
        tx.add_failure(failure(0))
        tx.bump_many(["a"], 1.0)
        raise error
    assert caught.value is error
    assert _no_failures(store) and not _inside_the_fork_gate()
    store.close()


def test_held_bumps_that_fail_at_the_commit_roll_back_as_store_error(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    with pytest.raises(StoreError, match="write failed"), store.transaction(SCOPE) as tx:
        tx.add_failure(failure(0))
        tx.bump_many(["a"], None)  # type: ignore[arg-type]  # last_at is NOT NULL
    assert _no_failures(store) and not _inside_the_fork_gate()
    store.close()


def test_a_commit_that_fails_rolls_back_as_store_error(tmp_path: Path) -> None:
    """A constraint checked only at COMMIT (a deferred foreign key) fails the commit."""
    store = SQLiteStore(tmp_path / "s.db")
    conn = store._db.get()
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("CREATE TEMP TABLE parent (id INTEGER PRIMARY KEY)")
    conn.execute(
        "CREATE TEMP TABLE child (p INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)"
    )
    with pytest.raises(StoreError, match="commit failed"), store.transaction(SCOPE) as tx:
        tx.add_failure(failure(0))
        tx._conn.execute("INSERT INTO child VALUES (7)")
    assert not conn.in_transaction
    assert _no_failures(store) and not _inside_the_fork_gate()
    with store.transaction(SCOPE) as tx:
        tx.add_failure(failure(1))
    assert len(store.failures(SCOPE)) == 1
    store.close()


def traced(memory: FailureMemory, record: Callable[[], object]) -> list[str]:
    """Run ``record``; return the SQL statements it ran on the memory's connection."""
    store = memory.store
    assert isinstance(store, SQLiteStore)
    conn = store._db.get()
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        record()
    finally:
        conn.set_trace_callback(None)
    return seen


def rows_and_count(memory: FailureMemory, path: Path) -> tuple[int, int]:
    """Return the constraints stored in ``path`` and the count the cap is enforced by."""
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT count(*) FROM constraints").fetchone()[0]
    conn.close()
    return rows, memory.store.counters(memory.scope)[keys.CONSTRAINT_COUNT].count


def test_a_failure_that_teaches_reads_no_constraint_while_the_index_is_current(
    tmp_path: Path,
) -> None:
    """The rules a failure updates are read from the checked index, not from the file.

    Once another connection commits, the index is not known current: they are read from
    the file again, and what is learned is the same.
    """
    path = tmp_path / "m.db"
    memory = FailureMemory(path, clock=FakeClock())
    error = "syntax error at or near SELEC"
    for i in range(3):
        memory.check("run_query", {"q": f"SELEC {i}"})
        q = {"q": f"SELEC {i}"}
        run = traced(memory, lambda q=q: memory.record("run_query", q, error=error))
        assert "INSERT OR REPLACE INTO constraints" in " ".join(run)
        assert not [s for s in run if s.startswith("SELECT") and "FROM constraints" in s]
    other = FailureMemory(path)
    other.record("bash", {"command": "elsewhere"}, error=ERROR)
    run = traced(memory, lambda: memory.record("run_query", {"q": "SELEC 3"}, error=error))
    assert [s for s in run if s.startswith("SELECT") and "FROM constraints" in s]
    assert not memory.check("run_query", {"q": "SELEC 3"}).allowed
    assert rows_and_count(memory, path) == (5, 5)  # four exact bans and the strategy ban
    other.close()
    memory.close()


def test_a_rule_that_lapsed_and_is_learned_again_is_counted_once(tmp_path: Path) -> None:
    """A rule the store keeps past its lifetime is left out of a rebuilt index: read, replaced."""
    clock = FakeClock()
    policy = Policy(ttl={"exact_call": 60.0, "banned_strategy": 60.0})
    path = tmp_path / "m.db"
    memory = FailureMemory(path, clock=clock, policy=policy)
    error = "syntax error at or near SELEC"
    memory.record("run_query", {"q": "SELEC 1"}, error=error)
    assert rows_and_count(memory, path) == (1, 1)
    clock.advance(120)
    other = FailureMemory(path)  # a commit elsewhere: the next check rebuilds the index
    other.record("bash", {"command": "elsewhere"}, error=ERROR)
    other.close()
    assert memory.check("run_query", {"q": "SELEC 1"}).allowed  # lapsed: left out of it
    memory.record("run_query", {"q": "SELEC 1"}, error=error)
    assert rows_and_count(memory, path) == (1, 1)
    assert not memory.check("run_query", {"q": "SELEC 1"}).allowed
    memory.close()


def test_an_eviction_removes_its_constraints_in_one_select_and_one_delete(
    tmp_path: Path,
) -> None:
    """Past the cap a tenth of the rules go at once: not two statements per rule."""
    memory = FailureMemory(tmp_path / "m.db", clock=FakeClock())
    store = memory.store
    assert isinstance(store, SQLiteStore)
    keys = [f"exact:{i:03d}" for i in range(60)]
    with store.transaction(memory.scope) as tx:
        for key in keys:
            tx.put_constraint(constraint(key))

    def evict() -> None:
        with store.transaction(memory.scope) as tx:
            assert len(tx.remove_constraints(keys[:50])) == 50

    run = traced(memory, evict)
    assert len([s for s in run if "FROM constraints" in s]) == 2
    assert [c.key for c in store.load_constraints(memory.scope)] == keys[50:]
    memory.close()


def test_an_eviction_past_the_cap_reads_the_rules_from_the_current_index(
    tmp_path: Path,
) -> None:
    """The rules an eviction sorts are the checked index's, not every row decoded again;
    what it evicts is what a memory reading them from the file evicts."""
    kept = []
    for checked in (True, False):
        path = tmp_path / f"m-{checked}.db"
        memory = FailureMemory(path, clock=FakeClock(), policy=Policy(max_active_constraints=10))
        reads = []
        for i in range(15):
            args = {"path": "a.py", "old_string": f"s{i}"}
            if checked:
                memory.check("edit_file", args)
            memory.clock.advance(5)  # type: ignore[attr-defined]
            run = traced(
                memory,
                lambda m=memory, a=args: m.record("edit_file", a, error="old_string not found"),
            )
            reads += [s for s in run if "FROM constraints" in s and "ORDER BY" in s]
        assert bool(reads) is not checked
        rows, count = rows_and_count(memory, path)
        assert rows == count <= 10
        kept.append(sorted(c.key for c in memory.store.load_constraints(memory.scope)))
        memory.close()
    assert kept[0] == kept[1]


def test_a_success_flush_resets_each_call_by_a_seek_not_a_scan_of_the_counters(
    tmp_path: Path,
) -> None:
    """The exact-call counters a batch of successes resets are deleted in one statement
    whose every key range is a seek of the primary key: OR'd ranges in one ``DELETE`` are
    planned as a search of the whole tenant, which grows with the history. What is reset
    is the succeeded calls' failure counts only."""
    memory = FailureMemory(str(tmp_path / "m.db"), success_batch=1_000)
    for i in range(40):
        memory.record("read_file", {"path": f"missing-{i}.py"}, error="ENOENT: no such file")
    memory.record("read_file", {"path": "late.py"}, error="ENOENT: no such file")
    before = memory.store.counters(memory.scope)
    late = memory.describe("read_file", {"path": "late.py"})
    assert [k for k in before if k.startswith(keys.exact_prefix(late))]

    def succeed() -> None:
        for i in range(20):
            memory.record("read_file", {"path": f"present-{i}.py"}, ok=True)
        memory.record("read_file", {"path": "late.py"}, ok=True)
        memory.flush()

    ran = traced(memory, succeed)
    assert isinstance(memory.store, SQLiteStore)
    conn = memory.store._db.get()
    deletes = [s for s in ran if s.startswith("DELETE FROM counters")]
    assert deletes
    for sql in deletes:
        plan = [str(r[-1]) for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
        assert any("key>? AND key<?" in step for step in plan), (sql, plan)
        assert not any(step.endswith("(workspace=? AND project=?)") for step in plan), plan
        assert not any(step.startswith("SCAN") and "counters" in step for step in plan), plan

    after = memory.store.counters(memory.scope)
    assert not [k for k in after if k.startswith(keys.exact_prefix(late))]
    for i in range(40):
        missing = memory.describe("read_file", {"path": f"missing-{i}.py"})
        assert [k for k in after if k.startswith(keys.exact_prefix(missing))]
    memory.close()
