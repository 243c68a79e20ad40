"""The contract every store passes: every kind gives identical answers, and its chain verifies.

The receipt chain is tested here once for every store: edited, deleted or swapped receipts
and a wrong key are caught wherever the store keeps the chain.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from helpers.factories import constraint, failure
from scarguard.errors import StoreError
from scarguard.model import Scope
from scarguard.receipts import KEY_ENV, verify_store
from scarguard.stores import Store

SCOPE = Scope("acme", "web")
OTHER = Scope("acme", "api")
KINDS = ("memory", "sqlite", "json")


def add(store: Store, *failures: Any, scope: Scope = SCOPE) -> list[Any]:
    with store.transaction(scope) as tx:
        return [tx.add_failure(f) for f in failures]


def test_add_failure_ids_increase_and_are_unique_across_tenants(store: Store) -> None:
    """Ids given by add_failure increase and are never shared between tenants."""
    first = add(store, failure(0), failure(1))
    second = add(store, failure(2), scope=OTHER)
    ids = [f.id for f in first + second]
    assert ids == sorted(ids) and len(set(ids)) == 3 and ids[0] == 1


def test_add_failure_returns_the_failure_with_only_its_id_set(store: Store) -> None:
    """The stored failure equals the input apart from the id, and reads back identical."""
    (stored,) = add(store, failure(7))
    assert stored.id is not None
    assert stored == attrs.evolve(failure(7), id=stored.id)
    assert store.failures(SCOPE) == [stored]


def test_bump_count_and_missing_counter(store: Store) -> None:
    """bump creates at zero and adds; count reads it; a missing counter counts zero."""
    with store.transaction(SCOPE) as tx:
        assert tx.count("k") == 0
        assert tx.bump("k", 1.0) == 1
        assert tx.bump("k", 2.0, by=3) == 4
        assert tx.bump("zero", 2.5, by=0) == 0
        assert tx.count("k") == 4
    counters = store.counters(SCOPE)
    assert {k: (v.count, v.last_at) for k, v in counters.items()} == {
        "k": (4, 2.0),
        "zero": (0, 2.5),
    }


def counts(store: Store, scope: Scope = SCOPE) -> dict[str, int]:
    return {k: v.count for k, v in store.counters(scope).items()}


def test_bump_many_creates_at_zero_and_adds(store: Store) -> None:
    """bump_many creates missing counters at zero and adds to existing ones, in this tenant."""
    with store.transaction(SCOPE) as tx:
        tx.bump("a", 1.0, by=2)
        assert tx.bump_many(["a", "b"], 2.0) is None  # type: ignore[func-returns-value]
        assert (tx.count("a"), tx.count("b")) == (3, 1)
    with store.transaction(SCOPE) as tx:
        tx.bump_many(("b", "c"), 3.0)
    assert counts(store) == {"a": 3, "b": 2, "c": 1}
    assert store.counters(OTHER) == {}


def test_bump_many_adds_up_duplicate_keys_in_one_call(store: Store) -> None:
    """A key given twice in one bump_many call is bumped twice."""
    with store.transaction(SCOPE) as tx:
        tx.bump("a", 1.0)
        tx.bump_many(["a", "a", "b"], 2.0)
        tx.bump_many(["c", "c"], 2.0, by=3)
    assert counts(store) == {"a": 3, "b": 1, "c": 6}


def test_bump_many_respects_by_including_zero_and_negative(store: Store) -> None:
    """by is added per occurrence of a key; zero creates at zero and negative subtracts."""
    with store.transaction(SCOPE) as tx:
        tx.bump_many(["a", "b"], 1.0, by=5)
        tx.bump_many(["a", "a", "c"], 2.0, by=-2)
        tx.bump_many(["z"], 3.0, by=0)
    assert counts(store) == {"a": 1, "b": 5, "c": -2, "z": 0}


def test_bump_many_sets_last_at_of_the_keys_it_bumps(store: Store) -> None:
    """bump_many stores now as last_at of each key it bumps and leaves the others alone."""
    with store.transaction(SCOPE) as tx:
        tx.bump_many(["a", "b"], 1.0)
    with store.transaction(SCOPE) as tx:
        tx.bump_many(["a", "a", "c"], 2.5)
    counters = store.counters(SCOPE)
    assert {k: v.last_at for k, v in counters.items()} == {"a": 2.5, "b": 1.0, "c": 2.5}


def test_bump_many_of_nothing_is_no_change_but_a_zero_bump_is(store: Store) -> None:
    """An empty bump_many changes nothing, not even generation(); a bump by zero does, as bump."""
    first = store.generation()
    with store.transaction(SCOPE) as tx:
        tx.bump_many([], 1.0)
        tx.bump_many((), 1.0, by=7)
    assert store.generation() == first and store.counters(SCOPE) == {}
    with store.transaction(SCOPE) as tx:
        tx.bump_many(["k"], 2.0, by=0)
    assert store.generation() != first and counts(store) == {"k": 0}


def test_bump_many_is_rolled_back_with_the_transaction(store: Store) -> None:
    """bump_many in a transaction whose body raises leaves counters and generation as before."""
    with store.transaction(SCOPE) as tx:
        tx.bump("a", 1.0)
    before = (store.counters(SCOPE), store.generation())
    with pytest.raises(RuntimeError), store.transaction(SCOPE) as tx:
        tx.bump_many(["a", "b", "b"], 2.0)
        raise RuntimeError("rolled back")
    assert (store.counters(SCOPE), store.generation()) == before


def test_bump_many_of_more_keys_than_one_statement_holds_bumps_all(store: Store) -> None:
    """250 keys in one call all land, also with a duplicate beyond the first chunk of rows."""
    keys = [f"k{i:03d}" for i in range(250)]
    with store.transaction(SCOPE) as tx:
        tx.bump_many(keys, 1.0)
    assert counts(store) == dict.fromkeys(keys, 1)
    with store.transaction(SCOPE) as tx:
        tx.bump_many([*keys, "k000", "k249"], 2.0)
    assert counts(store) == {**dict.fromkeys(keys, 2), "k000": 3, "k249": 3}


PREFIX_KEYS = [
    "a:",
    "a:b",
    "a:bc",
    "ab",
    "a",
    "b",
    "a%b",
    "a_b",
    "axb",
    "é:1",
    "é",
    "ê",
    "\U0010ffff",
    "a\U0010ffffz",
    "a\U0010ffff",
    "z\ud7ff",
    "z\ue000",
]


@pytest.mark.parametrize(
    "prefix",
    ["", "a", "a:", "a:b", "a%", "a_", "é", "\U0010ffff", "a\U0010ffff", "z\ud7ff", "nope"],
)
def test_counters_and_reset_select_exactly_the_keys_with_the_prefix(
    store: Store, prefix: str
) -> None:
    """counters(prefix) and reset(prefix) act on exactly the keys starting with prefix."""
    with store.transaction(SCOPE) as tx:
        for key in PREFIX_KEYS:
            tx.bump(key, 1.0)
    expected = {k for k in PREFIX_KEYS if k.startswith(prefix)}
    assert set(store.counters(SCOPE, prefix)) == expected
    with store.transaction(SCOPE) as tx:
        assert tx.reset(prefix) == len(expected)
    assert set(store.counters(SCOPE)) == set(PREFIX_KEYS) - expected


@pytest.mark.parametrize(
    "prefixes",
    [["a:", "é", "z\ud7ff"], ["a", "a:b", "nope"], ["\U0010ffff", "ax"], ["", "a"], []],
)
def test_reset_many_removes_exactly_the_keys_under_any_prefix(
    store: Store, prefixes: list[str]
) -> None:
    """reset_many, after bumps held in the same transaction, deletes the keys starting
    with any of the prefixes (an unbounded one too) and counts each deleted key once."""
    with store.transaction(SCOPE) as tx:
        for key in PREFIX_KEYS:
            tx.bump(key, 1.0)
    present = {*PREFIX_KEYS, "a:new", "kept"}
    doomed = {k for k in present if any(k.startswith(p) for p in prefixes)}
    with store.transaction(SCOPE) as tx:
        tx.bump_many(["a:new", "kept"], 2.0)
        assert tx.reset_many(prefixes) == len(doomed)
    assert set(store.counters(SCOPE)) == present - doomed


def test_reset_many_of_more_prefixes_than_one_statement_holds(store: Store) -> None:
    """250 prefixes (a batch of distinct successes and their classes' prefixes): every key
    under one of them goes, in every chunk; the keys under none stay."""
    with store.transaction(SCOPE) as tx:
        tx.bump_many([f"x:{i:03d}:sig" for i in range(300)], 1.0)
    with store.transaction(SCOPE) as tx:
        assert tx.reset_many([f"x:{i:03d}:" for i in range(250)]) == 250
    assert set(store.counters(SCOPE)) == {f"x:{i:03d}:sig" for i in range(250, 300)}


def test_put_replace_and_remove_constraints(store: Store) -> None:
    """put inserts or replaces by key; remove returns only the constraints that existed."""
    old = constraint("k1", created_at=5.0)
    newer = constraint("k1", created_at=5.0, occurrences=3, level="warn")
    with store.transaction(SCOPE) as tx:
        tx.put_constraint(old)
        tx.put_constraint(newer)
        assert tx.constraint("k1") == newer
        assert tx.constraint("missing") is None
        tx.put_constraint(constraint("k2"))
    with store.transaction(SCOPE) as tx:
        assert tx.remove_constraints(["missing", "k1", "k1"]) == [newer]
    assert [c.key for c in store.load_constraints(SCOPE)] == ["k2"]


def test_remove_constraints_of_more_keys_than_one_statement_holds(store: Store) -> None:
    """An eviction's 450 keys, with a duplicate past the first chunk and missing ones: each
    existing one is removed and returned once, in the order asked; the others stay."""
    keys = [f"c{i:03d}" for i in range(500)]
    with store.transaction(SCOPE) as tx:
        for key in keys:
            tx.put_constraint(constraint(key))
    asked = [*reversed(keys[:450]), "missing", keys[0], "also missing"]
    with store.transaction(SCOPE) as tx:
        removed = tx.remove_constraints(asked)
        assert tx.constraint(keys[0]) is None
    assert [c.key for c in removed] == list(reversed(keys[:450]))
    assert sorted(c.key for c in store.load_constraints(SCOPE)) == keys[450:]


def test_constraints_come_oldest_first_then_by_key(store: Store) -> None:
    """constraints() and load_constraints() order by creation time, then key."""
    with store.transaction(SCOPE) as tx:
        for key, created in [("c", 3.0), ("b", 1.0), ("a", 3.0), ("d", 2.0)]:
            tx.put_constraint(constraint(key, created_at=created))
        inside = [c.key for c in tx.constraints()]
    assert inside == ["b", "d", "a", "c"]
    assert [c.key for c in store.load_constraints(SCOPE)] == ["b", "d", "a", "c"]


def test_failures_newest_first_with_filters_and_limit(store: Store) -> None:
    """failures() returns newest first and honours since, tool, signature and limit."""
    add(
        store,
        failure(0, tool="a", signature="x", at=10.0),
        failure(1, tool="b", signature="x", at=20.0),
        failure(2, tool="a", signature="y", at=30.0),
        failure(3, tool="a", signature="x", at=40.0),
    )
    add(store, failure(9, tool="a"), scope=OTHER)

    def fps(**filters: Any) -> list[str]:
        return [f.fingerprint for f in store.failures(SCOPE, **filters)]

    assert fps() == ["fp3", "fp2", "fp1", "fp0"]
    assert fps(limit=2) == ["fp3", "fp2"]
    assert fps(limit=0) == []
    assert fps(since=20.0) == ["fp3", "fp2", "fp1"]
    assert fps(tool="a") == ["fp3", "fp2", "fp0"]
    assert fps(signature="x", tool="a") == ["fp3", "fp0"]
    assert fps(tool="a", since=25.0, limit=1) == ["fp3"]
    assert fps(tool="none") == []


def script(store: Store) -> None:
    """Apply one fixed history (two tenants, every operation) to ``store``."""
    with store.transaction(SCOPE) as tx:
        for i in range(5):
            stored = tx.add_failure(failure(i, signature="x" if i % 2 else "y"))
            tx.bump(f"sig:{stored.signature}", stored.at)
            tx.receipt("failure", {"id": stored.id, "at": stored.at}, stored.at)
        tx.put_constraint(constraint("k1", created_at=3.0))
        tx.put_constraint(constraint("k2", created_at=1.0, params={"v": 0.1}))
    with pytest.raises(RuntimeError), store.transaction(SCOPE) as tx:
        tx.add_failure(failure(99))
        raise RuntimeError("rolled back")
    with store.transaction(OTHER) as tx:
        tx.add_failure(failure(5, tool="shell", error=None, duration_ms=None))
        tx.bump("sig:z", 7.5, by=2)
    with store.transaction(SCOPE) as tx:
        tx.reset("sig:y")
        tx.remove_constraints(["k1"])
        tx.add_failure(failure(6))


def snapshot(store: Store) -> tuple[Any, ...]:
    return tuple(
        (store.failures(s), store.counters(s), store.load_constraints(s)) for s in (SCOPE, OTHER)
    )


def test_identical_history_gives_identical_values_in_every_store(
    store_factory: Callable[..., Store],
) -> None:
    """One script run on memory, SQLite and JSON gives equal failures, counters, constraints."""
    results = {}
    for kind in KINDS:
        opened = store_factory(kind)
        script(opened)
        results[kind] = snapshot(opened)
        assert verify_store(opened).valid and verify_store(opened).count == 5
    assert results["sqlite"] == results["memory"]
    assert results["json"] == results["memory"]
    assert [f.id for f in results["memory"][0][0]] == [7, 5, 4, 3, 2, 1]


def test_rollback_on_exception_leaves_nothing_and_reraises_the_same_exception(
    store: Store,
) -> None:
    """An exception in the body rolls everything back and reaches the caller unchanged."""
    add(store, failure(0))
    before = (snapshot(store), store.generation(), verify_store(store))
    error = ValueError("tool failed")
    with pytest.raises(ValueError) as caught, store.transaction(SCOPE) as tx:
        tx.add_failure(failure(1))
        tx.bump("k", 1.0)
        tx.put_constraint(constraint())
        tx.receipt("failure", {"x": 1}, 1.0)
        raise error
    assert caught.value is error
    assert (snapshot(store), store.generation(), verify_store(store)) == before


def test_generation_changes_after_a_commit_and_not_after_reads(store: Store) -> None:
    """generation() moves with each committed change, never with reads or empty transactions."""
    first = store.generation()
    store.failures(SCOPE)
    store.counters(SCOPE)
    store.load_constraints(SCOPE)
    with store.transaction(SCOPE) as tx:
        tx.count("nothing")
    assert store.generation() == first
    seen = {first}
    for i in range(5):
        with store.transaction(SCOPE) as tx:
            tx.bump("k", float(i))
        seen.add(store.generation())
    assert len(seen) == 6


def test_transaction_generations_equal_generation_just_before_and_just_after(
    store: Store,
) -> None:
    """With one writer, begin/commit_generation equal generation() just before/after the block."""
    for i in range(3):
        before = store.generation()
        with store.transaction(SCOPE) as tx:
            assert tx.begin_generation == before
            tx.bump("k", float(i))
        assert tx.commit_generation == store.generation()
        assert tx.commit_generation != tx.begin_generation
        assert isinstance(hash(tx.begin_generation), int)
    with store.transaction(SCOPE) as following:
        assert following.begin_generation == tx.commit_generation


def test_transaction_that_changes_nothing_commits_at_its_begin_generation(store: Store) -> None:
    """A transaction that only reads, or bumps no keys, has commit_generation == begin."""
    add(store, failure(0))
    before = store.generation()
    with store.transaction(SCOPE) as tx:
        tx.count("k")
        tx.bump_many([], 1.0)
        tx.remove_constraints(["missing"])
    assert tx.begin_generation == before
    assert tx.commit_generation == tx.begin_generation == store.generation()


def test_commit_generation_is_none_while_open_and_after_a_rollback(store: Store) -> None:
    """commit_generation is None inside the block and after the body raised (rolled back)."""
    before = store.generation()
    with pytest.raises(ValueError), store.transaction(SCOPE) as tx:
        assert tx.commit_generation is None
        tx.add_failure(failure(0))
        assert tx.commit_generation is None
        raise ValueError("tool failed")
    assert tx.commit_generation is None and tx.begin_generation == before
    assert store.generation() == before


def other_writer(store: Store, **options: Any) -> tuple[Store, bool]:
    """Return a second writer on the same data, and whether it must be closed afterwards.

    ``options`` open it (``receipt_key``: the memory store, one object, is given the key).
    """
    from helpers.postgres import PG_URL
    from scarguard.stores import JSONStore, MemoryStore, SQLiteStore

    if isinstance(store, MemoryStore):  # one object: another transaction is another writer
        if "receipt_key" in options:
            store._key = options["receipt_key"]
        return store, False
    if isinstance(store, SQLiteStore):
        return SQLiteStore(store.location, **options), True
    if isinstance(store, JSONStore):
        return JSONStore(store.location, **options), True
    from scarguard.stores import PostgresStore

    assert isinstance(store, PostgresStore)
    return PostgresStore(PG_URL, schema=store.schema, **options), True


def eventually(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``predicate`` (a PostgreSQL commit elsewhere is seen when its NOTIFY arrives)."""
    import time

    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.002)
    return predicate()


