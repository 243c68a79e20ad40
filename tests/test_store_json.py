"""JSONStore: atomic commits, torn journals, corrupt state quarantined, stale temp files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers.factories import constraint, failure
from scarguard.errors import SchemaVersionError, StoreError
from scarguard.model import Scope
from scarguard.receipts import verify_store
from scarguard.stores import JSONStore, StoreCorruptionWarning

SCOPE = Scope("acme", "web")


def write_some(store: JSONStore, n: int = 3) -> list[int]:
    ids = []
    for i in range(n):
        with store.transaction(SCOPE) as tx:
            stored = tx.add_failure(failure(i))
            tx.bump("k", 1.0)
            tx.put_constraint(constraint(f"c{i}"))
            tx.receipt("failure", {"id": stored.id}, stored.at)
            ids.append(stored.id)
    return ids  # type: ignore[return-value]


def test_files_are_laid_out_beside_the_state(fresh_json: JSONStore, tmp_path: Path) -> None:
    """State, failure journal, receipt journal and lock file live beside each other."""
    write_some(fresh_json, 1)
    names = {p.name for p in tmp_path.iterdir()}
    assert {
        "fresh.json",
        "fresh.failures.jsonl",
        "fresh.receipts.jsonl",
        "fresh.json.lock",
    } <= names
    assert json.loads((tmp_path / "fresh.json").read_text())["scarguard"] == "scarguard-json-store"


def test_an_exception_in_a_transaction_writes_nothing(
    fresh_json: JSONStore, tmp_path: Path
) -> None:
    """A transaction whose body raises leaves every file byte-identical."""
    write_some(fresh_json, 2)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(KeyError), fresh_json.transaction(SCOPE) as tx:
        tx.add_failure(failure(9))
        tx.receipt("failure", {}, 1.0)
        raise KeyError("boom")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_two_instances_see_each_others_commits_and_never_reuse_ids(tmp_path: Path) -> None:
    """Two stores on one file alternate writes: each builds on the other's, ids stay unique."""
    a, b = JSONStore(tmp_path / "s.json"), JSONStore(tmp_path / "s.json")
    ids = []
    for i in range(6):
        with (a if i % 2 else b).transaction(SCOPE) as tx:
            ids.append(tx.add_failure(failure(i)).id)
            tx.bump("k", float(i))
    assert ids == [1, 2, 3, 4, 5, 6]
    assert a.counters(SCOPE)["k"].count == 6 == b.counters(SCOPE)["k"].count
    assert a.failures(SCOPE) == b.failures(SCOPE)


def test_generation_never_repeats_across_fast_commits(fresh_json: JSONStore) -> None:
    """Every commit gives a new generation token, even several within one clock tick."""
    tokens = {fresh_json.generation()}
    for i in range(30):
        with fresh_json.transaction(SCOPE) as tx:
            tx.bump("k", float(i))
        tokens.add(fresh_json.generation())
    assert len(tokens) == 31


def test_a_torn_journal_tail_is_ignored_and_repaired(fresh_json: JSONStore) -> None:
    """Bytes past the committed length (torn line, uncommitted record) are ignored, then cut."""
    write_some(fresh_json, 2)
    journal = Path(fresh_json.failures_path)
    committed = journal.read_bytes()
    with journal.open("ab") as handle:
        handle.write(json.dumps({"workspace": "acme", "project": "web", "tool": "x"}).encode())
        handle.write(b'\n{"workspace": "acme", "pro')
    again = JSONStore(fresh_json.location)
    assert [f.id for f in again.failures(SCOPE)] == [2, 1]
    write_some(again, 1)
    assert journal.read_bytes().startswith(committed)
    assert all(json.loads(line) for line in journal.read_bytes().splitlines())
    assert [f.id for f in again.failures(SCOPE)] == [3, 2, 1]
    assert verify_store(again).valid


def test_a_corrupt_state_is_quarantined_and_rebuilt_from_the_journal(
    fresh_json: JSONStore, tmp_path: Path
) -> None:
    """Corrupt state: moved to .corrupt-* with its bytes, one warning, failures and chain kept."""
    write_some(fresh_json, 3)
    state = Path(fresh_json.location)
    garbage = state.read_bytes()[:40] + b"\x00garbage"
    state.write_bytes(garbage)
    with pytest.warns(StoreCorruptionWarning, match="moved aside") as caught:
        store = JSONStore(state)
    assert len(caught) == 1
    (aside,) = tmp_path.glob("fresh.json.corrupt-*")
    assert aside.read_bytes() == garbage
    assert [f.id for f in store.failures(SCOPE)] == [3, 2, 1]
    assert verify_store(store).valid and verify_store(store).count == 3
    with store.transaction(SCOPE) as tx:
        assert tx.add_failure(failure(4)).id == 4  # no id reused


