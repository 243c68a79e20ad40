"""Durable refusal counts, shadow mode and the refusal message's constraint id."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import dispose, make_store
from helpers.factories import constraint
from scarguard import FailureMemory
from scarguard.learning.keys import refusal_keys
from scarguard.model import Scope
from scarguard.refusals import build_refusal_stats
from scarguard.stores import MemoryStore, Store
from scarguard.testing import FakeClock

MISSING = "FileNotFoundError: [Errno 2] No such file or directory: '{}'"
NOT_FOUND = "Error: search string not found in {}"
DAY = 86400.0
START = 1_767_225_600.0  # 2026-01-01 00:00 UTC


def _fail_twice_then_check(memory: FailureMemory, path: str) -> None:
    memory.record("read_file", {"path": path}, error=MISSING.format(path))
    assert not memory.check("read_file", {"path": path}).allowed


@pytest.mark.parametrize("kind", ["memory", "sqlite", "json", "postgres"])
def test_refusals_are_counted_durably_in_every_store(kind: str, tmp_path: Path) -> None:
    """Refusals reach the store's counters and another memory on it reads the same stats."""
    store = make_store(kind, tmp_path)
    try:
        clock = FakeClock()
        writer = FailureMemory(store, workspace="acme", project="web", clock=clock)
        _fail_twice_then_check(writer, "gone.txt")
        clock.now += DAY
        assert not writer.check("read_file", {"path": "gone.txt"}).allowed
        writer.flush()
        reader = FailureMemory(store, workspace="acme", project="web", clock=clock)
        refusals = reader.stats().refusals
        assert refusals.refused == 2
        assert dict(refusals.refused_by_tool) == {"read_file": 2}
        assert dict(refusals.refused_by_day) == {"2026-01-01": 1, "2026-01-02": 1}
        (row,) = refusals.by_constraint
        assert (row.tool, row.refused, row.would_refuse) == ("read_file", 2, 0)
        assert row.constraint_id in {c.id for c in reader.constraints()}
        other = FailureMemory(store, workspace="acme", project="api", clock=clock)
        assert other.stats().refusals.refused == 0
    finally:
        dispose(store)


def test_refusal_counts_survive_a_new_process_on_an_sqlite_file(tmp_path: Path) -> None:
    """Counts written by one memory are read back from the file after it is closed."""
    path = tmp_path / "memory.db"
    with FailureMemory(path, project="web") as first:
        _fail_twice_then_check(first, "gone.txt")
        assert not first.check("read_file", {"path": "gone.txt"}).allowed
    with FailureMemory(path, project="web") as second:
        assert second.stats().refusals.refused == 2


def test_refusals_are_batched_and_flushed_at_the_batch_size(tmp_path: Path) -> None:
    """With success_batch=3, the third refusal writes all three without a flush()."""
    store = make_store("sqlite", tmp_path)
    try:
        memory = FailureMemory(store, project="web", success_batch=3)
        _fail_twice_then_check(memory, "gone.txt")
        memory.check("read_file", {"path": "gone.txt"})
        assert not store.counters(Scope(project="web"), "gr:")
        memory.check("read_file", {"path": "gone.txt"})
        assert store.counters(Scope(project="web"), "gr:")["gr:read_file"].count == 3
    finally:
        dispose(store)


def test_a_call_refused_by_two_constraints_counts_once_per_call() -> None:
    """Calls refused count calls; each blocking constraint counts its own refusal."""
    store = MemoryStore()
    first, second = constraint("exact:fp0:edit_failed"), constraint("tool_target:x")
    with store.transaction(Scope(project="web")) as tx:
        tx.bump_many(refusal_keys("edit_file", (first, second), START, enforced=True), START)
    refusals = build_refusal_stats(store, Scope(project="web"))
    assert refusals.refused == 1
    assert dict(refusals.refused_by_day) == {"2026-01-01": 1}
    assert sorted(r.constraint_id for r in refusals.by_constraint) == sorted([first.id, second.id])
    assert all(r.refused == 1 for r in refusals.by_constraint)


def test_tool_names_with_the_key_separator_stay_apart() -> None:
    """A tool whose name holds the separator is read back whole, not split."""
    store = MemoryStore()
    tool = "odd\x1fname"
    with store.transaction(Scope(project="web")) as tx:
        tx.bump_many(refusal_keys(tool, (constraint(),), START, enforced=True), START)
    refusals = build_refusal_stats(store, Scope(project="web"))
    assert dict(refusals.refused_by_tool) == {tool: 1}
    assert [r.tool for r in refusals.by_constraint] == [tool]


def test_the_refusal_message_names_the_constraint_and_the_lifting_command() -> None:
    """The LLM-facing message carries the constraint id and `scarguard forget <id>`."""
    with FailureMemory(":memory:", project="web") as memory:
        memory.record("read_file", {"path": "gone.txt"}, error=MISSING.format("gone.txt"))
        decision = memory.check("read_file", {"path": "gone.txt"})
    ids = [v.constraint.id for v in decision.violations]
    assert ids
    for constraint_id in ids:
        assert f"(constraint {constraint_id})" in decision.message
    assert f"scarguard forget {' '.join(dict.fromkeys(ids))}" in decision.message


def test_clear_drops_pending_refusal_counts() -> None:
    """clear() forgets refusals not yet written, as it forgets everything else."""
    with FailureMemory(":memory:", project="web") as memory:
        _fail_twice_then_check(memory, "gone.txt")
        memory.clear()
        assert memory.stats().refusals.refused == 0


# -- shadow mode ---------------------------------------------------------------------------


