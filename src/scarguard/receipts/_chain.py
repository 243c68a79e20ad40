"""The chain itself: a receipt, its canonical bytes and hash, sealing, appending, checking."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

import attrs

from scarguard._json import compact, quote

GENESIS = "0" * 64
"""The ``prev`` of the first receipt."""
KEY_ENV = "SCARGUARD_RECEIPT_KEY"
COMPACT = "compact"
_type_of = type  # (``seal`` names its receipt's type ``type``)
"""The type of the receipt appended when older receipts are deleted by retention."""


_ENCODE = compact(sort_keys=True)
"""The canonical JSON text: ``json.dumps(value, sort_keys=True, separators=(",", ":"))``."""
_PLAIN = (str, int, bool, type(None))
_quote = quote
"""The JSON string encoder ``_ENCODE`` uses (``ensure_ascii``), to build a body directly."""


def _payload_text(payload: Any) -> str:
    """Return the canonical text of a payload: ``_ENCODE(_no_floats(payload))``."""
    return _ENCODE(_no_floats(payload))


def _body(seq: int, prev: str, kind: str, at_ms: int, payload: str) -> bytes:
    """Return the canonical record a receipt's hash covers.

    The same bytes as ``_ENCODE`` of the record (keys sorted, no spaces), written
    directly: sealing runs on every recorded failure. Other field types (a hand-edited row)
    go through the encoder.
    """
    if type(seq) is int and type(at_ms) is int and _strings(prev, kind, payload):
        return (
            f'{{"at_ms":{at_ms},"payload":{_quote(payload)},"prev":{_quote(prev)},'
            f'"seq":{seq},"type":{_quote(kind)}}}'
        ).encode()
    record = {"at_ms": at_ms, "payload": payload, "prev": prev, "seq": seq, "type": kind}
    return _ENCODE(record).encode()


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
        out = {}
        for k, v in value.items():  # the leaves inline: a failure row is a flat dictionary
            leaf = type(v)
            if leaf in _PLAIN:
                out[str(k)] = v
            elif leaf is float:
                out[str(k)] = repr(v)
            else:
                out[str(k)] = _no_floats(v)
        return out
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


class CanonicalPayload(dict[str, Any]):
    """A payload that writes its own canonical text, for a caller that knows its shape.

    It is the payload (a dictionary, for any store that reads it as one), and
    :attr:`canonical` is the text :func:`seal` would write of it (keys sorted, no spaces,
    floats as their ``repr`` strings), which sealing takes as it is. A failure's payload is
    written this way on every failure, more cheaply than the general walk;
    ``tests/test_recording.py`` holds it to the same text. The text is written only when
    read: a store without receipts never asks.

    Args:
        payload: The payload.
        write: Writes the payload's canonical text.
    """

    __slots__ = ("_write",)

    def __init__(self, payload: Mapping[str, Any], write: Callable[[], str]) -> None:
        super().__init__(payload)
        self._write = write

    @property
    def canonical(self) -> str:
        """The payload's canonical text."""
        return self._write()


def seal(
    seq: int,
    prev: str,
    type: str,
    at: float,
    payload: Mapping[str, Any],
    key: bytes | str | None = None,
) -> Receipt:
    """Return the receipt that follows ``prev`` for ``payload``."""
    text = payload.canonical if _type_of(payload) is CanonicalPayload else _payload_text(payload)
    at_ms = round(at * 1000)
    digest = _hash(_body(seq, prev, type, at_ms, text), key)
    return Receipt(seq=seq, prev=prev, type=type, at_ms=at_ms, payload=text, hash=digest)


def reseal(receipt: Receipt, seq: int, prev: str, key: bytes | str | None = None) -> Receipt:
    """Return ``receipt`` sealed again at ``seq`` after ``prev`` (its type, time and payload)."""
    digest = _hash(_body(seq, prev, receipt.type, receipt.at_ms, receipt.payload), key)
    return attrs.evolve(receipt, seq=seq, prev=prev, hash=digest)


class ChainWriter(Protocol):
    """The primitives a store transaction gives the chain; :class:`Appending` builds on them.

    Every store's transaction satisfies it (checked by mypy where each is defined): whether
    the store keeps the chain and with which key, the chain's head as the transaction sees
    it under the write lock, and the append of a sealed receipt in the transaction.

    Attributes:
        _chain_on: Whether the store keeps the receipt chain.
        _chain_key: The chain's HMAC key (``None``: plain SHA-256, or ``SCARGUARD_RECEIPT_KEY``).
    """

    _chain_on: bool
    _chain_key: bytes | str | None

    def _chain_head(self) -> tuple[int, str]:
        """Return ``(seq, hash)`` of the chain's head (``(0, GENESIS)`` when empty)."""
        ...

    def _append_receipt(self, receipt: Receipt) -> None:
        """Write ``receipt`` in this transaction; it becomes the head."""
        ...


class Appending:
    """How every store transaction appends a receipt: seal after the chain's head, append.

    A transaction class mixes this in and satisfies :class:`ChainWriter` (the primitives
    :meth:`receipt` is built on); mypy checks both where the class is used.
    """

    def receipt(self: ChainWriter, type: str, payload: Mapping[str, Any], at: float) -> None:
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