def test_a_corrupt_state_found_by_a_reader_is_quarantined_too(fresh_json: JSONStore) -> None:
    """A state corrupted after opening is quarantined on the next read, never overwritten."""
    write_some(fresh_json, 2)
    Path(fresh_json.location).write_bytes(b"{not json")
    with pytest.warns(StoreCorruptionWarning):
        assert len(fresh_json.failures(SCOPE)) == 2
    assert list(Path(fresh_json.location).parent.glob("fresh.json.corrupt-*"))


def test_foreign_json_is_refused_and_left_untouched(tmp_path: Path) -> None:
    """A JSON file scarguard did not write raises StoreError and is not modified."""
    path = tmp_path / "package.json"
    path.write_text('{"name": "not ours"}')
    with pytest.raises(StoreError, match="did not write"):
        JSONStore(path)
    assert path.read_text() == '{"name": "not ours"}'


def test_a_newer_format_is_refused_and_left_untouched(fresh_json: JSONStore) -> None:
    """A state with a higher format raises SchemaVersionError naming the file."""
    write_some(fresh_json, 1)
    path = Path(fresh_json.location)
    doc = json.loads(path.read_text())
    doc["format"] = 7
    path.write_text(json.dumps(doc))
    before = path.read_bytes()
    with pytest.raises(SchemaVersionError, match="format 7") as caught:
        JSONStore(path)
    assert caught.value.path == str(path) and path.read_bytes() == before


def test_a_folder_is_refused_and_parents_are_created(tmp_path: Path) -> None:
    """A folder path raises StoreError; missing parent folders are created."""
    (tmp_path / "d.json").mkdir()
    with pytest.raises(StoreError, match="folder"):
        JSONStore(tmp_path / "d.json")
    store = JSONStore(tmp_path / "x" / "y" / "s.json")
    write_some(store, 1)
    assert Path(store.location).exists()


def test_stale_temp_files_are_swept_at_open(tmp_path: Path) -> None:
    """Temp files of dead processes or older than a minute are removed; a live fresh one stays."""
    path = tmp_path / "s.json"
    dead = tmp_path / "s.json.tmp-999999999-aaaa"
    old = tmp_path / f"s.json.tmp-{os.getpid()}-bbbb"
    live = tmp_path / f"s.json.tmp-{os.getpid()}-cccc"
    for tmp in (dead, old, live):
        tmp.write_text("partial")
    os.utime(old, (1000.0, 1000.0))
    os.utime(live, (5000.0, 5000.0))
    JSONStore(path, clock=lambda: 5030.0)
    assert not dead.exists() and not old.exists() and live.exists()


def test_wipe_keeps_ids_increasing(fresh_json: JSONStore) -> None:
    """After wipe() the journals hold no record and new ids continue above the old ones."""
    write_some(fresh_json, 2)
    fresh_json.wipe()
    assert fresh_json.failures(SCOPE) == []
    assert Path(fresh_json.receipts_path).read_bytes() == b""
    assert write_some(fresh_json, 1) == [3]
    assert verify_store(fresh_json).count == 1


def test_clear_survives_reopening(fresh_json: JSONStore) -> None:
    """A cleared tenant stays cleared for a store opened later (the journal records the clear)."""
    write_some(fresh_json, 2)
    with fresh_json.transaction(Scope("other", "x")) as tx:
        tx.add_failure(failure(5))
    fresh_json.clear(SCOPE)
    again = JSONStore(fresh_json.location)
    assert again.failures(SCOPE) == [] and len(again.failures(Scope("other", "x"))) == 1


def test_reads_inside_a_transaction_do_not_deadlock(fresh_json: JSONStore) -> None:
    """Reading the store inside its own transaction returns instead of waiting for itself."""
    write_some(fresh_json, 1)
    with fresh_json.transaction(SCOPE) as tx:
        tx.bump("k", 2.0)
        assert len(fresh_json.failures(SCOPE)) == 1


def test_a_file_that_is_not_json_is_refused_and_left_in_place(tmp_path: Path) -> None:
    """A .json path holding something else raises StoreError; the file stays, byte-identical."""
    path = tmp_path / "notes.json"
    path.write_bytes(b"my notes, not JSON\n")
    with pytest.raises(StoreError, match="not a scarguard JSON store"):
        JSONStore(path)
    assert path.read_bytes() == b"my notes, not JSON\n"
    assert not list(tmp_path.glob("notes.json.corrupt-*"))


def test_ids_are_not_reused_when_the_state_is_corrupted_after_a_wipe(
    fresh_json: JSONStore,
) -> None:
    """A state rebuilt from the journals after wipe() still hands out ids above the old ones."""
    write_some(fresh_json, 3)
    fresh_json.wipe()
    Path(fresh_json.location).write_bytes(b"{not json")
    with pytest.warns(StoreCorruptionWarning):
        store = JSONStore(fresh_json.location)
    assert write_some(store, 1) == [4]