def test_a_commit_by_another_writer_moves_generation_off_commit_generation(
    store: Store,
) -> None:
    """After another writer commits, generation() and the next begin_generation move off it."""
    with store.transaction(SCOPE) as tx:
        tx.put_constraint(constraint("mine"))
    assert store.generation() == tx.commit_generation
    other, owned = other_writer(store)
    try:
        with other.transaction(SCOPE) as theirs:
            theirs.put_constraint(constraint("theirs"))
    finally:
        if owned:
            other.close()
    assert eventually(lambda: store.generation() != tx.commit_generation)
    with store.transaction(SCOPE) as following:
        assert following.begin_generation != tx.commit_generation
    assert {c.key for c in store.load_constraints(SCOPE)} == {"mine", "theirs"}


def test_clear_touches_only_its_tenant_and_wipe_removes_all(store: Store) -> None:
    """clear(scope) forgets one tenant (receipts stay); wipe() forgets everything."""
    for scope in (SCOPE, OTHER):
        with store.transaction(scope) as tx:
            tx.add_failure(failure(0))
            tx.bump("k", 1.0)
            tx.put_constraint(constraint())
            tx.receipt("failure", {"scope": scope.project}, 1.0)
    store.clear(SCOPE)
    assert snapshot(store)[0] == ([], {}, [])
    assert (
        len(store.failures(OTHER)) == 1 and store.counters(OTHER) and store.load_constraints(OTHER)
    )
    assert verify_store(store).count == 2
    store.wipe()
    assert snapshot(store) == (([], {}, []), ([], {}, []))
    assert verify_store(store).count == 0