class World:
    """Tools acting on a dictionary of files (not on disk: nothing scarguard can observe)."""

    def __init__(self) -> None:
        self.files = {"a.py": "x = 1\n"}
        self.runs = 0

    def read_file(self, path: str) -> str:
        self.runs += 1
        if path not in self.files:
            raise FileNotFoundError(MISSING.format(path).split(": ", 1)[1])
        return self.files[path]

    def edit_file(self, path: str, old: str, new: str) -> str:
        self.runs += 1
        text = self.files.get(path, "")
        if old not in text:
            raise ValueError(NOT_FOUND.format(path))
        self.files[path] = text.replace(old, new)
        return "ok"

    def run(self, command: str) -> str:
        self.runs += 1
        if command == "python gen.py":  # a generator: creates a file it does not name
            self.files["notes.md"] = "notes"
            return "generated"
        raise RuntimeError("503 Service Unavailable")


SCRIPT: list[tuple[str, dict[str, str]]] = [
    ("read_file", {"path": "notes.md"}),
    ("read_file", {"path": "notes.md"}),  # refused: right (still missing)
    ("edit_file", {"path": "a.py", "old": "y = 2", "new": "y = 3"}),
    ("edit_file", {"path": "a.py", "old": "y = 2", "new": "y = 3"}),  # refused: right
    ("run", {"command": "curl https://example.invalid"}),
    ("run", {"command": "curl https://example.invalid"}),  # harness: never refused
    ("run", {"command": "python gen.py"}),
    ("read_file", {"path": "notes.md"}),  # refused: wrong (the generator made it)
    ("edit_file", {"path": "a.py", "old": "x = 1", "new": "x = 2"}),
]


def _play(memory: FailureMemory, world: World) -> int:
    refused = 0
    for tool, args in SCRIPT:
        decision = memory.check(tool, args)
        if not decision.allowed:
            refused += 1
            continue
        try:
            getattr(world, tool)(**args)
        except Exception as exc:
            memory.record(tool, args, error=exc)
        else:
            memory.record(tool, args, ok=True)
    return refused


@pytest.fixture
def memories(tmp_path: Path) -> Iterator[Callable[..., FailureMemory]]:
    opened: list[FailureMemory] = []

    def open_one(**options: object) -> FailureMemory:
        memory = FailureMemory(tmp_path / f"m{len(opened)}.db", project="web", **options)  # type: ignore[arg-type]
        opened.append(memory)
        return memory

    yield open_one
    for memory in opened:
        memory.close()


def test_shadow_mode_runs_every_call_and_counts_what_enforcing_refuses(
    memories: Callable[..., FailureMemory],
) -> None:
    """enforce=False runs all calls; its would-refuse counts equal the enforcing refusals."""
    enforcing, enforced_world = memories(), World()
    refused = _play(enforcing, enforced_world)
    shadow, shadow_world = memories(enforce=False), World()
    assert _play(shadow, shadow_world) == 0
    assert shadow_world.runs == len(SCRIPT)
    assert enforced_world.runs == len(SCRIPT) - refused
    strict, measured = enforcing.stats().refusals, shadow.stats().refusals
    assert refused == strict.refused == measured.would_refuse == 3
    assert measured.refused == 0
    assert dict(measured.would_refuse_by_tool) == dict(strict.refused_by_tool)
    assert sorted((r.tool, r.kind, r.would_refuse) for r in measured.by_constraint) == sorted(
        (r.tool, r.kind, r.refused) for r in strict.by_constraint
    )
    assert dict(measured.verdicts) == {"right": 2, "wrong": 1, "other": 0}
    assert measured.precision == pytest.approx(2 / 3)
    (wrong,) = [r for r in measured.by_constraint if r.wrong]
    assert wrong.tool == "read_file"


def test_shadow_mode_learns_exactly_what_enforcing_learns(
    memories: Callable[..., FailureMemory],
) -> None:
    """The would-be-refused calls' outcomes are not learned from: same constraints, counts."""
    enforcing, shadow = memories(), memories(enforce=False)
    _play(enforcing, World())
    _play(shadow, World())
    assert [(c.key, c.occurrences) for c in enforcing.constraints()] == [
        (c.key, c.occurrences) for c in shadow.constraints()
    ]
    assert enforcing.stats().failures == shadow.stats().failures


def test_a_shadow_decision_is_allowed_and_says_what_would_have_refused_it() -> None:
    """Decision.shadow is set, the violations are kept, and the LLM message stays empty."""
    with FailureMemory(":memory:", project="web", enforce=False) as memory:
        memory.record("read_file", {"path": "gone.txt"}, error=MISSING.format("gone.txt"))
        decision = memory.check("read_file", {"path": "gone.txt"})
        assert decision.allowed and decision.shadow
        assert decision.violations
        assert "refused" not in decision.message
        result = memory.record("read_file", {"path": "gone.txt"}, error=MISSING.format("x"))
        assert result.failure is not None and result.failure.id is None
        assert result.signature == "file_not_found"
        assert memory.stats().refusals.verdicts["right"] == 1


def test_an_enforcing_decision_is_never_shadow() -> None:
    """Without enforce=False a refusal is a refusal."""
    with FailureMemory(":memory:", project="web") as memory:
        memory.record("read_file", {"path": "gone.txt"}, error=MISSING.format("gone.txt"))
        decision = memory.check("read_file", {"path": "gone.txt"})
    assert not decision.allowed and not decision.shadow


def test_stores_keep_refusal_counters_through_export_and_import(
    store_factory: Callable[..., Store],
) -> None:
    """An export carries the refusal counts into another store."""
    source = FailureMemory(store_factory("sqlite"), project="web")
    _fail_twice_then_check(source, "gone.txt")
    target = FailureMemory(store_factory("json"), project="web")
    target.import_(source.export())
    assert target.stats().refusals.refused == 1