def test_a_write_past_the_size_limit_fails_clearly_and_loses_nothing(tmp_path: Path) -> None:
    """Past max_entries a growing write raises StoreError naming the fix; shrinking still works."""
    from scarguard import FailureMemory

    path = tmp_path / "small.json"
    memory = FailureMemory(JSONStore(path, max_entries=40))
    stored = 0
    with pytest.raises(StoreError, match=r"past the 40 the JSON store is made for.*SQLite"):
        for n in range(100):
            memory.record("run", {"n": n}, error="boom")
            stored += 1
    assert 0 < stored < 100
    assert len(memory.recent_failures(1000)) == stored  # every acknowledged record kept
    assert memory.verify().valid
    memory.clear()  # shrinking past the limit works
    memory.record("run", {"n": 0}, error="boom")
    assert len(memory.recent_failures(10)) == 1


def test_a_journal_shorter_than_committed_loses_no_new_record_and_fails_verify(
    tmp_path: Path,
) -> None:
    """A failures journal restored from an older copy: the next record is kept (on a fresh
    line), a warning says so, and verify() fails until the damage is acknowledged."""
    from scarguard import FailureMemory

    path = tmp_path / "memory.json"
    store = JSONStore(path)
    memory = FailureMemory(store)
    journal = tmp_path / "memory.failures.jsonl"
    memory.record("run", {"n": 1}, error="boom one")
    older = journal.read_bytes()
    memory.record("run", {"n": 2}, error="boom two")
    memory.record("run", {"n": 3}, error="boom three")
    journal.write_bytes(older[:-7])  # an older copy, cut mid-line
    report = memory.verify()
    assert not report.valid and "fewer than committed" in report.reason
    with pytest.warns(StoreCorruptionWarning, match="fewer than committed"):
        memory.record("run", {"n": 4}, error="boom four")
    errors = [f.error for f in memory.recent_failures(10)]
    assert "boom four" in errors  # the acknowledged record after the damage is there
    assert b"\x00" not in journal.read_bytes()
    reopened = FailureMemory(JSONStore(path))
    assert "boom four" in [f.error for f in reopened.recent_failures(10)]
    assert not reopened.verify().valid  # still, after a reopen: the damage is kept
    notes = reopened.store.acknowledge_damage()  # type: ignore[attr-defined]
    assert notes and "fewer than committed" in notes[0]
    assert reopened.verify().valid


def test_a_store_opened_through_a_symlink_keeps_the_link_and_one_memory(tmp_path: Path) -> None:
    """Writes through a symlink land in the file it points to; the link stays a link."""
    from scarguard import FailureMemory

    real = tmp_path / "data" / "memory.json"
    real.parent.mkdir()
    FailureMemory(real).record("run", {"n": 0}, error="first")
    link = tmp_path / "memory.json"
    link.symlink_to(real)
    FailureMemory(link).record("run", {"n": 1}, error="through the link")
    assert link.is_symlink()
    errors = {f.error for f in FailureMemory(real).recent_failures(10)}
    assert errors == {"first", "through the link"}


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _replace_state_as_another_process_would(path: Path) -> None:
    """Rename a copy of the state file into place, a second past its mtime (a new token)."""
    data = path.read_bytes()
    aside = path.with_name(path.name + ".other")
    aside.write_bytes(data)
    st = path.stat()
    os.utime(aside, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    os.replace(aside, path)


def test_another_process_commit_is_seen_once_the_staleness_bound_has_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """For ``FRESH_FOR`` after a ``stat``, the token is trusted without another; a state
    file this process did not write (as another process's commit) is seen by the first
    check after that."""
    from scarguard.stores.json import _reads

    clock = _Clock()
    monkeypatch.setattr(_reads, "_monotonic", clock)
    path = tmp_path / "g.json"
    store = JSONStore(path)
    with store.transaction(SCOPE) as tx:
        tx.bump("k", 1.0)
    before = store.generation()
    _replace_state_as_another_process_would(path)
    clock.now += _reads.FRESH_FOR / 2
    assert store.generation() == before
    clock.now += _reads.FRESH_FOR
    assert store.generation() != before


def test_a_commit_of_this_process_is_seen_by_the_next_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stores of one process share the file's commits: the store that committed and every
    other store on the file see the new token at once (the clock held still)."""
    from scarguard.stores.json import _reads

    monkeypatch.setattr(_reads, "_monotonic", _Clock())
    path = tmp_path / "g.json"
    mine, theirs = JSONStore(path), JSONStore(path)
    before, also_before = mine.generation(), theirs.generation()
    assert mine.generation() == before
    with theirs.transaction(SCOPE) as tx:
        tx.bump("k", 1.0)
    after = theirs.generation()
    assert after != also_before
    assert mine.generation() == after
    with mine.transaction(SCOPE) as tx:
        tx.bump("k", 2.0)
    assert mine.generation() not in (before, after)
    assert theirs.generation() == mine.generation()