@pytest.mark.parametrize("target", KINDS)
def test_export_then_import_into_another_store_gives_identical_values(
    store: Store, store_factory: Callable[..., Store], target: str
) -> None:
    """export() of one store imported into a fresh store of any kind reproduces the tenant."""
    script(store)
    records = list(store.export(SCOPE))
    other = store_factory(target)
    assert other.import_(SCOPE, records) == len(records) - 1

    def without_ids(s: Store) -> list[Any]:  # the importing store gives its own ids
        return [attrs.evolve(f, id=None) for f in s.failures(SCOPE)]

    assert without_ids(other) == without_ids(store)
    assert other.counters(SCOPE) == store.counters(SCOPE)
    assert other.load_constraints(SCOPE) == store.load_constraints(SCOPE)
    assert list(other.export(SCOPE)) == records


def test_importing_one_export_twice_leaves_the_tenant_as_importing_it_once(
    store: Store, store_factory: Callable[..., Store]
) -> None:
    """A second import of the same records changes nothing and reports nothing applied."""
    script(store)
    records = list(store.export(SCOPE))
    other = store_factory("sqlite")
    other.import_(SCOPE, records)
    once = snapshot(other)
    assert other.import_(SCOPE, records) == 0
    assert snapshot(other) == once
    store.import_(SCOPE, records)  # into the tenant it came from: a no-op too
    assert list(store.export(SCOPE)) == records


