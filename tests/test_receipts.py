"""Receipt chains: what they cover, checkpoints and keys, truncation caught in store files.

Tampering with the chain of every store kind is in the contract suite (test_store_contract.py).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scarguard._frozen import FrozenDict
from scarguard.model import Failure, Scope
from scarguard.receipts import (
    COMPACT,
    GENESIS,
    KEY_ENV,
    Chain,
    load_checkpoint,
    reseal,
    seal,
    verify_chain,
    verify_store,
    write_checkpoint,
)
from scarguard.stores import JSONStore, SQLiteStore, Store

SCOPE = Scope("acme", "web")


def chain(n: int, key: str | None = None) -> list:  # type: ignore[type-arg]
    out = []
    prev = GENESIS
    for seq in range(1, n + 1):
        receipt = seal(seq, prev, "failure", 1.5 + seq, {"seq": seq, "f": 0.1}, key)
        out.append(receipt)
        prev = receipt.hash
    return out


def test_receipts_module_imports_on_its_own() -> None:
    """scarguard.receipts imports first in a fresh interpreter (no circular import)."""
    subprocess.run([sys.executable, "-c", "import scarguard.receipts"], check=True)


@pytest.mark.parametrize("field", ["type", "at_ms", "prev", "payload"])
def test_the_hash_covers_every_field(field: str) -> None:
    """Changing any field of a receipt, not just its payload, breaks verification."""
    receipts = chain(3)
    original = receipts[1]
    value = {
        "type": "lift",
        "at_ms": original.at_ms + 1,
        "prev": "f" * 64,
        "payload": original.payload.replace("2", "7"),
    }[field]
    receipts[1] = attrs.evolve(original, **{field: value})
    report = verify_chain(receipts)
    assert not report.valid and report.first_broken == 2


def test_a_wrong_key_fails_and_the_env_key_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """An HMAC chain verifies with its key only; SCARGUARD_RECEIPT_KEY is the default key."""
    receipts = chain(3, key="secret")
    assert verify_chain(receipts, key="secret").valid
    assert not verify_chain(receipts, key="other").valid
    assert not verify_chain(receipts).valid
    monkeypatch.setenv(KEY_ENV, "secret")
    assert verify_chain(receipts).valid


def test_checkpoint_round_trip_and_truncation(tmp_path: Path) -> None:
    """A checkpoint written atomically is read back and catches a cut-off tail."""
    receipts = chain(5)
    path = str(tmp_path / "c.head")
    write_checkpoint(path, 5, receipts[-1].hash)
    assert load_checkpoint(path) == (5, receipts[-1].hash)
    assert [p.name for p in tmp_path.iterdir()] == ["c.head"]
    report = verify_chain(receipts[:3], checkpoint=load_checkpoint(path))
    assert not report.valid and report.first_broken == 4
    assert load_checkpoint(str(tmp_path / "missing")) is None


# -- tampering with real store files ---------------------------------------------------


def filled(kind: str, tmp_path: Path, n: int = 6, **options: object) -> Store:
    store: Store = (
        SQLiteStore(tmp_path / "t.db", **options)  # type: ignore[arg-type]
        if kind == "sqlite"
        else JSONStore(tmp_path / "t.json", **options)  # type: ignore[arg-type]
    )
    for i in range(n):
        with store.transaction(SCOPE) as tx:
            tx.receipt("failure", {"i": i, "note": f"n{i}"}, 10.0 + i)
    return store


def edit_sqlite(store: Store, sql: str) -> None:
    with sqlite3.connect(store.location) as conn:
        conn.execute(sql)


def edit_json(store: Store, change: Callable[[list[bytes]], list[bytes]]) -> None:
    path = Path(store.receipts_path)  # type: ignore[attr-defined]
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(change(lines)))


def reopen(kind: str, store: Store) -> Store:
    store.close()
    return SQLiteStore(store.location) if kind == "sqlite" else JSONStore(store.location)


@pytest.mark.parametrize("kind", ["sqlite", "json"])
def test_a_truncated_tail_is_caught_by_the_checkpoint(tmp_path: Path, kind: str) -> None:
    """Cutting the last receipts after a verified checkpoint is reported as truncation."""
    store = filled(kind, tmp_path)
    assert verify_store(store).count == 6  # writes the checkpoint
    if kind == "sqlite":
        edit_sqlite(store, "DELETE FROM receipts WHERE seq > 4")
    else:
        edit_json(store, lambda ls: ls[:4])
        state = Path(store.location)
        doc = json.loads(state.read_text())  # a careful forger fixes the state's head too
        doc["receipts"] = {
            "seq": 4,
            "head": json.loads(Path(store.receipts_path).read_bytes().splitlines()[3])["hash"],
        }  # type: ignore[attr-defined]
        doc["receipts_bytes"] = len(Path(store.receipts_path).read_bytes())  # type: ignore[attr-defined]
        state.write_text(json.dumps(doc))
    report = verify_store(reopen(kind, store))
    assert not report.valid and report.first_broken == 5 and "checkpoint" in report.reason


@pytest.mark.parametrize("name", ["memory.db", "memory.json"])
def test_a_damaged_checkpoint_fails_verification_and_is_kept(tmp_path: Path, name: str) -> None:
    """A damaged checkpoint is reported, not overwritten; deleting it accepts the current head."""
    from scarguard import FailureMemory

    memory = FailureMemory(tmp_path / name)
    for i in range(3):
        memory.record("bash", {"command": f"job {i}"}, error="exit code 1")
    assert memory.verify().valid
    head = Path(str(tmp_path / name) + ".head")
    head.write_text("{not json", encoding="utf-8")
    report = memory.verify()
    assert not report.valid
    assert "damaged" in report.reason
    assert head.read_text(encoding="utf-8") == "{not json"
    head.unlink()
    assert memory.verify().valid
    assert head.exists()
    memory.close()


# -- a keyed checkpoint, the PostgreSQL head, what verify covers, a full disk -------------


def _keyed_history(store: Store, n: int = 5) -> None:
    for i in range(n):
        with store.transaction(SCOPE) as tx:
            tx.receipt("event", {"i": i}, float(i))


def _cut_to(store: Store, keep: int) -> str:
    """Cut the chain to ``keep`` receipts everywhere an attacker without the key can."""
    rows = [r for _, r in _rows(store)][:keep]
    head = rows[-1]["hash"]
    kind = type(store).__name__
    if kind == "SQLiteStore":
        with sqlite3.connect(store.location) as conn:
            conn.execute("DELETE FROM receipts WHERE seq > ?", (keep,))
    elif kind == "JSONStore":
        journal = Path(store.receipts_path)  # type: ignore[attr-defined]
        lines = journal.read_bytes().splitlines(keepends=True)[:keep]
        journal.write_bytes(b"".join(lines))
        state_path = Path(store.location)
        state = json.loads(state_path.read_text())
        state["receipts"] = {"seq": keep, "head": head}
        state["receipts_bytes"] = sum(len(line) for line in lines)
        state_path.write_text(json.dumps(state))
    else:  # PostgreSQL: the chain, its head row and the checkpoint row
        import psycopg
        from psycopg import sql

        from helpers.postgres import PG_URL

        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(store.schema)))  # type: ignore[attr-defined]
            conn.execute("DELETE FROM receipts WHERE seq > %s", (keep,))
            conn.execute("UPDATE receipt_head SET seq = %s, hash = %s", (keep, head))
            conn.execute("UPDATE receipt_checkpoint SET seq = %s, hash = %s", (keep, head))
        return head
    write_checkpoint(store.checkpoint_path, keep, head)  # type: ignore[attr-defined]  # no key
    return head


def _rows(store: Store) -> list[tuple[int, dict]]:  # type: ignore[type-arg]
    kind = type(store).__name__
    if kind == "JSONStore":
        lines = Path(store.receipts_path).read_text().splitlines()  # type: ignore[attr-defined]
        return [(i, json.loads(line)) for i, line in enumerate(lines)]
    if kind == "SQLiteStore":
        with sqlite3.connect(store.location) as conn:
            found = conn.execute("SELECT seq, hash FROM receipts ORDER BY seq").fetchall()
    else:
        import psycopg
        from psycopg import sql

        from helpers.postgres import PG_URL

        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(store.schema)))  # type: ignore[attr-defined]
            found = conn.execute("SELECT seq, hash FROM receipts ORDER BY seq").fetchall()
    return [(int(seq), {"hash": h}) for seq, h in found]


@pytest.mark.parametrize("kind", ["sqlite", "json", "postgres"])
def test_with_a_key_a_cut_chain_with_a_rewritten_checkpoint_fails_verify(
    kind: str, store_factory: Callable[..., Store]
) -> None:
    """Cutting the chain's end and rewriting the checkpoint to match needs the key now."""
    store = store_factory(kind, receipt_key="k3y")
    _keyed_history(store)
    assert verify_store(store).valid  # writes a checkpoint carrying its MAC
    _cut_to(store, 3)
    report = verify_store(store)
    assert not report.valid
    assert "MAC" in report.reason


