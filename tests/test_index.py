"""The constraint index: which active constraints a call runs into, and what it keeps."""

from __future__ import annotations

from helpers.factories import constraint
from scarguard.adapters import MLTrainingAdapter, ToolCallAdapter
from scarguard.learning.index import ConstraintIndex, RecordingTransaction
from scarguard.model import Call, ConstraintKind, Level, Scope
from scarguard.stores import MemoryStore

ADAPTER = ToolCallAdapter()
NOW = 2000.0


def read(path: str) -> Call:
    return ADAPTER.describe("read_file", {"path": path})


def exact_ban(call: Call, **kw: object):
    return constraint(
        f"exact:{call.fingerprint}:file_not_found",
        fingerprint=call.fingerprint,
        tool=call.tool,
        target=call.targets[0],
        action_class=call.action_class,
        params={},
        **kw,
    )


def test_an_exact_ban_matches_only_its_own_call() -> None:
    """An exact-call ban refuses the call with its fingerprint, not another path."""
    banned = read("a.txt")
    index = ConstraintIndex.build([exact_ban(banned)], NOW)
    (hit,) = index.match(banned, ADAPTER, NOW)
    assert hit.constraint.kind is ConstraintKind.EXACT_CALL
    assert index.match(read("b.txt"), ADAPTER, NOW) == []


def test_an_exact_ban_of_another_tool_with_the_same_fingerprint_does_not_match() -> None:
    """The fingerprint alone is not enough: the tool must be the same."""
    banned = read("a.txt")
    other = Call("cat", banned.args, banned.targets, banned.action_class, banned.fingerprint)
    index = ConstraintIndex.build([exact_ban(banned)], NOW)
    assert index.match(other, ADAPTER, NOW) == []


def test_expired_constraints_are_not_indexed_and_lapse_at_lookup() -> None:
    """``build`` leaves out what expired; what expires later lapses without a rebuild."""
    call = read("a.txt")
    assert not ConstraintIndex.build([exact_ban(call, expires_at=NOW - 1)], NOW)
    index = ConstraintIndex.build([exact_ban(call, expires_at=NOW + 10)], NOW)
    assert index.match(call, ADAPTER, NOW)
    assert index.match(call, ADAPTER, NOW + 11) == []


def test_a_missing_target_refuses_calls_that_need_it_only() -> None:
    """A missing-target fact refuses a read of the path, not a write that creates it."""
    fact = constraint("missing:a.txt", kind="missing_target", target="a.txt", fingerprint=None)
    index = ConstraintIndex.build([fact], NOW)
    assert [v.kind for v in index.match(read("a.txt"), ADAPTER, NOW)] == [
        ConstraintKind.MISSING_TARGET
    ]
    write = ADAPTER.describe("write_file", {"path": "a.txt", "content": "x"})
    assert index.match(write, ADAPTER, NOW) == []


def test_blocking_violations_come_before_warnings() -> None:
    """``match`` puts every blocking constraint ahead of the warnings."""
    call = ADAPTER.describe("edit_file", {"path": "a.py", "old": "x", "new": "y"})
    warn = constraint(
        "tool_target:edit_file",
        kind="tool_target",
        level="warn",
        tool="edit_file",
        target="a.py",
        fingerprint=None,
    )
    block = exact_ban(call)
    index = ConstraintIndex.build([warn, block], NOW)
    assert [v.constraint.level for v in index.match(call, ADAPTER, NOW)] == [
        Level.BLOCK,
        Level.WARN,
    ]


def test_a_radius_limit_refuses_calls_touching_more_targets() -> None:
    """A radius limit refuses a call with more targets than it allows, naming how many."""
    radius = constraint("radius", kind="radius_limit", params={"max_targets": 2}, target=None)
    index = ConstraintIndex.build([radius], NOW)
    small = ADAPTER.describe("multi_edit", {"paths": ["a", "b"]})
    large = ADAPTER.describe("multi_edit", {"paths": ["a", "b", "c"]})
    assert index.match(small, ADAPTER, NOW) == []
    (hit,) = index.match(large, ADAPTER, NOW)
    assert "(this call touches 3)" in hit.reason


def test_a_parameter_ban_matches_the_canonical_value() -> None:
    """A parameter ban refuses a call whose parameter has the banned value, however spelled."""
    adapter = MLTrainingAdapter()
    ban = constraint(
        "parameter:train\x1flr=0.1",
        kind="parameter_ban",
        tool="train",
        target=None,
        fingerprint=None,
        params={"key": "lr", "value": 0.1},
    )
    index = ConstraintIndex.build([ban], NOW)
    assert index.match(adapter.describe("train", {"lr": 0.1}), adapter, NOW)
    assert index.match(adapter.describe("train", {"lr": 0.01}), adapter, NOW) == []


def test_a_dominance_ban_needs_an_adapter_that_can_tell() -> None:
    """A dominance ban refuses larger configurations by the adapter's rule, else nothing."""
    adapter = MLTrainingAdapter()
    ban = constraint(
        "dominance:train\x1ffp",
        kind="dominance_ban",
        tool="train",
        target=None,
        fingerprint=None,
        params={"config": {"batch_size": 32}},
    )
    index = ConstraintIndex.build([ban], NOW)
    larger = adapter.describe("train", {"batch_size": 64})
    assert index.match(larger, adapter, NOW)
    assert index.match(adapter.describe("train", {"batch_size": 16}), adapter, NOW) == []
    assert index.match(larger, ADAPTER, NOW) == []