def test_import_merges_by_the_larger_count_and_skips_stored_failures(store: Store) -> None:
    """Counters take the larger value, known failures are skipped, new ones are added."""
    with store.transaction(SCOPE) as tx:
        tx.add_failure(failure(0))
        tx.bump("sig:a", 1.0, by=5)
        tx.bump("sig:b", 1.0, by=1)
    records = [
        {"record": "header", "format": 2},
        {"record": "failure", **exported_row(failure(0))},
        {"record": "failure", **exported_row(failure(1))},
        {"record": "counter", "key": "sig:a", "count": 3, "last_at": 2.0},
        {"record": "counter", "key": "sig:b", "count": 4, "last_at": 2.0},
        {"record": "counter", "key": "sig:c", "count": 2, "last_at": 2.0},
    ]
    assert store.import_(SCOPE, records) == 3
    assert counts(store) == {"sig:a": 5, "sig:b": 4, "sig:c": 2}
    assert [f.fingerprint for f in store.failures(SCOPE)] == ["fp1", "fp0"]


def exported_row(f: Any) -> dict[str, Any]:
    row = {k: v for k, v in f.to_row().items() if k != "id"}
    row.update(args=dict(f.args), targets=list(f.targets))
    return row


def test_export_writes_plain_json_objects_under_a_versioned_header(store: Store) -> None:
    """args and params are objects and targets a list (jq-friendly), not JSON text."""
    script(store)
    records = list(store.export(SCOPE))
    header = records[0]
    assert header["record"] == "header" and header["format"] == 2 and header["scarguard"]
    failures = [r for r in records if r["record"] == "failure"]
    assert failures[0]["args"]["nested"] == {"k": [1, "é"]}
    assert failures[0]["targets"] == ["src/f0.py"]
    (kept,) = [r for r in records if r["record"] == "constraint"]
    assert kept["params"] == {"v": 0.1}


