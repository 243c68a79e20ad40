"""The one export format shared by every store: JSON lines of typed records.

``export()`` of any store followed by ``import_()`` into any other gives the same history,
so a tenant can move from JSON to SQLite to PostgreSQL without loss.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from scarguard.canonical import storable_text
from scarguard.errors import StoreError
from scarguard.model import Constraint, Failure
from scarguard.stores.protocol import CounterValue, Transaction

__all__ = ["FORMAT_VERSION", "export_records", "import_records"]

FORMAT_VERSION = 1


def export_records(
    failures: Iterable[Failure],
    counters: Mapping[str, CounterValue],
    constraints: Iterable[Constraint],
) -> Iterator[dict[str, Any]]:
    """Yield a header, then failures (oldest first), counters and constraints as records."""
    yield {"record": "header", "format": FORMAT_VERSION}
    for failure in sorted(failures, key=lambda f: (f.at, f.id or 0)):
        row = failure.to_row()
        row.pop("id", None)
        yield {"record": "failure", **row}
    for key in sorted(counters):
        value = counters[key]
        yield {"record": "counter", "key": key, "count": value.count, "last_at": value.last_at}
    for constraint in sorted(constraints, key=lambda c: (c.created_at, c.key)):
        yield {"record": "constraint", **constraint.to_row()}


def _finite(value: Any) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{value!r} is not a finite number")
    return number


def _whole(value: Any) -> int:
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ValueError(f"{value!r} is not a whole number")
    return int(value)


def import_records(tx: Transaction, records: Iterable[Mapping[str, Any]]) -> int:
    """Apply exported records inside ``tx``; return how many were applied.

    Counters are added to existing ones; a constraint replaces a stored one with the same
    key only when it has more occurrences.

    Raises:
        StoreError: A record is malformed or of a newer format; nothing of the batch is kept
            when the caller's transaction rolls back.
    """
    applied = 0
    for number, record in enumerate(records, start=1):
        kind = record.get("record")
        body = {k: v for k, v in record.items() if k != "record"}
        try:
            if kind == "header":
                if int(body.get("format", 0)) > FORMAT_VERSION:
                    raise StoreError(
                        f"record {number}: export format {body.get('format')} is newer than"
                        f" this scarguard reads ({FORMAT_VERSION})"
                    )
                continue
            if kind == "failure":
                tx.add_failure(Failure.from_row(body))
            elif kind == "counter":
                key = storable_text(str(body["key"]))
                tx.bump(key, _finite(body["last_at"]), _whole(body["count"]))
            elif kind == "constraint":
                incoming = Constraint.from_row(body)
                existing = tx.constraint(incoming.key)
                if existing is None or existing.occurrences < incoming.occurrences:
                    tx.put_constraint(incoming)
            else:
                raise StoreError(f"record {number}: unknown record type {kind!r}")
        except StoreError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"record {number}: malformed {kind} record ({exc})") from exc
        applied += 1
    return applied