def test_add_replaces_and_remove_forgets() -> None:
    """Adding a key again replaces the constraint; removing it leaves nothing matching."""
    call = read("a.txt")
    index = ConstraintIndex.build([exact_ban(call, reason="first")], NOW)
    index.add(exact_ban(call, reason="second"))
    assert [v.reason for v in index.match(call, ADAPTER, NOW)] == ["second"]
    assert len(index.all) == 1
    index.remove(exact_ban(call).key)
    assert index.match(call, ADAPTER, NOW) == []
    assert not index
    index.remove("no such key")


def test_quiet_only_for_a_tool_nothing_concerns() -> None:
    """A tool with a constraint or a failure is not quiet; a target rule concerns targeted calls."""
    call = read("a.txt")
    index = ConstraintIndex.build([exact_ban(call)], NOW, failed_tools=["bash"])
    assert not index.quiet("read_file", "file_read", may_target=False)
    assert not index.quiet("bash", "shell", may_target=False)
    assert index.quiet("search", "search", may_target=False)
    assert not index.quiet("search", "search", may_target=True)
    assert ConstraintIndex().quiet("search", "search", may_target=True)


def test_recording_transaction_brings_an_index_up_to_date() -> None:
    """What a transaction puts, removes and fails is applied to a cached index after it."""
    store = MemoryStore()
    kept, dropped = exact_ban(read("a.txt")), exact_ban(read("b.txt"))
    index = ConstraintIndex.build([dropped], NOW)
    with store.transaction(Scope()) as tx:
        tx.put_constraint(dropped)
        recording = RecordingTransaction(tx)
        recording.put_constraint(kept)
        recording.remove_constraints([dropped.key])
        recording.bump("ft:bash", NOW)
        recording.bump_many(["ft:make", "s:x"], NOW)
    recording.apply_to(index)
    assert [c.key for c in index.all] == [kept.key]
    assert index.failed_tools == {"bash", "make"}
    with store.transaction(Scope()) as tx:
        assert [c.key for c in tx.constraints()] == [kept.key]


def test_remove_many_drops_each_key_from_every_bucket_at_once() -> None:
    """An eviction of many rules leaves the others matching, each bucket rebuilt once."""
    calls = [read(f"f{i}.txt") for i in range(40)]
    index = ConstraintIndex.build([exact_ban(c) for c in calls], NOW)
    gone = [exact_ban(c).key for c in calls[::2]]
    index.remove_many([*gone, "no such key"])
    assert len(index.all) == 20
    for i, call in enumerate(calls):
        assert bool(index.match(call, ADAPTER, NOW)) is (i % 2 == 1)
    # the buckets by class and by target hold only what is left
    assert {c.key for c in index.exact_by_class[calls[0].action_class or "-"]} == {
        exact_ban(c).key for c in calls[1::2]
    }
    assert not index.exact_by_target[calls[0].targets[0]]


def test_a_recording_transaction_reads_constraints_from_a_current_index() -> None:
    """With the current index given, a constraint is read from it, not from the store.

    What the transaction put or removed wins; a key the store held inactive when the index
    was built (left out of it) is read from the store, which still has it.
    """
    store = MemoryStore()
    indexed, lapsed, written = read("a.txt"), read("b.txt"), read("c.txt")
    in_store = exact_ban(lapsed, expires_at=NOW - 1)
    index = ConstraintIndex.build([exact_ban(indexed), in_store], NOW)
    assert index.lapsed == {in_store.key}
    with store.transaction(Scope()) as tx:
        tx.put_constraint(in_store)  # the store has this one only
        recording = RecordingTransaction(tx, index)
        assert recording.constraint(exact_ban(indexed).key) == exact_ban(indexed)
        assert recording.constraint(in_store.key) == in_store
        assert recording.constraint(exact_ban(written).key) is None
        recording.put_constraint(exact_ban(written))
        assert recording.constraint(exact_ban(written).key) == exact_ban(written)
        recording.remove_constraints([in_store.key])
        assert recording.constraint(in_store.key) is None
        # without the index, the store answers (it never had the indexed one)
        assert RecordingTransaction(tx).constraint(exact_ban(indexed).key) is None
    index.add(in_store)
    assert not index.lapsed


def test_a_recording_transaction_lists_the_rules_from_a_current_index_oldest_first() -> None:
    """What the store would list: the index's, with this transaction's puts and removals;
    the store's own list when the index left lapsed rules out."""
    store = MemoryStore()
    a = exact_ban(read("a.txt"), created_at=3.0)
    b = exact_ban(read("b.txt"), created_at=1.0)
    c = exact_ban(read("c.txt"), created_at=2.0)
    with store.transaction(Scope()) as tx:
        tx.put_constraint(a)
        tx.put_constraint(b)
    index = ConstraintIndex.build([a, b], NOW)  # what the store holds
    with store.transaction(Scope()) as tx:
        recording = RecordingTransaction(tx, index)
        recording.put_constraint(c)
        recording.remove_constraints([b.key])
        assert recording.constraints() == [c, a] == tx.constraints()
        d = exact_ban(read("d.txt"), expires_at=NOW - 1)
        tx.put_constraint(d)
        lapsed = ConstraintIndex.build([a, c, d], NOW)
        assert RecordingTransaction(tx, lapsed).constraints() == [c, a, d]  # (the store's)