def test_a_format_1_export_still_imports(store: Store, store_factory: Callable[..., Store]) -> None:
    """Exports written before format 2 (args, targets, params as JSON text) import the same."""
    script(store)
    records = list(store.export(SCOPE))
    old = [{"record": "header", "format": 1}]
    for r in records[1:]:
        r = dict(r)
        if r["record"] == "failure":
            r["args"] = json.dumps(r["args"], sort_keys=True, separators=(",", ":"))
            r["targets"] = json.dumps(r["targets"], separators=(",", ":"))
        if r["record"] == "constraint":
            r["params"] = json.dumps(r["params"], sort_keys=True, separators=(",", ":"))
        old.append(r)
    other = store_factory("memory")
    assert other.import_(SCOPE, old) == len(old) - 1
    assert list(other.export(SCOPE)) == records


def test_purge_failures_deletes_only_the_tenants_old_failures(store: Store) -> None:
    """Failures before the time go; newer ones, other tenants, counters and rules stay."""
    with store.transaction(SCOPE) as tx:
        for i in range(5):
            tx.add_failure(failure(i))  # at 1000.0 + i
        tx.bump("sig:x", 1000.0, by=5)
        tx.put_constraint(constraint("k1"))
    with store.transaction(OTHER) as tx:
        tx.add_failure(failure(0))
    generation = store.generation()
    assert store.purge_failures(SCOPE, 1003.0) == 3
    assert store.generation() != generation
    assert [f.at for f in store.failures(SCOPE)] == [1004.0, 1003.0]
    assert len(store.failures(OTHER)) == 1
    assert counts(store) == {"sig:x": 5} and store.load_constraints(SCOPE)
    assert store.purge_failures(SCOPE, 1003.0) == 0
    with store.transaction(SCOPE) as tx:  # ids keep increasing after a purge
        assert tx.add_failure(failure(9)).id > max(f.id or 0 for f in store.failures(OTHER))


