"""A tamper-evident hash chain over everything the memory records.

Each receipt hashes the canonical JSON of its whole record: sequence number, previous hash,
type, time (integer milliseconds) and payload (floats carried as strings, so the bytes
hashed never depend on float formatting). Editing any field, deleting or reordering a
receipt breaks a link; a cut-off tail or a rolled-back store is caught by comparing with a
checkpoint of the head kept beside the store. With a secret key (``SCARGUARD_RECEIPT_KEY``)
the hashes are HMACs and the checkpoint carries one too, so forging a chain, or cutting it
and rewriting the checkpoint to match, needs the key.

Retention compacts the chain: the receipts before some sequence number ``F`` are deleted and
a ``compact`` receipt is appended naming ``F`` and the hash the receipt ``F`` links to. The
chain then verifies from ``F``: a chain that does not start at 1 is valid only when its
latest ``compact`` receipt names exactly where it starts, so deleting old receipts by any
other means is still detected (and, with a key, cannot be covered up).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

import attrs

__all__ = [
    "COMPACT",
    "GENESIS",
    "KEY_ENV",
    "Appending",
    "Chain",
    "Checkpoints",
    "FileCheckpoint",
    "Receipt",
    "VerifyReport",
    "check_checkpoint",
    "checkpoint_mac",
    "damaged_checkpoint",
    "load_checkpoint",
    "reseal",
    "save_checkpoint",
    "seal",
    "verify_chain",
    "verify_store",
    "write_checkpoint",
]

GENESIS = "0" * 64
"""The ``prev`` of the first receipt."""
KEY_ENV = "SCARGUARD_RECEIPT_KEY"
COMPACT = "compact"
"""The type of the receipt appended when older receipts are deleted by retention."""


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
_PLAIN = (str, int, bool, type(None))
_quote: Any = getattr(json.encoder, "c_encode_basestring_ascii", None) or (
    json.encoder.py_encode_basestring_ascii
)
"""The JSON string encoder ``_ENCODER`` uses (``ensure_ascii``), to build a body directly."""


def _body(seq: int, prev: str, kind: str, at_ms: int, payload: str) -> bytes:
    """Return the canonical record a receipt's hash covers.

    The same bytes as ``_ENCODER.encode`` of the record (keys sorted, no spaces), written
    directly: sealing runs on every recorded failure. Other field types (a hand-edited row)
    go through the encoder.
    """
    if type(seq) is int and type(at_ms) is int and _strings(prev, kind, payload):
        return (
            f'{{"at_ms":{at_ms},"payload":{_quote(payload)},"prev":{_quote(prev)},'
            f'"seq":{seq},"type":{_quote(kind)}}}'
        ).encode()
    record = {"at_ms": at_ms, "payload": payload, "prev": prev, "seq": seq, "type": kind}
    return _ENCODER.encode(record).encode()


def _strings(*values: object) -> bool:
    return all(type(v) is str for v in values)


def _hash(body: bytes, key: bytes | str | None) -> str:
    secret = _key(key)
    if secret:
        return hmac.new(secret, body, hashlib.sha256).hexdigest()
    return hashlib.sha256(body).hexdigest()


def _no_floats(value: Any) -> Any:
    """Return ``value`` with every float as its ``repr`` string (exact types tested first: hot)."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is float:
        return repr(value)
    if kind is dict:
        return {str(k): _no_floats(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_no_floats(v) for v in value]
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Mapping):
        return {str(k): _no_floats(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_no_floats(v) for v in value]
    return value


def _key(key: bytes | str | None) -> bytes | None:
    if key is None:
        env = os.environ.get(KEY_ENV)
        return env.encode() if env else None
    return key.encode() if isinstance(key, str) else key


@attrs.frozen
class VerifyReport:
    """The result of checking a receipt chain.

    What is checked is :data:`~scarguard.stores.protocol.VERIFY_COVERS`; what is not,
    :data:`~scarguard.stores.protocol.VERIFY_NOT_COVERED`.

    Attributes:
        valid: Whether the whole chain checks out.
        count: How many receipts were checked.
        first_broken: Sequence number of the first broken receipt (``None`` when valid).
        reason: What is wrong, in one sentence; when valid, empty, or why the checkpoint of
            the head could not be saved (the chain itself checked out).
        head: Hash of the last receipt checked.
        start: Sequence number of the first receipt kept (above 1 once retention compacted
            the chain; the receipts before it were deleted, as a ``compact`` receipt attests).
    """

    valid: bool
    count: int
    first_broken: int | None = None
    reason: str = ""
    head: str | None = None
    start: int = 1

    @property
    def last_seq(self) -> int:
        """Sequence number of the last receipt checked (``start - 1`` when none was)."""
        return self.start + self.count - 1


@attrs.frozen
class Receipt:
    """One link of the chain.

    Attributes:
        seq: Position in the chain, from 1.
        prev: Hash of the previous receipt (``GENESIS`` for the first).
        type: What was recorded (``failure``, ``constraint``, ``lift``, ``successes``...).
        at_ms: When, in integer milliseconds since the epoch.
        payload: Canonical JSON text of what was recorded.
        hash: Hash (or HMAC) of the canonical record.
    """

    seq: int
    prev: str
    type: str
    at_ms: int
    payload: str
    hash: str

    def body(self) -> bytes:
        """Return the exact bytes the hash covers."""
        return _body(self.seq, self.prev, self.type, self.at_ms, self.payload)

    def expected_hash(self, key: bytes | str | None = None) -> str:
        """Return the hash this receipt must carry."""
        return _hash(self.body(), key)

    def to_row(self) -> dict[str, Any]:
        """Return the receipt as a flat row."""
        return attrs.asdict(self)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Receipt:
        """Build a receipt from a row written by :meth:`to_row`."""
        return cls(**{f.name: row[f.name] for f in attrs.fields(cls)})


def seal(
    seq: int,
    prev: str,
    type: str,
    at: float,
    payload: Mapping[str, Any],
    key: bytes | str | None = None,
) -> Receipt:
    """Return the receipt that follows ``prev`` for ``payload``."""
    text = _ENCODER.encode(_no_floats(payload))
    at_ms = round(at * 1000)
    digest = _hash(_body(seq, prev, type, at_ms, text), key)
    return Receipt(seq=seq, prev=prev, type=type, at_ms=at_ms, payload=text, hash=digest)


def reseal(
    receipt: Receipt, seq: int, prev: str, key: bytes | str | None = None
) -> Receipt:
    """Return ``receipt`` sealed again at ``seq`` after ``prev`` (its type, time and payload)."""
    digest = _hash(_body(seq, prev, receipt.type, receipt.at_ms, receipt.payload), key)
    return attrs.evolve(receipt, seq=seq, prev=prev, hash=digest)


class Appending:
    """How every store transaction appends a receipt: seal after the chain's head, append.

    A transaction class mixes this in and gives the primitives: :attr:`_chain_on` and
    :attr:`_chain_key` (whether the store keeps the chain, and its HMAC key),
    :meth:`_chain_head` (the head as this transaction sees it, under the write lock) and
    :meth:`_append_receipt` (write the sealed receipt in the transaction, and take it as the
    head).
    """

    _chain_on: bool
    _chain_key: bytes | str | None

    def _chain_head(self) -> tuple[int, str]:
        """Return ``(seq, hash)`` of the chain's head (``(0, GENESIS)`` when empty)."""
        raise NotImplementedError

    def _append_receipt(self, receipt: Receipt) -> None:
        """Write ``receipt`` in this transaction; it becomes the head."""
        raise NotImplementedError

    def receipt(self, type: str, payload: Mapping[str, Any], at: float) -> None:
        """Append a receipt to the chain in this transaction (no-op when receipts are off)."""
        if not self._chain_on:
            return
        seq, prev = self._chain_head()
        self._append_receipt(seal(seq + 1, prev, type, at, payload, self._chain_key))


def verify_chain(
    receipts: Iterable[Receipt],
    *,
    key: bytes | str | None = None,
    checkpoint: tuple[int, str] | None = None,
) -> VerifyReport:
    """Check a chain given in stored order.

    Args:
        receipts: The receipts, ordered by sequence number as stored.
        key: The HMAC key (``None``: from ``SCARGUARD_RECEIPT_KEY``, else plain SHA-256).
        checkpoint: A ``(seq, hash)`` the chain must still contain, to catch truncation.

    Returns:
        A report naming the first broken sequence number and why.
    """
    prev = GENESIS
    count = 0
    expected_seq = 1
    start = 1
    first_prev = GENESIS
    seen: dict[int, str] = {}
    compacted: Any = None  # the payload of the latest compact receipt
    for receipt in receipts:
        if count == 0 and receipt.seq > 1:  # compacted: starts past 1, linked to what went
            start = expected_seq = receipt.seq
            prev = first_prev = receipt.prev
        if receipt.seq != expected_seq:
            reason = (
                f"receipt {expected_seq} is missing (found {receipt.seq} next)"
                if receipt.seq > expected_seq
                else f"receipt {receipt.seq} is out of order"
            )
            return VerifyReport(False, count, expected_seq, reason, prev)
        if receipt.prev != prev:
            reason = f"receipt {receipt.seq} does not link to its predecessor"
            return VerifyReport(False, count, receipt.seq, reason, prev)
        if not hmac.compare_digest(receipt.hash, receipt.expected_hash(key)):
            reason = f"receipt {receipt.seq} was altered (hash mismatch)"
            return VerifyReport(False, count, receipt.seq, reason, prev)
        if receipt.type == COMPACT:
            with contextlib.suppress(ValueError):
                compacted = json.loads(receipt.payload)
        seen[receipt.seq] = receipt.hash
        prev = receipt.hash
        count += 1
        expected_seq += 1
    last = start + count - 1
    if start > 1 and not (
        isinstance(compacted, dict)
        and compacted.get("first_seq") == start
        and compacted.get("first_prev") == first_prev
    ):
        reason = (
            f"receipts 1 to {start - 1} are missing and no compaction receipt accounts for them"
        )
        return VerifyReport(False, count, 1, reason, prev, start)
    if checkpoint is not None:
        seq, head = checkpoint
        if seq > last:
            return VerifyReport(
                False,
                count,
                last + 1,
                f"chain ends at {last} but a checkpoint saw {seq}: truncated or rolled back",
                prev,
                start,
            )
        if seq >= start and seen.get(seq) != head:
            return VerifyReport(
                False, count, seq, f"receipt {seq} differs from the checkpoint", prev, start
            )
    return VerifyReport(True, count, None, "", prev if count else None, start)


def checkpoint_mac(seq: int, head: str, key: bytes | str | None = None) -> str | None:
    """Return the HMAC of a ``(seq, hash)`` checkpoint, or ``None`` without a key.

    With a key, a checkpoint without this MAC (or with a wrong one) is refused, so cutting
    the end off the chain and rewriting the checkpoint to match needs the key too.
    """
    secret = _key(key)
    if secret is None:
        return None
    return hmac.new(secret, f"checkpoint:{seq}:{head}".encode(), hashlib.sha256).hexdigest()


def check_checkpoint(
    seq: int, head: str, mac: object, key: bytes | str | None, where: str
) -> tuple[int, str]:
    """Return ``(seq, head)`` if its MAC is right (or no key is set).

    Raises:
        ValueError: A key is set and the MAC is missing or wrong.
    """
    expected = checkpoint_mac(seq, head, key)
    if expected is not None and not (isinstance(mac, str) and hmac.compare_digest(mac, expected)):
        raise ValueError(
            f"the checkpoint {where} has no valid MAC for the receipt key (written without"
            " the key, or forged)"
        )
    return seq, head


def load_checkpoint(path: str, key: bytes | str | None = None) -> tuple[int, str] | None:
    """Return the ``(seq, hash)`` checkpoint stored at ``path``, or ``None`` if there is none.

    Raises:
        ValueError: The file exists but cannot be read as a checkpoint, or (with a key) its
            MAC is missing or wrong. A damaged checkpoint must not pass for a missing one: a
            truncated chain would then verify.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        seq, head = int(data["seq"]), str(data["hash"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"the checkpoint {path} is damaged ({type(exc).__name__})") from exc
    return check_checkpoint(seq, head, data.get("mac"), key, path)


def save_checkpoint(path: str, seq: int, head: str, key: bytes | str | None = None) -> str:
    """Write the checkpoint as :func:`write_checkpoint` does; return what went wrong, if anything.

    A checkpoint that cannot be written (a full disk, a read-only folder) never makes a
    valid chain fail: the chain was checked; only the next truncation check is weaker. The
    returned text (empty when saved) says so, for the report.
    """
    try:
        write_checkpoint(path, seq, head, key)
    except OSError as exc:
        return f"the checkpoint {path} could not be saved ({exc.strerror or exc})"
    return ""


def damaged_checkpoint(problem: ValueError) -> VerifyReport:
    """Return the report for a chain whose checkpoint cannot be read."""
    return VerifyReport(
        False,
        0,
        None,
        f"{problem}: truncation cannot be ruled out; restore the file, or delete it to accept"
        " the current head",
    )


def write_checkpoint(path: str, seq: int, head: str, key: bytes | str | None = None) -> None:
    """Atomically write a ``(seq, hash)`` checkpoint to ``path`` (with its MAC, given a key).

    The temporary file is unique per process and thread, so concurrent writers never
    share one; it is removed if anything fails before the rename.
    """
    tmp = f"{path}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    record: dict[str, Any] = {"seq": seq, "hash": head}
    mac = checkpoint_mac(seq, head, key)
    if mac is not None:
        record["mac"] = mac
    try:
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as handle:
            json.dump(record, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# -- verifying a store's chain ------------------------------------------------------------


@attrs.frozen
class Chain:
    """What a store reads of its chain for :func:`verify_store`, in one snapshot.

    Attributes:
        receipts: The receipts in stored order (may be read lazily while the snapshot lasts).
        head: The head the store keeps beside the chain, as ``(seq, hash)``; ``None`` when
            it keeps none.
        unreadable: The position of the first receipt that could not be read (the
            ``receipts`` stop before it); ``None`` when every one was read.
        damage: Damage the store found beside the chain (it makes the chain invalid).
    """

    receipts: Iterable[Receipt]
    head: tuple[int, str] | None = None
    unreadable: int | None = None
    damage: str = ""


class Checkpoints(Protocol):
    """Where a store keeps the checkpoint of its verified head."""

    def load(self) -> tuple[int, str] | None:
        """Return the ``(seq, hash)`` saved, or ``None``; ``ValueError`` when damaged."""

    def save(self, seq: int, head: str) -> str:
        """Save ``(seq, head)``; return why it could not be saved (empty when it was)."""


@attrs.frozen
class FileCheckpoint:
    """The checkpoint in a file beside the store (``<path>.head``), with its MAC given a key."""

    path: str
    key: bytes | str | None = None

    def load(self) -> tuple[int, str] | None:
        """Return the saved ``(seq, hash)`` (see :func:`load_checkpoint`)."""
        return load_checkpoint(self.path, self.key)

    def save(self, seq: int, head: str) -> str:
        """Write it atomically (see :func:`save_checkpoint`)."""
        return save_checkpoint(self.path, seq, head, self.key)


def verify_store(
    read: Callable[[], AbstractContextManager[Chain]],
    checkpoints: Checkpoints | None,
    key: bytes | str | None = None,
) -> VerifyReport:
    """Verify a store's chain against its checkpoint and head; advance the checkpoint.

    The checkpoint is loaded before the chain is read (a checkpoint saved meanwhile by
    another process can then only be older than the chain read). A valid chain is also
    checked against the head the store keeps beside it, and its head saved as the new
    checkpoint unless a later one is saved already; a checkpoint that cannot be saved leaves
    the chain valid and says why in ``reason``.

    Args:
        read: Opens one snapshot of the store's chain.
        checkpoints: Where the checkpoint is kept (``None``: the store keeps none).
        key: The HMAC key (``None``: from ``SCARGUARD_RECEIPT_KEY``, else plain SHA-256).
    """
    try:
        saved = checkpoints.load() if checkpoints is not None else None
    except ValueError as problem:
        return damaged_checkpoint(problem)
    with read() as chain:
        if chain.unreadable is not None:
            n = chain.unreadable
            return VerifyReport(False, n - 1, n, f"receipt {n} is unreadable")
        report = verify_chain(chain.receipts, key=key, checkpoint=saved)
    if not report.valid:
        return report
    if chain.damage:
        return VerifyReport(False, report.count, None, chain.damage, report.head, report.start)
    last = report.last_seq
    if chain.head is not None:
        seq, head = chain.head
        if seq != last:
            reason = f"chain ends at {last} but the store's head is {seq}"
            return VerifyReport(
                False, report.count, min(last, seq) + 1, reason, report.head, report.start
            )
        if report.count and head != report.head:
            reason = f"receipt {last} differs from the store's head"
            return VerifyReport(False, report.count, last, reason, report.head, report.start)
    if checkpoints is not None and report.head is not None and (saved is None or saved[0] <= last):
        unsaved = checkpoints.save(last, report.head)
        if unsaved:
            report = attrs.evolve(report, reason=unsaved)
    return report
