"""Receipt chains: what they cover, and tampering detected in SQLite and JSON files."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from scarguard.model import Scope
from scarguard.receipts import (
    GENESIS,
    KEY_ENV,
    load_checkpoint,
    seal,
    verify_chain,
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


def tamper_payload(kind: str, store: Store) -> None:
    if kind == "sqlite":
        edit_sqlite(
            store, "UPDATE receipts SET payload = replace(payload, 'n3', 'n9') WHERE seq = 4"
        )
    else:
        edit_json(
            store,
            lambda ls: [ls[i].replace(b"n3", b"n9") if i == 3 else ls[i] for i in range(len(ls))],
        )


def delete_middle(kind: str, store: Store) -> None:
    if kind == "sqlite":
        edit_sqlite(store, "DELETE FROM receipts WHERE seq = 4")
    else:
        edit_json(store, lambda ls: ls[:3] + ls[4:])


def swap(kind: str, store: Store) -> None:
    if kind == "sqlite":
        with sqlite3.connect(store.location) as conn:
            rows = {r[0]: r[1:] for r in conn.execute("SELECT * FROM receipts WHERE seq IN (4, 5)")}
            conn.execute("DELETE FROM receipts WHERE seq IN (4, 5)")
            for seq, other in ((4, 5), (5, 4)):
                conn.execute("INSERT INTO receipts VALUES (?, ?, ?, ?, ?, ?)", (seq, *rows[other]))
    else:
        edit_json(store, lambda ls: [*ls[:3], ls[4], ls[3], *ls[5:]])


@pytest.mark.parametrize("kind", ["sqlite", "json"])
@pytest.mark.parametrize(("tamper", "broken"), [(tamper_payload, 4), (delete_middle, 4), (swap, 4)])
def test_tampering_is_reported_at_the_right_receipt(
    tmp_path: Path, kind: str, tamper: Callable[[str, Store], None], broken: int
) -> None:
    """Editing a payload byte, deleting or swapping receipts is reported at receipt 4."""
    store = filled(kind, tmp_path)
    assert store.verify().valid
    tamper(kind, store)
    report = reopen(kind, store).verify()
    assert not report.valid and report.first_broken == broken, report


@pytest.mark.parametrize("kind", ["sqlite", "json"])
def test_a_truncated_tail_is_caught_by_the_checkpoint(tmp_path: Path, kind: str) -> None:
    """Cutting the last receipts after a verified checkpoint is reported as truncation."""
    store = filled(kind, tmp_path)
    assert store.verify().count == 6  # writes the checkpoint
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
    report = reopen(kind, store).verify()
    assert not report.valid and report.first_broken == 5 and "checkpoint" in report.reason


@pytest.mark.parametrize("kind", ["sqlite", "json"])
def test_store_chains_use_the_key(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store chain written with SCARGUARD_RECEIPT_KEY fails with another or no key."""
    monkeypatch.setenv(KEY_ENV, "k1")
    store = filled(kind, tmp_path, n=2)
    assert store.verify().valid
    monkeypatch.setenv(KEY_ENV, "k2")
    assert not store.verify().valid
    monkeypatch.delenv(KEY_ENV)
    assert not store.verify().valid
    explicit = reopen(kind, store)
    explicit._key = "k1"  # type: ignore[attr-defined]
    assert explicit.verify().valid


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