def test_compact_receipts_keeps_the_chain_verifiable(store: Store) -> None:
    """Receipts before the time go behind a compact receipt; the chain verifies and grows."""
    for i in range(6):
        with store.transaction(SCOPE) as tx:
            tx.receipt("failure", {"i": i}, 10.0 + i)
    assert verify_store(store).valid  # and a checkpoint where the store keeps one
    assert store.compact_receipts(SCOPE, 13.0, 20.0) == 3
    report = verify_store(store)
    assert report.valid and report.start == 4 and report.last_seq == 7, report
    with store.transaction(OTHER) as tx:
        tx.receipt("failure", {"i": 6}, 21.0)
    assert store.compact_receipts(SCOPE, 13.0, 22.0) == 0  # nothing older left
    assert store.compact_receipts(SCOPE, 30.0, 31.0) == 4  # all but the newest
    report = verify_store(store)
    assert report.valid and report.start == 8 and report.count == 2, report


def test_compact_receipts_without_receipts_is_a_no_op(store_factory: Callable[..., Store]) -> None:
    """A store keeping no receipts compacts nothing and stays valid."""
    quiet = store_factory("sqlite", receipts=False)
    assert quiet.compact_receipts(SCOPE, 1e12, 1e12) == 0 and verify_store(quiet).valid


