"""Retention for the JSON store: its append-only journals rewritten without what is purged.

Both functions are pure: they take a journal's committed bytes and return the bytes to
write in its place. The store renames the new journal into place, then its state (with the
new length, and for failures a new epoch, so every process rereads the journal).
"""

from __future__ import annotations

from typing import Any

from scarguard.receipts import COMPACT, Receipt, seal
from scarguard.stores.json import _state as js

__all__ = ["compact_receipts", "purge_failures"]


def purge_failures(
    data: bytes, tenant: js.Tenant, before: float, next_id: int
) -> tuple[bytes, int]:
    """Return the failures journal without the tenant's failures before ``before``.

    Every other line is kept byte for byte (other tenants, clears, unreadable lines). The
    new journal starts with a ``wiped`` line holding ``next_id``, so that a state rebuilt
    from it never hands out an id again.

    Returns:
        The new journal and how many failures it dropped.
    """
    kept = [js.wiped_line(next_id)]
    dropped = start = 0
    for end, record in js.read_lines(data):
        line, start = data[start:end], end
        if record is not None and "wiped" in record:
            continue  # superseded by the first line
        if (
            record is not None
            and "at" in record
            and (str(record.get("workspace")), str(record.get("project"))) == tenant
            and float(record["at"]) < before
        ):
            dropped += 1
            continue
        kept.append(line)
    return b"".join(kept), dropped


def compact_receipts(
    data: bytes, before: float, at: float, key: bytes | str | None
) -> tuple[bytes, Receipt, int] | None:
    """Return the receipts journal without the receipts before ``before``, and its new head.

    The newest receipt always stays; a ``compact`` receipt naming the first kept one is
    appended. ``None`` when nothing is old enough, or a line cannot be read (verification
    reports that; compaction must not hide it).

    Returns:
        The new journal, the ``compact`` receipt that is its head, and how many were dropped.
    """
    lines: list[tuple[bytes, Receipt]] = []
    start = 0
    for end, record in js.read_lines(data):
        line, start = data[start:end], end
        try:
            lines.append((line, Receipt.from_row(record or {})))
        except (KeyError, TypeError):
            return None
    limit = round(before * 1000)
    cut = next((i for i, (_, r) in enumerate(lines) if r.at_ms >= limit), len(lines))
    cut = min(cut, len(lines) - 1)
    if cut <= 0:
        return None
    first, head = lines[cut][1], lines[-1][1]
    payload: dict[str, Any] = {"first_seq": first.seq, "first_prev": first.prev, "deleted": cut}
    sealed = seal(head.seq + 1, head.hash, COMPACT, at, payload, key)
    body = b"".join(line for line, _ in lines[cut:]) + js.receipt_line(sealed)
    return body, sealed, cut
