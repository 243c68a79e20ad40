"""Verifying a store's chain: against the head it keeps and its checkpoint, in one snapshot.

A store gives the chain the primitives of :class:`ChainReader` (whether it keeps the chain,
a read of it in one snapshot, where its checkpoint is kept); :func:`verify_store` is the one
verification every store shares over them.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import Protocol

import attrs

from scarguard.receipts._chain import Receipt, VerifyReport, verify_chain
from scarguard.receipts._checkpoints import Checkpoints, damaged_checkpoint


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
        key: The HMAC key the store seals the chain with (``None``: from
            ``SCARGUARD_RECEIPT_KEY``, else plain SHA-256).
    """

    receipts: Iterable[Receipt]
    head: tuple[int, str] | None = None
    unreadable: int | None = None
    damage: str = ""
    key: bytes | str | None = None


class ChainReader(Protocol):
    """The primitives a store gives :func:`verify_store`.

    Every store satisfies it (the :class:`~scarguard.stores.protocol.Store` protocol
    includes it): whether it keeps the chain, where it keeps the checkpoint of the verified
    head, and a read of the chain in one snapshot.
    """

    @property
    def receipts(self) -> bool:
        """Whether the store keeps the receipt chain."""
        ...

    @property
    def checkpoints(self) -> Checkpoints | None:
        """Where the checkpoint of the verified head is kept (``None``: nowhere)."""
        ...

    def read_chain(self) -> AbstractContextManager[Chain]:
        """Open one snapshot of the chain (the whole store's, all tenants)."""
        ...


def verify_store(store: ChainReader) -> VerifyReport:
    """Verify a store's chain against its checkpoint and head; advance the checkpoint.

    A store keeping no receipts verifies empty. The checkpoint is loaded before the chain is
    read (a checkpoint saved meanwhile by another process can then only be older than the
    chain read). A valid chain is also checked against the head the store keeps beside it,
    and its head saved as the new checkpoint unless a later one is saved already; a
    checkpoint that cannot be saved leaves the chain valid and says why in ``reason``.

    Args:
        store: The store, through its chain primitives.
    """
    if not store.receipts:
        return VerifyReport(True, 0)
    checkpoints = store.checkpoints
    try:
        saved = checkpoints.load() if checkpoints is not None else None
    except ValueError as problem:
        return damaged_checkpoint(problem)
    with store.read_chain() as chain:
        if chain.unreadable is not None:
            n = chain.unreadable
            return VerifyReport(False, n - 1, n, f"receipt {n} is unreadable")
        report = verify_chain(chain.receipts, key=chain.key, checkpoint=saved)
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