def test_receipts_verify_with_the_right_count(store: Store) -> None:
    """Receipts appended in transactions form a chain that verifies with its length."""
    for i in range(3):
        with store.transaction(SCOPE) as tx:
            tx.receipt("failure", {"i": i, "f": 0.1 * i}, 1.5 + i)
    report = verify_store(store)
    assert report.valid and report.count == 3 and report.first_broken is None and report.head


@pytest.mark.parametrize(
    "bad",
    [
        {"record": "failure", "tool": "x"},
        {"record": "counter", "key": "k", "count": "many", "last_at": 1.0},
        {"record": "mystery"},
        {"record": "header", "format": 999},
    ],
)
def test_import_of_a_malformed_record_raises_and_keeps_nothing(
    store: Store, bad: dict[str, Any]
) -> None:
    """A malformed record fails the whole import with StoreError; nothing of it is kept."""
    good = [
        {"record": "header", "format": 1},
        {"record": "counter", "key": "k", "count": 2, "last_at": 1.0},
        {"record": "failure", **{k: v for k, v in failure(0).to_row().items() if k != "id"}},
    ]
    with pytest.raises(StoreError):
        store.import_(SCOPE, [*good, bad])
    assert snapshot(store)[0] == ([], {}, [])


ODD = "caf\udcff\x00"  # a non-UTF-8 file name as os.fsdecode gives it, and a NUL


@pytest.mark.parametrize("kind", (*KINDS, "postgres"))
def test_every_store_accepts_surrogates_and_nul_the_same_way(
    kind: str, store_factory: Callable[..., Store]
) -> None:
    """What one store accepts every store accepts: surrogates and NUL are stored escaped."""
    from scarguard import FailureMemory

    memory = FailureMemory(store_factory(kind))
    for _ in range(2):
        memory.record(f"tool{ODD}", {"path": f"/tmp/{ODD}.txt", "note": ODD},
                      error=f"No such file or directory: {ODD}")  # fmt: skip
    stored = memory.recent_failures(1)[0]
    assert stored.tool == "tool" + "caf\\udcff\\x00"
    assert stored.targets[0].startswith("/tmp/caf\\udcff\\x00.txt")
    assert stored.error is not None and stored.error.endswith("caf\\udcff\\x00")
    assert memory.constraints()
    assert not memory.check(f"tool{ODD}", {"path": f"/tmp/{ODD}.txt", "note": ODD}).allowed
    assert memory.verify().valid


def test_a_json_export_with_surrogates_imports_into_sqlite(
    store_factory: Callable[..., Store],
) -> None:
    """Records a JSON store holds (written raw by older versions) import into SQLite."""
    source = store_factory("json")
    raw = attrs.evolve(failure(), tool=f"t{ODD}", error=ODD, targets=(ODD,))
    records = [{"record": "header", "format": 1},
               {"record": "failure", **{**raw.to_row(), "tool": f"t{ODD}", "error": ODD}},
               {"record": "counter", "key": f"ok:t{ODD}", "count": 1, "last_at": 1.0}]  # fmt: skip
    assert source.import_(SCOPE, records) == 2
    target = store_factory("sqlite")
    assert target.import_(SCOPE, list(source.export(SCOPE))) == 2
    assert target.failures(SCOPE)[0].tool == "t" + "caf\\udcff\\x00"


def test_a_rolled_back_receipt_never_enters_the_chain(store: Store) -> None:
    """One chain for every tenant; a receipt appended by a transaction that fails is gone."""
    with store.transaction(SCOPE) as tx:
        tx.receipt("failure", {"i": 0}, 1.0)
    with pytest.raises(RuntimeError), store.transaction(OTHER) as tx:
        tx.receipt("failure", {"i": 1}, 2.0)
        raise RuntimeError("the body fails")
    with store.transaction(OTHER) as tx:
        tx.receipt("failure", {"i": 2}, 3.0)
    report = verify_store(store)
    assert report.valid and report.count == 2 and report.last_seq == 2, report