def test_postgresql_verify_checks_its_chain_head(store_factory: Callable[..., Store]) -> None:
    """A receipt deleted from the end (the head row left alone) fails verify on PostgreSQL."""
    import psycopg
    from psycopg import sql

    from helpers.postgres import PG_URL

    store = store_factory("postgres")
    _keyed_history(store, 4)
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(store.schema)))  # type: ignore[attr-defined]
        conn.execute("DELETE FROM receipts WHERE seq = 4")
    report = verify_store(store)
    assert not report.valid and "head is 4" in report.reason


@pytest.mark.slow
def test_cli_verify_says_what_is_and_is_not_covered(tmp_path: Path) -> None:
    """Deleting every constraint passes the chain check: the output says that is not covered."""
    from scarguard import FailureMemory

    path = tmp_path / "memory.db"
    with FailureMemory(path, workspace="w", project="p") as memory:
        for _ in range(2):
            memory.record("read_file", {"path": "gone.txt"}, error="No such file or directory")
        assert memory.constraints()
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM constraints")
    done = subprocess.run(
        [sys.executable, "-m", "scarguard", "verify", "--path", str(path),
         "--workspace", "w", "--project", "p"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "covers: the receipt chain" in done.stdout
    assert "a constraint deleted" in " ".join(done.stdout.split())
    assert all(len(line) <= 80 for line in done.stdout.splitlines())


@pytest.mark.parametrize("kind", ["sqlite", "json"])
def test_a_checkpoint_that_cannot_be_written_does_not_fail_a_valid_chain(
    kind: str, store_factory: Callable[..., Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a full disk verify() still reports a valid chain, saying the checkpoint was not saved."""
    import errno
    import os as os_module

    store = store_factory(kind)
    _keyed_history(store, 2)
    real_open = os_module.open

    def full_disk(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if flags & os_module.O_CREAT and ".head" in str(path):
            raise OSError(errno.ENOSPC, os_module.strerror(errno.ENOSPC))
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os_module, "open", full_disk)
    report = verify_store(store)
    assert report.valid and report.count == 2
    assert "could not be saved" in report.reason and "No space left" in report.reason


def test_cli_verify_on_a_full_disk_exits_3_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An OSError under any command is one line on stderr and exit 3, never a traceback."""
    import errno

    from scarguard import FailureMemory
    from scarguard.cli import EXIT_STORE, main

    path = tmp_path / "memory.db"
    with FailureMemory(path) as memory:
        memory.record("run", {"n": 1}, error="boom")

    def full(self: object) -> object:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(FailureMemory, "verify", full)
    assert main(["verify", "--path", str(path)]) == EXIT_STORE
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "No space left on device" in err


def compacted(receipts: list, first: int, key: str | None = None) -> list:  # type: ignore[type-arg]
    """Drop the receipts before ``first`` and seal the compact receipt that names it."""
    kept = [r for r in receipts if r.seq >= first]
    head = receipts[-1]
    payload = {"first_seq": first, "first_prev": kept[0].prev, "deleted": first - 1}
    return [*kept, seal(head.seq + 1, head.hash, COMPACT, 99.0, payload, key)]


def test_a_compacted_chain_verifies_from_its_first_receipt() -> None:
    """Receipts 1-3 gone behind a compact receipt: valid, start 4, last 7."""
    report = verify_chain(compacted(chain(6), 4))
    assert report.valid and report.start == 4 and report.count == 4 and report.last_seq == 7


def test_old_receipts_deleted_without_a_compact_receipt_are_detected() -> None:
    """Cutting the oldest receipts by hand breaks the chain at receipt 1."""
    report = verify_chain(chain(6)[3:])
    assert not report.valid and report.first_broken == 1
    assert "no compaction receipt" in report.reason


def test_deleting_more_than_the_compaction_named_is_detected() -> None:
    """A compact receipt that names receipt 3 does not cover a chain starting at 5."""
    receipts = compacted(chain(6), 3)
    report = verify_chain([r for r in receipts if r.seq >= 5])
    assert not report.valid and "receipts 1 to 4 are missing" in report.reason


def test_a_forged_compact_receipt_fails_without_the_key() -> None:
    """With a key, a compact receipt sealed without it is an altered receipt."""
    receipts = compacted(chain(6, key="k"), 4, key=None)
    report = verify_chain(receipts, key="k")
    assert not report.valid and report.first_broken == 7 and "altered" in report.reason


def test_a_checkpoint_before_the_start_is_accepted_one_after_the_end_is_not() -> None:
    """A checkpoint of a compacted receipt passes; one past the head still means truncation."""
    original = chain(6)
    receipts = compacted(original, 4)
    assert verify_chain(receipts, checkpoint=(2, original[1].hash)).valid
    assert verify_chain(receipts, checkpoint=(7, receipts[-1].hash)).valid
    receipts.append(seal(8, receipts[-1].hash, "failure", 100.0, {}))
    late = verify_chain(receipts[:-1], checkpoint=(8, receipts[-1].hash))
    assert not late.valid and "truncated" in late.reason
    cut = verify_chain(receipts[:-2], checkpoint=(2, original[1].hash))
    assert not cut.valid and "no compaction receipt" in cut.reason  # the compact one cut too


@pytest.mark.parametrize(
    "payload", ['{"a":"é\\u2028\\"x\\\\"}', "plain", "\x00\ud800 tab\tnewline\n", ""]
)
@pytest.mark.parametrize(("seq", "at_ms"), [(1, 0), (10**20, -3), (7, 1_767_225_600_123)])
def test_the_body_written_directly_is_the_canonical_json(
    payload: str, seq: int, at_ms: int
) -> None:
    """Sealing writes the hashed record itself; its bytes are those of the JSON encoder."""
    receipt = seal(seq, "ab" * 32, 'fail"ure', 1.0, {"k": payload})
    record = {
        "at_ms": at_ms,
        "payload": payload,
        "prev": "ab" * 32,
        "seq": seq,
        "type": 'fail"ure',
    }
    expected = json.dumps(record, sort_keys=True, separators=(",", ":")).encode()
    assert attrs.evolve(receipt, seq=seq, at_ms=at_ms, payload=payload).body() == expected
    odd = attrs.evolve(receipt, seq=True, at_ms=at_ms, payload=payload)  # not an int: encoder
    assert (
        odd.body()
        == json.dumps({**record, "seq": True}, sort_keys=True, separators=(",", ":")).encode()
    )


class _Saved:
    """Checkpoints kept in a list; ``fail`` makes saving fail with that reason."""

    def __init__(self, saved: tuple[int, str] | None = None, fail: str = "") -> None:
        self.saved = saved
        self.fail = fail
        self.writes: list[tuple[int, str]] = []

    def load(self) -> tuple[int, str] | None:
        return self.saved

    def save(self, seq: int, head: str) -> str:
        if self.fail:
            return self.fail
        self.writes.append((seq, head))
        self.saved = (seq, head)
        return ""


@attrs.frozen
class _Chained:
    """A store's chain primitives over a chain read as ``found`` and ``checkpoints``."""

    found: Chain
    checkpoints: _Saved | None = None
    receipts: bool = True

    @contextlib.contextmanager
    def read_chain(self) -> Iterator[Chain]:
        yield self.found


def test_verify_store_saves_the_head_of_a_valid_chain() -> None:
    receipts = chain(3)
    saved = _Saved()
    report = verify_store(_Chained(Chain(receipts, (3, receipts[-1].hash)), saved))
    assert report.valid and report.count == 3
    assert saved.writes == [(3, receipts[-1].hash)]
    assert verify_store(_Chained(Chain(receipts[:2]), saved)).first_broken == 3  # truncated


def test_verify_store_compares_the_chain_with_the_stores_head() -> None:
    receipts = chain(3)
    short = verify_store(_Chained(Chain(receipts, (5, "x" * 64))))
    assert not short.valid and short.first_broken == 4 and "head is 5" in short.reason
    other = verify_store(_Chained(Chain(receipts, (3, "x" * 64))))
    assert not other.valid and other.first_broken == 3 and "differs" in other.reason


def test_verify_store_reports_damage_unreadable_receipts_and_unsaved_checkpoints() -> None:
    receipts = chain(2)
    damaged = verify_store(_Chained(Chain(receipts, damage="a journal is torn")))
    assert not damaged.valid and damaged.reason == "a journal is torn"
    unreadable = verify_store(_Chained(Chain(receipts[:1], unreadable=2)))
    assert (unreadable.valid, unreadable.count, unreadable.first_broken) == (False, 1, 2)
    unsaved = verify_store(_Chained(Chain(receipts), _Saved(fail="the disk is full")))
    assert unsaved.valid and unsaved.reason == "the disk is full"


def test_reseal_is_sealing_again_at_another_place() -> None:
    """A receipt sealed after a stale head, sealed again after the real one, is that seal."""
    first = seal(3, "a" * 64, "failure", 12.5, {"x": 0.1}, "k")
    again = reseal(first, 7, "b" * 64, "k")
    assert again == seal(7, "b" * 64, "failure", 12.5, {"x": 0.1}, "k")
    assert again.hash == again.expected_hash("k") != first.hash


def _reference_payload_text(payload: object) -> str:
    """The canonical payload text as the chain defines it: floats as their ``repr``."""

    def plain(value: object) -> object:
        if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
            return value
        if isinstance(value, float):
            return repr(value)
        if isinstance(value, Mapping):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        raise AssertionError(value)

    return json.dumps(plain(payload), sort_keys=True, separators=(",", ":"))


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
_FLAT = st.dictionaries(st.text(max_size=6), _SCALARS, max_size=6)
_PAYLOADS = st.dictionaries(
    st.text(max_size=6),
    _SCALARS
    | _FLAT
    | _FLAT.map(FrozenDict)
    | st.lists(st.text(max_size=6), max_size=4)
    | st.lists(_SCALARS, max_size=4).map(tuple)
    | st.dictionaries(st.text(max_size=4), _FLAT | st.lists(_SCALARS, max_size=3), max_size=3),
    max_size=5,
)


@settings(max_examples=400, deadline=None)
@given(payload=_PAYLOADS)
def test_a_payload_is_sealed_as_its_canonical_text(payload: dict[str, object]) -> None:
    """The payload text written directly (flat rows, key lists) is the encoder's, every case."""
    assert seal(1, GENESIS, "failure", 1.5, payload).payload == _reference_payload_text(payload)


def test_a_failure_receipt_payload_is_its_row_as_canonical_text() -> None:
    """The failure receipt's shape: its row (floats as text) and the keys it taught."""
    failure = Failure(
        tool="bash",
        fingerprint="f" * 24,
        signature="command_failed",
        blame="agent",
        at=1_796_157_913.998597,
        targets=("é.py", 'a"b'),
        args={"command": "make \u2028 x", "n": 3, "ok": True},
        error="exit 2",
        duration_ms=12.5,
        id=7,
    )
    payload = {"failure": failure.to_row(), "learned": ["x:1", "é"], "evicted": []}
    text = seal(3, GENESIS, "failure", failure.at, payload).payload
    assert text == _reference_payload_text(payload)
    assert json.loads(text)["failure"]["at"] == "1796157913.998597"
    assert json.loads(json.loads(text)["failure"]["args"]) == {
        "command": "make \u2028 x", "n": 3, "ok": True,
    }  # fmt: skip
