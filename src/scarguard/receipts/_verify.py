"""Verifying a store's chain: against the head it keeps and its checkpoint, in one snapshot."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager

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
    """

    receipts: Iterable[Receipt]
    head: tuple[int, str] | None = None
    unreadable: int | None = None
    damage: str = ""


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