# -- the chain of every store, tampered with where the store keeps it ----------------------


def filled(store: Store, n: int = 6) -> Store:
    for i in range(n):
        with store.transaction(SCOPE) as tx:
            tx.receipt("failure", {"i": i, "note": f"n{i}"}, 10.0 + i)
    return store


def edit_rows(store: Store, *statements: str) -> None:
    """Run SQL on the store's own tables, as someone with access to the database would."""
    if type(store).__name__ == "SQLiteStore":
        import sqlite3

        with sqlite3.connect(store.location) as conn:
            for statement in statements:
                conn.execute(statement)
        return
    import psycopg
    from psycopg import sql

    from helpers.postgres import PG_URL

    with psycopg.connect(PG_URL) as conn:
        schema = sql.Identifier(store.schema)  # type: ignore[attr-defined]
        conn.execute(sql.SQL("SET search_path TO {}").format(schema))
        for statement in statements:
            conn.execute(statement)  # type: ignore[arg-type]


def edit_chain(store: Store, change: Callable[[list[Any]], list[Any]]) -> None:
    """Change the list of receipts (JSON: the journal's lines) where the store keeps it."""
    from pathlib import Path

    if type(store).__name__ == "MemoryStore":
        chain = store._chain  # type: ignore[attr-defined]
        chain[:] = change(list(chain))
        return
    path = Path(store.receipts_path)  # type: ignore[attr-defined]
    path.write_bytes(b"".join(change(path.read_bytes().splitlines(keepends=True))))


def tamper_payload(store: Store) -> None:
    def edit(receipts: list[Any]) -> list[Any]:
        fourth = receipts[3]
        receipts[3] = (
            fourth.replace(b"n3", b"n9")
            if isinstance(fourth, bytes)
            else attrs.evolve(fourth, payload=fourth.payload.replace("n3", "n9"))
        )
        return receipts

    if type(store).__name__ in ("SQLiteStore", "PostgresStore"):
        edit_rows(store, "UPDATE receipts SET payload = replace(payload, 'n3', 'n9') WHERE seq = 4")
    else:
        edit_chain(store, edit)


def delete_middle(store: Store) -> None:
    if type(store).__name__ in ("SQLiteStore", "PostgresStore"):
        edit_rows(store, "DELETE FROM receipts WHERE seq = 4")
    else:
        edit_chain(store, lambda receipts: receipts[:3] + receipts[4:])


def swap(store: Store) -> None:
    if type(store).__name__ in ("SQLiteStore", "PostgresStore"):
        edit_rows(
            store,
            "CREATE TEMP TABLE saved AS SELECT * FROM receipts WHERE seq IN (4, 5)",
            "DELETE FROM receipts WHERE seq IN (4, 5)",
            "INSERT INTO receipts SELECT 9 - seq, prev, type, at_ms, payload, hash FROM saved",
        )
    else:
        edit_chain(store, lambda r: [*r[:3], r[4], r[3], *r[5:]])


@pytest.mark.parametrize(("tamper", "broken"), [(tamper_payload, 4), (delete_middle, 4), (swap, 4)])
def test_tampering_is_reported_at_the_right_receipt(
    store: Store, tamper: Callable[[Store], None], broken: int
) -> None:
    """Editing a payload byte, deleting or swapping receipts is reported at receipt 4."""
    filled(store)
    assert verify_store(store).valid
    tamper(store)
    reopened, owned = other_writer(store)
    try:
        report = verify_store(reopened)
    finally:
        if owned:
            reopened.close()
    assert not report.valid and report.first_broken == broken, report


def test_store_chains_use_the_key(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store chain written with SCARGUARD_RECEIPT_KEY fails with another or no key."""
    monkeypatch.setenv(KEY_ENV, "k1")
    filled(store, n=2)
    assert verify_store(store).valid
    monkeypatch.setenv(KEY_ENV, "k2")
    assert not verify_store(store).valid
    monkeypatch.delenv(KEY_ENV)
    assert not verify_store(store).valid
    explicit, owned = other_writer(store, receipt_key="k1")
    try:
        assert verify_store(explicit).valid
    finally:
        if owned:
            explicit.close()
